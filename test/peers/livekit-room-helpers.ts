/**
 * What the room peer tests share: a call or agent session started over HTTP, the emulator's own speech
 * at 48 kHz (what a microphone would carry), `hear` on what a client recorded, and a waiter.
 */
import { expect } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { pcm16Wav } from '../helpers/audio.js';
import { call } from '../helpers/emulator.js';
import { ffmpegPcm16 } from '../helpers/ffprobe.js';
import { spokenPcm } from '../platform/conversation/conversation-helpers.js';

export const RATE = 48_000;

export async function startCall(emu: RunningEmulator, key: string, body: Record<string, unknown> = {}) {
  const r = await call(`${emu.platformUrl}/v1/audio/assistant/start`, { json: { client_nonce: crypto.randomUUID(), ...body }, headers: { 'x-api-key': key } });
  expect(r.status, r.text).toBe(200);
  expect(r.body.error_code, r.text).toBe(0);
  return r.body.data as { session_id: string; rtc_url: string; room_name: string; identity: string; token: string; bot_identity: string; expire_at: number };
}

export async function stopCall(emu: RunningEmulator, key: string, sessionId: string) {
  const r = await call(`${emu.platformUrl}/v1/audio/assistant/stop`, { json: { session_id: sessionId }, headers: { 'x-api-key': key } });
  expect(r.body.error_code, r.text).toBe(0);
  return r.body.data;
}

export async function createAgentSession(emu: RunningEmulator, key: string, agentId = 'agent_demo') {
  const r = await call(`${emu.platformUrl}/api/v1/agents/openapi/sessions/create`, {
    json: { agentId, userIdentifier: `eu:${crypto.randomUUID().slice(0, 8)}` },
    headers: { 'x-api-key': key, 'idempotency-key': crypto.randomUUID() },
  });
  expect(r.body.error_code, r.text).toBe(0);
  return r.body.data.item as { sessionId: string; wsUrl: string; userToken: string; roomName: string; status: string };
}

export async function agentOp(emu: RunningEmulator, key: string, op: 'check' | 'heartbeat' | 'end', sessionId: string) {
  const method = op === 'check' ? 'GET' : op === 'end' ? 'DELETE' : 'POST';
  const r = await call(`${emu.platformUrl}/api/v1/agents/openapi/sessions/${op}?session_id=${sessionId}`, { method, headers: { 'x-api-key': key } });
  expect(r.body.error_code, r.text).toBe(0);
  return r.body.data.item;
}

/**
 * Heartbeats every 10 s, as a client app sends them while it is in the call (or agent session): a test slowed
 * past 30 s by a busy machine then keeps its session. Returns the function that stops them.
 */
export function keepAlive(emu: RunningEmulator, key: string, session: { call: string } | { agent: string }): () => void {
  const beat = () =>
    'call' in session
      ? call(`${emu.platformUrl}/v1/audio/assistant/heartbeat`, { json: { session_id: session.call }, headers: { 'x-api-key': key } })
      : call(`${emu.platformUrl}/api/v1/agents/openapi/sessions/heartbeat?session_id=${session.agent}`, { method: 'POST', headers: { 'x-api-key': key } });
  const timer = setInterval(() => void beat().catch(() => {}), 10_000);
  return () => clearInterval(timer);
}

/** The emulator's own speech of `text` (its signature registered), resampled by ffmpeg to 48 kHz as a microphone has it. */
export async function micOf(emu: RunningEmulator, text: string, voice = 'male_calm'): Promise<Int16Array> {
  const { pcm } = await spokenPcm(emu.emulator, text, voice);
  const at48 = await ffmpegPcm16(Buffer.concat([pcm16Wav(pcm.length, 16_000).subarray(0, 44), pcm]), { ext: 'wav', rate: RATE });
  return new Int16Array(at48.buffer.slice(at48.byteOffset, at48.byteOffset + at48.byteLength));
}

/** `POST /_emulator/hear` on PCM16 mono 48 kHz, as the client recorded it. */
export async function hear(emu: RunningEmulator, pcm: Buffer) {
  const r = await call(`${emu.platformUrl}/_emulator/hear`, { method: 'POST', body: pcm, headers: { 'content-type': `audio/pcm;rate=${RATE}` } });
  expect(r.status, r.text).toBe(200);
  return r.body as { text: string; utterances: { full_text: string; heard_text: string; complete: boolean }[] };
}

/** Milliseconds of PCM16 mono 48 kHz whose samples are not (near) silent, counted in 20 ms frames. */
export function voicedMs(pcm: Buffer): number {
  const s = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1);
  let voiced = 0;
  for (let i = 0; i + 960 <= s.length; i += 960) {
    let peak = 0;
    for (let j = i; j < i + 960; j++) peak = Math.max(peak, Math.abs(s[j]!));
    if (peak > 300) voiced++;
  }
  return voiced * 20;
}

/** Resolves once `ok()` holds (polled every 50 ms), or fails naming `what`. */
export function until(ok: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (ok()) {
        clearInterval(poll);
        resolve();
      } else if (Date.now() - started > timeoutMs) {
        clearInterval(poll);
        reject(new Error(`timed out waiting for ${what}`));
      }
    }, 50);
  });
}
