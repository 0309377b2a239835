/** Pace and audio faults on the platform's `/v1/text-to-speech/stream` (raw audio in a chunked body). */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile();
const body = { voice_id: 'female_bright', generate_text: 'A paced answer arrives no faster than it plays. '.repeat(2), audio_format: 'pcm' };

async function stream(fault?: string) {
  const started = performance.now();
  const res = await fetch(`${emu.platformUrl}/v1/text-to-speech/stream`, {
    method: 'POST',
    headers: { 'x-api-key': 'tts-pace-key', 'content-type': 'application/json', ...(fault ? { 'x-emulator-fault': fault } : {}) },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const parts: Buffer[] = [];
  let firstAt = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    firstAt ||= performance.now() - started;
    parts.push(Buffer.from(value));
  }
  const bytes = Buffer.concat(parts);
  const rate = Number(res.headers.get('x-audio-sample-rate'));
  return {
    bytes,
    firstAt,
    total: performance.now() - started,
    audioMs: (bytes.length / 2 / rate) * 1000,
    ignored: res.headers.get('x-emulator-fault-ignored'),
  };
}

describe('paced platform speech stream', () => {
  it('ttfa_ms=400 rtf=1: first audio after 400 ms, the body no faster than real time; unpaced much faster', async () => {
    const fast = await stream();
    const paced = await stream('ttfa_ms=400;rtf=1');
    expect(paced.bytes.equals(fast.bytes)).toBe(true);
    expect(paced.firstAt).toBeGreaterThanOrEqual(400);
    expect(paced.total).toBeGreaterThanOrEqual(0.9 * paced.audioMs);
    expect(fast.total).toBeLessThan(paced.total / 2);
    const entry = (await ctl.journal({ path: '/v1/text-to-speech/stream' })).body.entries[0];
    expect(entry.note).toMatch(/^paced ttfa_ms=400 rtf=1: first audio after \d+ ms/);
  });

  it('gap_ms inserts digital silence into the raw PCM; hex_odd has no hex here and is reported ignored', async () => {
    const fast = await stream();
    const gapped = await stream('gap_ms=300;gap_at_ms=500;hex_odd=1');
    const rate = 24000;
    const at = (ms: number) => Math.round((ms * rate) / 1000) * 2;
    expect(gapped.bytes.length - fast.bytes.length).toBe(at(300));
    expect(gapped.bytes.subarray(at(500), at(800)).every((b) => b === 0)).toBe(true);
    expect(gapped.ignored).toBe('hex_odd');
  });
});
