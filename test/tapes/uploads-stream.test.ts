/**
 * A large upload on tape is never held whole: a recording emulator (in its own process, so its memory is its own)
 * passes the form on to the upstream as it arrives and keeps the file for the tape by streaming it to disk; its
 * memory grows far less than the upload's size. On replay the form is matched by a streamed parse: the same content
 * finds its tape, a file differing in its last byte does not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecorder, startReplayer, startUpstream, tapeDir } from './helpers.js';

/** The largest upload (a 200 MB video): far more than the recording emulator may grow by. */
const SIZE = 200 * 1000 * 1000;
const BOUNDARY = 'tapes-stream-boundary';
const KEY = 'upload-stream-key';

/** A multipart form with `scene=video` and a file of SIZE bytes (its last byte `last`), generated as it is sent. */
function form(last: number): ReadableStream<Uint8Array> {
  const head = Buffer.from(
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="scene"\r\n\r\nvideo\r\n` +
      `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="big.mp4"\r\ncontent-type: video/mp4\r\n\r\n`,
  );
  const chunk = Buffer.alloc(1 << 20);
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31) & 0xff;
  async function* body() {
    yield head;
    for (let sent = 0; sent < SIZE; sent += chunk.length) {
      const piece = Buffer.from(chunk.subarray(0, Math.min(chunk.length, SIZE - sent)));
      if (sent + piece.length >= SIZE) piece[piece.length - 1] = last;
      yield piece;
    }
    yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  }
  return Readable.toWeb(Readable.from(body())) as ReadableStream<Uint8Array>;
}

function upload(platformUrl: string, last: number): Promise<Response> {
  return fetch(`${platformUrl}/v1/files/upload`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body: form(last),
    duplex: 'half',
  } as RequestInit);
}

const memory = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
};

/** A recording emulator in its own process (the CLI): its platform URL once it printed it. */
function startRecorderProcess(dir: string, upstreamPlatform: string): Promise<{ url: string; child: ChildProcess }> {
  const args = ['--import', 'tsx', 'src/main.ts', '--speech-port', '0', '--speech-backup-port', '0', '--platform-port', '0', '--log-level', 'silent'];
  args.push('--record', dir, '--upstream-platform', upstreamPlatform);
  const child = spawn(process.execPath, args, { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const url = /voice platform\s+(http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve({ url, child });
    });
    child.once('exit', (code) => reject(new Error(`the recorder exited (${code}): ${out}`)));
  });
}

const dir = tapeDir();
let upstream: Awaited<ReturnType<typeof startUpstream>>;
let recorder: { url: string; child: ChildProcess };
let recorded: { status: number; body: any };
let growthMb = 0;

beforeAll(async () => {
  upstream = await startUpstream();
  recorder = await startRecorderProcess(dir, upstream.emu.platformUrl);
  await new Promise((r) => setTimeout(r, 300));
  const before = memory(recorder.child.pid!).rssMb;
  const res = await upload(recorder.url, 1);
  recorded = { status: res.status, body: await res.json() };
  growthMb = memory(recorder.child.pid!).peakMb - before;
  recorder.child.kill('SIGTERM');
  await upstream.close();
}, 120_000);

afterAll(() => {
  recorder?.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

describe('a large upload through a recording emulator', () => {
  it('is passed on and taped while the recorder grows far less than its size', () => {
    expect(recorded.status).toBe(200);
    expect(recorded.body).toMatchObject({ error_code: 0, succeed: true, data: { size: SIZE, file_name: 'big.mp4', scene: 'video' } });
    // Held whole, the form alone would be its size (and its parse as much again).
    expect(growthMb).toBeLessThan(SIZE / 2 / 1e6);
    const tape = readdirSync(dir).find((n) => n.startsWith('platform-post-v1-files-upload'))!;
    const parts = JSON.parse(readFileSync(join(dir, tape), 'utf8')).request.body.multipart;
    expect(parts[0]).toEqual({ name: 'scene', value: 'video' });
    expect(parts[1]).toMatchObject({
      name: 'file',
      filename: 'big.mp4',
      content_type: 'video/mp4',
      file: { $file: expect.stringMatching(/^[0-9a-f]{64}\.bin$/) },
    });
    // The file is the whole upload, and no temporary file is left.
    const stored = readdirSync(join(dir, 'files'));
    expect(stored).toContain(parts[1].file.$file);
    expect(readFileSync(join(dir, 'files', parts[1].file.$file)).length).toBe(SIZE);
    expect(readdirSync(dir).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  });

  it('replays by content: the same upload finds its tape, one whose last byte differs does not', async () => {
    const replayer = await startReplayer(dir, { replayStrict: true });
    try {
      const same = await upload(replayer.platformUrl, 1);
      const body = (await same.json()) as any;
      expect(same.status).toBe(200);
      expect(body).toMatchObject({ error_code: 0, data: { size: SIZE, file_name: 'big.mp4' } });
      const entry = (await replayer.control.journal.list({ path: '/v1/files/upload', limit: 1 }))[0]!;
      expect(entry.tape).toMatchObject({ mode: 'replayed' });
      const other = await upload(replayer.platformUrl, 2);
      expect(other.status).toBe(404);
      expect(JSON.stringify(await other.json())).toMatch(/no tape matches POST \/v1\/files\/upload.*file/);
      // No temporary copy of either form is left behind.
      expect(readdirSync(dir).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    } finally {
      await replayer.close();
    }
  }, 120_000);
});

describe('a form over its bound while recording', () => {
  it("gets the family's answer to a body over its limit, before anything is forwarded; no tape, no temporary file", async () => {
    const folder = tapeDir();
    const source = await startUpstream();
    const emu = await startRecorder(folder, source.emu);
    const { request } = await import('node:http');
    const url = new URL(`${emu.platformUrl}/v1/files/upload`);
    const send = (length: number) =>
      request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(length) },
      });
    try {
      const over = send(300 * 1000 * 1000);
      over.on('error', () => undefined);
      const answer = await new Promise<{ status: number; body: any }>((resolve) => {
        over.on('response', (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
        });
        over.write(`--${BOUNDARY}\r\n`);
      });
      over.destroy();
      // The platform family's answer to a body over its limit (its envelope, as without tapes).
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ error_code: 10001, succeed: false, error_message: 'request body exceeds the size limit' });

      expect(readdirSync(folder).filter((n) => n.endsWith('.json') || n.startsWith('.tmp-'))).toEqual([]);
    } finally {
      await emu.close();
      await source.close();
      rmSync(folder, { recursive: true, force: true });
    }
  }, 30_000);
});
