import { describe, expect, it } from 'vitest';
import { PlatformError } from '../../src/services/platform/envelope.js';
import { SpeechError } from '../../src/services/speech/errors.js';
import { call, emulatorForFile } from '../helpers/emulator.js';

describe('the error path', () => {
  const { emu } = emulatorForFile();

  it('expected errors carry no stack frames; unexpected ones keep theirs', () => {
    expect(new SpeechError(2013, 'invalid params, text').stack).not.toMatch(/\n\s+at /);
    expect(new PlatformError('param', 'bad').stack).not.toMatch(/\n\s+at /);
    expect(new Error('unexpected').stack).toMatch(/\n\s+at /);
    expect(new SpeechError(2013, 'x')).toBeInstanceOf(Error);
  });

  it('an invalid T2A body still answers 2013 naming the field, and the journal holds the whole entry', async () => {
    const r = await call(`${emu.speechUrl}/v1/t2a_v2?lang=en&api_key=sk-secret-123456`, {
      json: { model: 'speech-02-turbo', text: 42 },
      headers: { authorization: 'Bearer sk-journal-key-987654', 'x-trace': 'a' },
    });
    expect(r.status).toBe(200);
    expect(r.body.base_resp.status_code).toBe(2013);
    expect(r.body.base_resp.status_msg).toMatch(/^invalid params, .*text/);
    const j = await call(`${emu.speechUrl}/_emulator/journal?limit=1`);
    const entry = (j.body.entries ?? j.body)[0];
    expect(entry.path).toBe('/v1/t2a_v2');
    expect(entry.status).toBe(200);
    expect(entry.request.headers['x-trace']).toBe('a');
    expect(entry.request.headers.authorization).toMatch(/^Bearer /);
    expect(entry.request.headers.authorization).not.toContain('987654');
    expect(entry.request.query.lang).toBe('en');
    expect(JSON.stringify(entry.request.query)).not.toContain('123456');
    expect(entry.request.body).toMatchObject({ model: 'speech-02-turbo', text: 42 });
    expect(entry.response.summary.base_resp.status_code).toBe(2013);
  });

  it('the journal and the metrics name the spec code of an answer too large to summarize', async () => {
    const key = 'sk-large-answer-code';
    const r = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: {
        model: 'speech-02-turbo',
        text: 'A sentence long enough to make a large answer. '.repeat(12),
        voice_setting: { voice_id: 'male-qn-qingse' },
        audio_setting: { format: 'wav' },
      },
      headers: { authorization: `Bearer ${key}` },
    });
    expect(r.body.base_resp.status_code).toBe(0);
    expect(r.body.data.audio.length).toBeGreaterThan(65_536);
    const j = await call(`${emu.speechUrl}/_emulator/journal?limit=1&account=${key}`);
    const entry = (j.body.entries ?? j.body)[0];
    expect(entry.response.summary).toEqual({ bytes: expect.any(Number), trace_id: r.body.trace_id });
    expect(entry.response.code).toBe(0);
    const bad = await call(`${emu.speechUrl}/v1/t2a_v2`, { json: { model: 'speech-02-turbo', text: 42 }, headers: { authorization: `Bearer ${key}` } });
    expect(bad.body.base_resp.status_code).toBe(2013);
    const last = (await call(`${emu.speechUrl}/_emulator/journal?limit=1&account=${key}`)).body;
    expect((last.entries ?? last)[0].response.code).toBe(2013);
    const metrics = await fetch(`${emu.speechUrl}/_emulator/metrics`).then((m) => m.text());
    expect(metrics).toMatch(/emulator_requests_total\{[^}]*route="\/v1\/t2a_v2"[^}]*code="0"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/emulator_requests_total\{[^}]*route="\/v1\/t2a_v2"[^}]*code="2013"[^}]*\} [1-9]/);
  });
});
