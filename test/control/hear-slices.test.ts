import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';

/**
 * `POST /_emulator/hear` on long recordings: decoding, activity and recognition run in slices with turns
 * of the event loop between; the answers are those of one pass, and an Ogg/Opus recording is heard up to
 * 15 minutes like the other formats.
 */
const { emu } = emulatorForFile({ plane: 'speech' });
const RATE = 16000;
const TEXT = 'A late reply, well after the first slices of a long recording.';
const work = mkdtempSync(join(tmpdir(), 'hear-slices-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const hear = (bytes: Buffer, contentType: string) =>
  call(`${emu.speechUrl}/_emulator/hear`, { method: 'POST', body: bytes, headers: { 'content-type': contentType } });
const at = (ms: number) => Math.round((ms * RATE) / 1000) * 2;

/** Tone with noise (audio the emulator did not make) of `ms` at 16 kHz, PCM16 LE. */
function foreign(ms: number): Buffer {
  const b = Buffer.alloc(at(ms));
  let x = 9;
  for (let i = 0; i < b.length / 2; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    b.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * 330 * i) / RATE) + 2000 * (x / 2147483648 - 0.5)), i * 2);
  }
  return b;
}

describe('hear: long recordings, analysed in slices', () => {
  it('an Ogg/Opus recording of 16 minutes is heard for its first 15, like the other formats', async () => {
    // Encoded without blocking this process (a blocked client lets the listener close its idle connection under it).
    const src = join(work, 'long.ogg');
    await promisify(execFile)('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=300:sample_rate=48000:duration=960',
      '-c:a',
      'libopus',
      '-b:a',
      '6k',
      src,
    ]);
    const r = await hear(readFileSync(src), 'audio/ogg');
    expect(r.status).toBe(200);
    expect(r.body.duration_ms).toBe(15 * 60 * 1000);
  });

  it('a synthesis 5 minutes into PCM is one complete utterance at its place, with every word', async () => {
    const r0 = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: { model: 'speech-02-turbo', text: TEXT, voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'pcm', sample_rate: RATE } },
      headers: { authorization: 'Bearer hear-slices' },
    });
    expect(r0.body.base_resp.status_code).toBe(0);
    const speech = Buffer.from(r0.body.data.audio, 'hex');
    const body = Buffer.concat([Buffer.alloc(at(300_000)), speech, Buffer.alloc(at(60_000))]);
    const r = await hear(body, `audio/pcm;rate=${RATE}`);
    expect(r.status).toBe(200);
    expect(r.body.duration_ms).toBe(Math.round((body.length / 2 / RATE) * 1000));
    expect(r.body.utterances).toHaveLength(1);
    const u = r.body.utterances[0];
    expect(u).toMatchObject({ trace_id: r0.body.trace_id, full_text: TEXT, complete: true });
    expect(u.heard_text).toBe(TEXT.replace(/[,.]/g, ''));
    expect(Math.abs(u.start_ms - 300_000)).toBeLessThan(50);
    expect(r.body.anomalies).toEqual([]);
    expect(r.body.text).toBe(u.heard_text);
  });

  it("10 minutes of audio the emulator did not make get the recognition fixture's default picked by the hash of all of it", async () => {
    const body = foreign(600_000);
    const r = await hear(body, `audio/pcm;rate=${RATE}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ duration_ms: 600_000, utterances: [], anomalies: [] });
    const defaults = emu.emulator.fixtures.data['recognition.json'].defaults;
    const hash = createHash('sha256').update(body).digest('hex');
    expect(r.body.text).toBe(defaults[parseInt(hash.slice(0, 8), 16) % defaults.length]!.text);
  });
});
