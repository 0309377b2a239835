/** `--latency realistic` as a pace profile, and a paced stream never holding a synthesis slot while it waits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/app.js';
import { emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { streamT2a, textOf } from './pacing-helpers.js';
import { req } from './helpers.js';

const body = { text: textOf(16), audio_setting: { format: 'pcm', sample_rate: 16000 } };

describe('--latency realistic paces every audio stream (ttfa_ms=350 rtf=2 jitter_ms=20)', () => {
  let slow: RunningEmulator;
  beforeAll(async () => {
    slow = await startTestEmulator({ latency: 'realistic' });
  });
  afterAll(() => slow.close());

  it('first audio after 350 ms, delivery no faster than twice real time; a fault field overrides the profile', async () => {
    const s = await streamT2a(slow.speechUrl, body);
    const length = s.events.at(-1)!.body.extra_info.audio_length;
    const first = s.events.find((e) => e.body.data?.status === 1)!.at;
    expect(first).toBeGreaterThanOrEqual(350);
    expect(s.total).toBeGreaterThanOrEqual(0.9 * (length / 2));
    const quick = await streamT2a(slow.speechUrl, body, { fault: 'ttfa_ms=0;rtf=50;jitter_ms=0' });
    expect(quick.total).toBeLessThan(s.total / 2);
  });
});

describe('a paced stream waits without its synthesis slot', () => {
  const { emu } = emulatorForFile({ plane: 'speech' });

  it('more paced streams than slots, all waiting: a plain request is still answered at once', async () => {
    const slots = emu.emulator.synthesis.limit;
    const waiting = Array.from({ length: slots + 1 }, () => streamT2a(emu.speechUrl, { text: 'Wait for it.' }, { fault: 'ttfa_ms=2500' }));
    await new Promise((r) => setTimeout(r, 400));
    const started = performance.now();
    const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer pacing-key' },
      body: JSON.stringify(req({}, 'Not waiting.')),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).base_resp.status_code).toBe(0);
    expect(performance.now() - started).toBeLessThan(1500);
    for (const s of await Promise.all(waiting)) expect(s.events.find((e) => e.body.data?.status === 1)!.at).toBeGreaterThanOrEqual(2500);
  });
});

describe('an account whose every stream is paced (PUT /_emulator/accounts/{key} stream_faults)', () => {
  const { emu, ctl } = emulatorForFile({ plane: 'speech' });

  it('paces the key’s streams without a header; the header still overrides; {} clears', async () => {
    const put = await ctl.putAccount('paced-account-key', { stream_faults: { ttfa_ms: 700, hex_odd: 1 } });
    expect(put.status).toBe(200);
    expect(put.body.stream_faults).toEqual({ ttfa_ms: 700, hex_odd: 1 });
    const paced = await streamT2a(emu.speechUrl, body, { key: 'paced-account-key' });
    expect(paced.events.find((e) => e.body.data?.status === 1)!.at).toBeGreaterThanOrEqual(700);
    expect(paced.events[0]!.body.data.audio.length % 2).toBe(1);
    const other = await streamT2a(emu.speechUrl, body, { key: 'another-key' });
    expect(other.events.find((e) => e.body.data?.status === 1)!.at).toBeLessThan(700);
    const overridden = await streamT2a(emu.speechUrl, body, { key: 'paced-account-key', fault: 'ttfa_ms=0' });
    expect(overridden.events.find((e) => e.body.data?.status === 1)!.at).toBeLessThan(700);
    expect((await ctl.putAccount('paced-account-key', { stream_faults: {} })).body.stream_faults).toEqual({});
    const bad = await ctl.putAccount('paced-account-key', { stream_faults: { rtf: 0 } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('rtf');
  });
});

describe('a paced wait and the emulator shutting down', () => {
  it('shutdown ends a stream waiting for its pace at once, with the closing error event', async () => {
    const own = await startTestEmulator();
    const reading = streamT2a(own.speechUrl, { text: 'Waiting a long time.' }, { fault: 'ttfa_ms=20000' });
    await new Promise((r) => setTimeout(r, 300));
    const started = performance.now();
    await own.close();
    const s = await reading;
    expect(performance.now() - started).toBeLessThan(5000);
    expect(s.events.at(-1)!.body.base_resp.status_code).toBe(1000);
    expect(s.events.some((e) => e.body.data?.status === 1)).toBe(false);
  });
});
