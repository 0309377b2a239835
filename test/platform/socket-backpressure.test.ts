/**
 * Back-pressure of the voice platform's sockets (the speech sockets have theirs in
 * test/foundation/socket-backpressure.test.ts). A client opens its socket, stops reading (its TCP
 * socket paused: the kernel buffers fill, then the server's send buffer) and keeps sending. The
 * server's buffer for that socket, shown in the state view, must stay under the per-socket bound, and
 * the socket closes with the family's code once it stayed full past `--socket-stall-ms`.
 */
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SOCKET_BUFFER_BYTES } from '../../src/core/socket/wire.js';
import type { RunningEmulator } from '../../src/index.js';
import { control, startTestEmulator } from '../helpers/emulator.js';
import { spokenPcm, wsUrl } from './conversation/conversation-helpers.js';

const STALL_MS = 4000;
/** What may wait beyond the bound: the one frame written when the buffer was just under it. */
const FRAME_SLACK = 64 * 1024;

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator({ socketStallMs: STALL_MS });
});
afterAll(() => emu?.close());

interface Stalled {
  /** The largest `buffered_bytes` the state view showed for the socket. */
  maxBuffered: number;
  /** The close code the server sent (undefined: still open at the end). */
  closeCode: string | undefined;
  /** Bytes the server sent on the socket in all (its journal entry's frames). */
  sentBytes: number;
  /** Milliseconds from the pause to the socket leaving the state view. */
  closedAfterMs: number;
}

/**
 * Opens `url`, sends `start` and waits `settleMs` (the socket's first answer is read), then pauses
 * reading and calls `keepSending` every 500 ms for `ms` at most, watching the state view for the socket's buffer.
 */
async function stallOn(url: string, key: string, start: unknown, keepSending: (ws: WebSocket) => Promise<void>, ms: number): Promise<Stalled> {
  const ctl = control(emu.speechUrl);
  await ctl.clearJournal();
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify(start));
  await new Promise((r) => setTimeout(r, 500));
  // The client stops reading: nothing more is taken from its TCP socket.
  (ws as unknown as { _socket: Socket })._socket.pause();
  const paused = Date.now();
  let maxBuffered = 0;
  let closedAfterMs = NaN;
  while (Date.now() < paused + ms) {
    if (ws.readyState === WebSocket.OPEN) await keepSending(ws);
    await new Promise((r) => setTimeout(r, 500));
    const open = (await ctl.accountState(key))?.open_websockets ?? [];
    for (const s of open) maxBuffered = Math.max(maxBuffered, s.buffered_bytes);
    if (!open.length) {
      closedAfterMs = Date.now() - paused;
      break;
    }
  }
  const entry = ((await ctl.journal()).body.entries as any[]).find((e) => e.path?.startsWith(new URL(url).pathname));
  const frames = (entry?.ws_frames ?? []) as { dir: string; size: number; type: string; event?: string }[];
  ws.terminate();
  return {
    maxBuffered,
    closeCode: frames.find((f) => f.dir === 'out' && f.type === 'close')?.event,
    sentBytes: frames.filter((f) => f.dir === 'out').reduce((n, f) => n + f.size, 0),
    closedAfterMs,
  };
}

describe('a platform socket whose client stops reading', () => {
  it('/api/v1/audio/conversation/stream: reply audio stops at the bound, then the socket closes 1008', async () => {
    const ctl = control(emu.speechUrl);
    const original = (await ctl.call('GET', '/fixtures/conversation.json')).body.content;
    // A long reply to every utterance: about 100 s of MP3 (some 800 KB) per turn, so a few turns fill the kernel's buffers.
    const reply = 'This is a long answer that goes on and on, so that every turn sends a lot of audio. '.repeat(18);
    expect(
      (await ctl.call('PUT', '/fixtures/conversation.json', { rules: [{ match: '.', reply, language: 'en' }], defaults: [{ reply, language: 'en' }] })).status,
    ).toBe(200);
    try {
      const { pcm } = await spokenPcm(emu.emulator, 'Hello there, please tell me a long story.');
      const r = await stallOn(
        wsUrl(emu.platformUrl, '/api/v1/audio/conversation/stream', 'stall-conversation'),
        'stall-conversation',
        { voice_id: 'english_tutor', audio_format: 'pcm16' },
        async (ws) => {
          // One utterance a round: the server answers each with the long reply, one turn after another.
          ws.send(pcm, { binary: true });
          ws.send(JSON.stringify({ is_final: true }));
        },
        STALL_MS + 40_000,
      );
      expect(r.maxBuffered).toBeGreaterThan(0);
      expect(r.maxBuffered).toBeLessThanOrEqual(SOCKET_BUFFER_BYTES + FRAME_SLACK);
      expect(r.closeCode).toBe('1008');
      expect(r.closedAfterMs).toBeGreaterThanOrEqual(STALL_MS);
    } finally {
      await ctl.call('PUT', '/fixtures/conversation.json', original);
    }
  }, 90_000);

  it('/v1/speech-to-text/stream: all it can send (300 s of audio recognised) stays within the bound; the stream ends and closes 1000', async () => {
    // The most a recognition stream produces: partial results over the longest audio it takes (300 s),
    // then the final result. It never holds more than the bound for a client that does not read.
    const { pcm } = await spokenPcm(emu.emulator, 'The quick brown fox jumps over the lazy dog, again and again, all day long. '.repeat(55));
    const audio = pcm.subarray(0, Math.min(pcm.length, 299 * 32000));
    let at = 0;
    const r = await stallOn(
      wsUrl(emu.platformUrl, '/v1/speech-to-text/stream', 'stall-recognition'),
      'stall-recognition',
      { meta: { audio_format: 'pcm16', language: 'en' } },
      async (ws) => {
        // 30 s of audio a round, as fast as the client can send it; then the end of the audio.
        if (at >= audio.length) return;
        for (const end = Math.min(audio.length, at + 30 * 32000); at < end; at += 32000) ws.send(audio.subarray(at, at + 32000), { binary: true });
        if (at >= audio.length) ws.send(JSON.stringify({ is_final: true }));
      },
      60_000,
    );
    expect(r.sentBytes).toBeGreaterThan(10_000);
    expect(r.sentBytes).toBeLessThan(SOCKET_BUFFER_BYTES);
    expect(r.maxBuffered).toBeLessThanOrEqual(SOCKET_BUFFER_BYTES + FRAME_SLACK);
    expect(r.closeCode).toBe('1000');
  }, 90_000);
});
