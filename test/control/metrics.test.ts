import { describe, expect, it } from 'vitest';
import { call, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { connect, wsUrl } from '../platform/conversation/conversation-helpers.js';
import { req, t2a } from '../speech/helpers.js';

/** The value of one sample line of a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const inner = /\{(.*)\}/.exec(line)?.[1] ?? '';
    const have = Object.fromEntries([...inner.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

async function scrape(base: string, token?: string): Promise<string> {
  const r = await fetch(`${base}/_emulator/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.text();
}

describe('metrics', () => {
  const { emu } = emulatorForFile();

  it('counts requests by service, route pattern, status and spec code; latency; audio seconds by format; sockets; memory', async () => {
    expect((await t2a(emu.speechUrl, req())).body.base_resp.status_code).toBe(0);
    expect((await t2a(emu.speechUrl, req({ voice_setting: { voice_id: 'nobody-here' } }))).body.base_resp.status_code).toBe(2054);
    const missing = await call(`${emu.platformUrl}/v1/files/retrieve?file_id=123`, { headers: { 'x-api-key': 'm-key' } });
    const c = await connect(wsUrl(emu.platformUrl, '/v1/speech-to-text/stream', 'm-key'));
    const text = await scrape(emu.platformUrl);
    expect(sample(text, 'emulator_requests_total', { service: 'speech', method: 'POST', route: '/v1/t2a_v2', status: '200', code: '0' })).toBe(1);
    expect(sample(text, 'emulator_requests_total', { service: 'speech', route: '/v1/t2a_v2', code: '2054' })).toBe(1);
    expect(sample(text, 'emulator_requests_total', { service: 'platform', status: String(missing.status), code: String(missing.body.error_code) })).toBe(1);
    expect(sample(text, 'emulator_request_duration_seconds_count', { service: 'speech', route: '/v1/t2a_v2' })).toBe(2);
    expect(sample(text, 'emulator_request_duration_seconds_bucket', { route: '/v1/t2a_v2', le: '+Inf' })).toBe(2);
    // about 1 s of mp3 for "Hello world."
    const audio = sample(text, 'emulator_audio_synthesized_seconds_total', { format: 'mp3' })!;
    expect(audio).toBeGreaterThan(0.5);
    expect(audio).toBeLessThan(3);
    expect(sample(text, 'emulator_open_websockets', { path: '/v1/speech-to-text/stream' })).toBe(1);
    expect(sample(text, 'emulator_open_streams', { service: 'speech' })).toBe(0);
    expect(sample(text, 'emulator_process_memory_bytes', { type: 'rss' })).toBeGreaterThan(1e6);
    // the raw URL (query) is never a label; control calls are not counted
    expect(text).not.toContain('file_id=');
    expect(text).not.toContain('/_emulator');
    c.ws.close();
    await c.closed;
    let after = await scrape(emu.speechUrl);
    for (let i = 0; i < 100 && sample(after, 'emulator_open_websockets', { path: '/v1/speech-to-text/stream' }) !== undefined; i++) {
      await new Promise((r) => setTimeout(r, 10));
      after = await scrape(emu.speechUrl);
    }
    expect(sample(after, 'emulator_open_websockets', { path: '/v1/speech-to-text/stream' })).toBeUndefined();
  });

  // Two emulators of its own side by side: the subject is that they do not share a registry.
  it('each emulator has its own registry; behind the control token when one is set', async () => {
    const a = await startTestEmulator({ controlToken: 'metrics-token' });
    const b = await startTestEmulator();
    try {
      await t2a(a.speechUrl, req());
      expect((await call(`${a.speechUrl}/_emulator/metrics`)).status).toBe(401);
      const textA = await scrape(a.speechUrl, 'metrics-token');
      expect(sample(textA, 'emulator_requests_total', { route: '/v1/t2a_v2' })).toBe(1);
      const textB = await scrape(b.speechUrl);
      expect(sample(textB, 'emulator_requests_total', { route: '/v1/t2a_v2' })).toBeUndefined();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
