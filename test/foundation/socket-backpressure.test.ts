/**
 * Back-pressure of every socket (issue: one client that stops reading grew the server without bound).
 * A client sends its start, stops reading (its TCP socket paused: the kernel buffers fill, then the
 * server's send buffer) and keeps sending 9,000-character pieces every 500 ms. The server's buffer for
 * that socket, shown in the state view, must stay under the per-socket bound while the client does
 * not read, and the socket closes with 1008 once it stayed full past the stall time.
 */
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SOCKET_BUFFER_BYTES } from '../../src/core/socket/wire.js';
import type { RunningEmulator } from '../../src/index.js';
import { control, startTestEmulator } from '../helpers/emulator.js';

const STALL_MS = 4000;
/** What may wait beyond the bound: the one frame written when the buffer was just under it. */
const FRAME_SLACK = 64 * 1024;
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(200).slice(0, 9000);

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator({ socketStallMs: STALL_MS });
});
afterAll(() => emu?.close());

interface Stalled {
  /** The largest `buffered_bytes` the state view showed for the socket. */
  maxBuffered: number;
  /** The close code the server recorded (undefined: still open at the end). */
  closeCode: string | undefined;
}

/**
 * Opens `path`, sends `start` once its first message came, then pauses reading and sends `piece` every
 * 500 ms for `ms`, watching the state view for the socket's buffer.
 */
async function stallOn(url: string, key: string, start: unknown, piece: unknown, ms: number): Promise<Stalled> {
  const ctl = control(emu.speechUrl);
  await ctl.clearJournal();
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
  await new Promise((resolve, reject) => {
    ws.once('message', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify(start));
  await new Promise((r) => setTimeout(r, 300));
  // The client stops reading: nothing more is taken from its TCP socket.
  (ws as unknown as { _socket: Socket })._socket.pause();
  let maxBuffered = 0;
  const until = Date.now() + ms;
  // Until the server let the socket go (the paused client never reads its close frame).
  while (Date.now() < until) {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(piece));
    await new Promise((r) => setTimeout(r, 500));
    const open = (await ctl.accountState(key))?.open_websockets ?? [];
    for (const s of open) maxBuffered = Math.max(maxBuffered, s.buffered_bytes);
    if (!open.length) break;
  }
  const entry = ((await ctl.journal()).body.entries as any[]).find((e) => e.path?.startsWith(new URL(url).pathname));
  const frames = (entry?.ws_frames ?? []) as { dir: string; size: number; type: string; event?: string }[];
  ws.terminate();
  return {
    maxBuffered,
    closeCode: frames.find((f) => f.dir === 'out' && f.type === 'close')?.event,
  };
}

describe('a socket whose client stops reading', () => {
  // Uncompressed audio fills the kernel's buffers (several MB on loopback) in a few seconds.
  const start = {
    event: 'task_start',
    model: 'speech-2.8-turbo',
    voice_setting: { voice_id: 'male-qn-qingse' },
    audio_setting: { format: 'pcm', sample_rate: 32000 },
  };

  it('/ws/v1/t2a_v2: the server buffer stays under the bound, then the socket closes 1008', async () => {
    const url = `${emu.speechUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`;
    const r = await stallOn(url, 'stall-ws', start, { event: 'task_continue', text: TEXT }, STALL_MS + 15_000);
    expect(r.maxBuffered).toBeGreaterThan(0);
    expect(r.maxBuffered).toBeLessThanOrEqual(SOCKET_BUFFER_BYTES + FRAME_SLACK);
    expect(r.closeCode).toBe('1008');
  }, 40_000);

  it('/ws/v1/t2a_v2_bidi: the same bound and close', async () => {
    const url = `${emu.speechUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2_bidi`;
    const r = await stallOn(url, 'stall-bidi', start, { event: 'task_continue', text: TEXT }, STALL_MS + 15_000);
    expect(r.maxBuffered).toBeGreaterThan(0);
    expect(r.maxBuffered).toBeLessThanOrEqual(SOCKET_BUFFER_BYTES + FRAME_SLACK);
    expect(r.closeCode).toBe('1008');
  }, 40_000);
});
