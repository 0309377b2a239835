import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { BlobPathError, BlobTooLargeError } from '../../src/core/state/blobs.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { rawGet as get } from '../helpers/raw.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech', resetEach: true });
const BYTES = Buffer.from('ID3-pretend-audio-bytes-0123456789');
const OTHER = Buffer.from('the other file, must never leak');

// Files put straight into the blob store: the control plane has no way to add one.
beforeAll(async () => {
  await emu.emulator.blobs.put('audio/acc1/one.mp3', BYTES);
  await emu.emulator.blobs.put('audio/acc1/two.mp3', OTHER);
});

/** A raw GET: the path goes on the wire exactly as written (fetch would normalise `..`). */
async function rawGet(base: string, path: string): Promise<{ status: number; type: string; body: Buffer }> {
  const r = await get(base, path);
  return { status: r.status, type: String(r.headers['content-type'] ?? ''), body: r.body };
}

function signed(rel: string, ttlMs = 60_000): string {
  return emu.emulator.blobs.signedPath(rel, emu.emulator.clock.now() + ttlMs);
}

/** 403 in the listener's service shape, serving none of the file's bytes. */
function expectRefused(r: { status: number; type: string; body: Buffer }, base: string) {
  expect(r.status).toBe(403);
  expect(r.type).toMatch(/json/);
  expect(r.body.includes(BYTES)).toBe(false);
  expect(r.body.includes(OTHER)).toBe(false);
  const body = JSON.parse(r.body.toString());
  if (base === emu.platformUrl) expect(body).toMatchObject({ succeed: false, error_code: expect.any(Number) });
  else expect(body.base_resp.status_code).toBeGreaterThan(0);
}

describe('signed download links', () => {
  it('serve the file with no credentials on every listener', async () => {
    const url = emu.emulator.downloadUrl('speech', 'audio/acc1/one.mp3', emu.emulator.clock.now() + 60_000);
    expect(url.startsWith(`${emu.speechUrl}/download/audio/acc1/one.mp3?expires=`)).toBe(true);
    const path = url.slice(emu.speechUrl.length);
    for (const base of [emu.speechUrl, emu.speechBackupUrl, emu.platformUrl]) {
      const res = await fetch(base + path);
      expect(res.status, base).toBe(200);
      expect(res.headers.get('content-type')).toBe('audio/mpeg');
      expect(Buffer.from(await res.arrayBuffer())).toEqual(BYTES);
    }
    expect(emu.emulator.downloadUrl('platform', 'audio/acc1/one.mp3', 1).startsWith(emu.platformUrl)).toBe(true);
  });

  it('a changed signature, path or expiry answers 403 and serves nothing', async () => {
    const path = signed('audio/acc1/one.mp3');
    const u = new URL(path, 'http://x');
    const sig = u.searchParams.get('sig')!;
    const expires = u.searchParams.get('expires')!;
    const flipped = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    const tampered = [
      `/download/audio/acc1/one.mp3?expires=${expires}&sig=${flipped}`,
      `/download/audio/acc1/two.mp3?expires=${expires}&sig=${sig}`,
      `/download/audio/acc1/one.mp3?expires=${Number(expires) + 1}&sig=${sig}`,
      `/download/audio/acc1/one.mp3?expires=${expires}`,
      `/download/audio/acc1/one.mp3?sig=${sig}`,
      `/download/audio/acc1/one.mp3?expires=${expires}&sig=${sig}x`,
    ];
    for (const base of [emu.speechUrl, emu.platformUrl]) {
      for (const p of tampered) expectRefused(await rawGet(base, p), base);
    }
    expect((await rawGet(emu.speechUrl, path)).status).toBe(200);
  });

  it('expires on the emulator clock', async () => {
    await ctl.freeze();
    const path = signed('audio/acc1/one.mp3', 10_000);
    expect((await rawGet(emu.platformUrl, path)).status).toBe(200);
    await ctl.advance(10_000);
    expect((await rawGet(emu.platformUrl, path)).status).toBe(200); // valid through its last millisecond
    await ctl.advance(1);
    const r = await rawGet(emu.platformUrl, path);
    expectRefused(r, emu.platformUrl);
    expect(r.body.toString()).toMatch(/expired/);
    expectRefused(await rawGet(emu.speechUrl, path), emu.speechUrl);
  });

  it('a valid link to a file that no longer exists answers 404 in the service shape', async () => {
    const r = await rawGet(emu.speechUrl, signed('audio/acc1/missing.mp3'));
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body.toString()).base_resp.status_code).toBeGreaterThan(0);
  });

  it('paths never leave the store, even with a valid signature over them', async () => {
    const e = emu.emulator;
    // Forge signatures with the store's own secret: only the path rules can refuse these.
    const sign = (rel: string, exp: number) => (e.blobs as unknown as { sign(r: string, x: number): string }).sign(rel, exp);
    const exp = e.clock.now() + 60_000;
    // A file beside the store (blobs live in <dataDir>/blobs): reachable only by escaping it.
    await writeFile(join(e.dataDir, 'outside.json'), '{"name":"outside"}');
    const attempts = [
      '../outside.json',
      'audio/../../outside.json',
      'audio/acc1/..%2F..%2F..%2Foutside.json',
      '..%2Foutside.json',
      'audio%2Facc1%2Fone.mp3',
      '%2e%2e/outside.json',
      'audio/acc1/%2e%2e/one.mp3',
      `/${e.dataDir.slice(1)}/outside.json`,
      'audio/acc1/..\\..\\..\\outside.json',
    ];
    for (const rel of attempts) {
      for (const base of [emu.speechUrl, emu.platformUrl]) {
        const r = await rawGet(base, `/download/${rel}?expires=${exp}&sig=${sign(rel, exp)}`);
        expect(r.status, `${rel} on ${base}`).toBe(403);
        expect(r.body.toString()).not.toContain('"name"');
        expect(r.type).toMatch(/json/);
      }
    }
    for (const rel of ['../x', 'a/../b', '/abs', 'a//b', '', 'a/%2e%2e', 'a\\b']) {
      expect(() => e.blobs.signedPath(rel, exp), rel).toThrow(BlobPathError);
      expect(() => e.blobs.file(rel), rel).toThrow(BlobPathError);
    }
  });

  it('putStream stops at the size limit and keeps nothing', async () => {
    const b = emu.emulator.blobs;
    const big = Readable.from([Buffer.alloc(600), Buffer.alloc(600)]);
    await expect(b.putStream('up/acc1/big.wav', big, 1000)).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await b.size('up/acc1/big.wav')).toBeNull();
    expect(await b.putStream('up/acc1/ok.wav', Readable.from([Buffer.alloc(500), Buffer.alloc(500)]), 1000)).toBe(1000);
    expect(await b.size('up/acc1/ok.wav')).toBe(1000);
  });
});
