/**
 * A client that leaves in the middle of a multipart form while the emulator records: the request ends (the journal's
 * entry is finished), the upstream's request is ended with it, no tape is written and no temporary file is left.
 */
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { startRecorder, startUpstream, tapeDir } from './helpers.js';

const BOUNDARY = 'cut-boundary';

/** Sends the head and `sent` bytes of a form announced as `announced` bytes, then closes the connection. */
async function cutUpload(url: string, announced: number, sent: number): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const head =
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nprompt_audio\r\n` +
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="a.mp3"\r\ncontent-type: audio/mpeg\r\n\r\n`;
  socket.write(
    `POST /v1/files/upload HTTP/1.1\r\nhost: ${hostname}:${port}\r\nx-api-key: cut-key\r\n` +
      `content-type: multipart/form-data; boundary=${BOUNDARY}\r\ncontent-length: ${announced}\r\n\r\n` +
      head,
  );
  socket.write(Buffer.alloc(sent, 7));
  await new Promise((r) => setTimeout(r, 200));
  socket.destroy();
}

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

describe('tapes: a client that leaves mid-form while recording', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let recorder: RunningEmulator;
  let dir: string;

  beforeAll(async () => {
    upstream = await startUpstream();
    dir = tapeDir();
    recorder = await startRecorder(dir, upstream.emu);
  });
  afterAll(async () => {
    await recorder?.close();
    await upstream?.close();
  });

  for (const sent of [10, 300_000, 3_000_000]) {
    it(`after ${sent} bytes of the file: the request ends, no tape and no temporary file are left`, async () => {
      await cutUpload(recorder.platformUrl, 10_000_000, sent);
      await until(async () => {
        const r = await fetch(`${recorder.platformUrl}/_emulator/journal?path=/v1/files/upload`);
        const { entries } = (await r.json()) as { entries: { status?: number; duration_ms?: number }[] };
        return entries.length > 0 && entries.every((e) => e.duration_ms !== undefined);
      }, 'the journal entry of the cut upload is finished');
      await until(() => !readdirSync(dir).some((f) => f.startsWith('.tmp-')), 'the temporary body file is removed');
      expect(readdirSync(dir).filter((f) => f.endsWith('.json') && !f.startsWith('.'))).toEqual([]);
    });
  }
});
