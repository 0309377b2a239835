import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diarizeRequest } from '../../../src/services/platform/diarization/schema.js';
import { ttsRequestSchema } from '../../../src/services/platform/tts/schema.js';
import { voiceSaveSchema } from '../../../src/services/platform/voices/schema.js';
import { emulatorForFile, startTestEmulator } from '../../helpers/emulator.js';
import { ffprobe } from '../../helpers/ffprobe.js';

/** Tools of /mcp over raw JSON-RPC: schemas, audio results, auth, argument errors, faults, journal. */
const { emu, ctl } = emulatorForFile({ resetEach: true });
let dir: string;
let voice: string;
let seq = 100;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcp-tools-'));
  voice = emu.emulator.fixtures.data['platform-voices.json'][0]!.voice_id;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function callTool(name: string, args: unknown, headers: Record<string, string> = {}) {
  const id = ++seq;
  const res = await fetch(`${emu.platformUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as any;
  expect(body.id).toBe(id);
  expect(Object.keys(body.result).sort()).toEqual(['content', 'isError']);
  expect(body.result.content).toHaveLength(1);
  expect(body.result.content[0].type).toBe('text');
  const text: string = body.result.content[0].text;
  return { isError: body.result.isError as boolean, text, json: JSON.parse(text), headers: res.headers };
}

describe('tools/list', () => {
  it('lists the tools with inputSchema generated from the HTTP zod schemas, apiKey required, no outputSchema', async () => {
    const res = await fetch(`${emu.platformUrl}/mcp`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    const { tools } = ((await res.json()) as any).result;
    const names = tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(['text_to_speech_generate', 'text_to_speech_stream', 'diarize', 'voice_save', 'voice_list', 'voice_delete']);
    for (const t of tools) {
      expect(Object.keys(t).sort()).toEqual(['description', 'inputSchema', 'name']);
      expect(t.description.length).toBeGreaterThan(80);
      expect(t.inputSchema.type).toBe('object');
      expect(t.inputSchema.required).toContain('apiKey');
      expect(t.inputSchema.properties.apiKey.type).toBe('string');
    }
    const tts = tools.find((t: { name: string }) => t.name === 'text_to_speech_generate');
    expect(Object.keys(tts.inputSchema.properties).sort()).toEqual([...Object.keys(ttsRequestSchema.shape), 'apiKey'].sort());
    for (const f of ['voice_id', 'generate_text', 'emotion_class', 'speed', 'audio_format']) expect(tts.inputSchema.properties).toHaveProperty(f);
    expect(tts.inputSchema.required.sort()).toEqual(['apiKey', 'generate_text', 'voice_id']);
    expect(tts.inputSchema.properties.voice_id.description).toBe(ttsRequestSchema.shape.voice_id.description);
    const di = tools.find((t: { name: string }) => t.name === 'diarize');
    expect(Object.keys(di.inputSchema.properties).sort()).toEqual([...Object.keys(diarizeRequest.shape), 'apiKey'].sort());
    const byName = (n: string) => tools.find((t: { name: string }) => t.name === n).inputSchema;
    expect(Object.keys(byName('voice_save').properties).sort()).toEqual([...Object.keys(voiceSaveSchema.shape), 'apiKey'].sort());
    expect(byName('voice_save').required.sort()).toEqual(['apiKey', 'voice_id']);
    expect(Object.keys(byName('voice_list').properties)).toEqual(['apiKey']);
    expect(byName('voice_list').required).toEqual(['apiKey']);
    expect(byName('voice_delete').required.sort()).toEqual(['apiKey', 'voice_id']);
  });
});

describe('text_to_speech_generate', () => {
  it('answers JSON text: Base64 WAV whose header, decoder and link agree with the stated format and duration', async () => {
    const r = await callTool('text_to_speech_generate', {
      apiKey: 'mcp-a',
      voice_id: voice,
      generate_text: 'Tools speak too.',
      speed: 1.1,
      emotion_class: 'happy',
    });
    expect(r.isError).toBe(false);
    const audio = Buffer.from(r.json.audio_base64, 'base64');
    expect(r.json).toMatchObject({ audio_format: 'wav', content_type: 'audio/wav', sample_rate: 24000, channels: 1, bit_depth: 16, size_bytes: audio.length });
    const file = join(dir, 'gen.wav');
    await writeFile(file, audio);
    const probe = (await ffprobe(file)).raw as any;
    expect(probe.streams[0]).toMatchObject({ codec_name: 'pcm_s16le', sample_rate: '24000', channels: 1 });
    expect(Math.abs(Number(probe.format.duration) * 1000 - r.json.duration_ms)).toBeLessThanOrEqual(1);

    // The signed link serves the same bytes without any key, and expires after 24 hours of emulator time.
    expect(r.json.download_url.startsWith(`${emu.platformUrl}/download/`)).toBe(true);
    const dl = await fetch(r.json.download_url);
    expect(dl.status).toBe(200);
    expect(dl.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await dl.arrayBuffer()).equals(audio)).toBe(true);
    await ctl.advance(24 * 3600 * 1000 + 1000);
    const late = await fetch(r.json.download_url);
    expect(late.status).toBe(403);
    await late.text();
  });

  it('pcm: raw samples, duration from the sample count', async () => {
    const r = await callTool('text_to_speech_generate', { apiKey: 'mcp-a', voice_id: voice, generate_text: 'Raw.', audio_format: 'pcm' });
    expect(r.isError, r.text).toBe(false);
    const audio = Buffer.from(r.json.audio_base64, 'base64');
    expect(r.json).toMatchObject({ audio_format: 'pcm', content_type: 'audio/pcm' });
    expect(audio.subarray(0, 4).toString('ascii')).not.toBe('RIFF');
    expect(r.json.duration_ms).toBe(Math.round((audio.length / 2 / 24000) * 1000));
    expect(r.json.download_url).toMatch(/\.pcm\?/);
  });
});

describe('text_to_speech_stream', () => {
  it('consumes the stream and answers the joined file with true WAV sizes, equal to the generated one', async () => {
    const args = { apiKey: 'mcp-a', voice_id: voice, generate_text: 'Streamed through the tool.' };
    const s = await callTool('text_to_speech_stream', args);
    const g = await callTool('text_to_speech_generate', args);
    expect(s.isError).toBe(false);
    expect(s.json.stream_chunks).toBeGreaterThan(1);
    const bytes = Buffer.from(s.json.audio_base64, 'base64');
    expect(bytes.readUInt32LE(4)).toBe(bytes.length - 8);
    expect(bytes.readUInt32LE(40)).toBe(bytes.length - 44);
    expect(bytes.equals(Buffer.from(g.json.audio_base64, 'base64'))).toBe(true);
    expect(s.json.duration_ms).toBe(g.json.duration_ms);
  });
});

describe('failures are results with isError and the operation envelope', () => {
  it('auth: missing, empty, disabled key and a missing capability give 10003 naming apiKey or the capability', async () => {
    const missing = await callTool('text_to_speech_generate', { voice_id: voice, generate_text: 'x' });
    expect(missing.isError).toBe(true);
    expect(missing.json).toEqual({ error_code: 10003, error_message: expect.stringContaining('apiKey'), succeed: false, data: null });
    expect((await callTool('diarize', { apiKey: '', url: 'https://cdn.emulator.test/audio/ref-5s.wav' })).json.error_code).toBe(10003);
    expect((await callTool('diarize', undefined)).json.error_code).toBe(10003);
    await ctl.putAccount('mcp-off', { disabled: true });
    const off = await callTool('text_to_speech_generate', { apiKey: 'mcp-off', voice_id: voice, generate_text: 'x' });
    expect(off.json).toMatchObject({ error_code: 10003, error_message: expect.stringContaining('disabled') });
    await ctl.putAccount('mcp-notts', { capabilities: ['cloning'] });
    const cap = await callTool('text_to_speech_generate', { apiKey: 'mcp-notts', voice_id: voice, generate_text: 'x' });
    expect(cap.json).toMatchObject({ error_code: 10003, error_message: expect.stringContaining('tts capability') });
    const capD = await callTool('diarize', { apiKey: 'mcp-notts', url: 'https://cdn.emulator.test/audio/ref-5s.wav' });
    expect(capD.json.error_message).toContain('diarization capability');
  });

  it('strict keys: an unlisted key is 10003 "not a valid API key"', async () => {
    const strict = await startTestEmulator({ strictKeys: true });
    try {
      const res = await fetch(`${strict.platformUrl}/mcp`, {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'voice_list', arguments: { apiKey: 'nobody-knows-me' } } }),
      });
      const result = ((await res.json()) as any).result;
      expect(result.isError).toBe(true);
      expect(JSON.parse(result.content[0].text)).toMatchObject({ error_code: 10003, error_message: expect.stringContaining('not a valid API key') });
    } finally {
      await strict.close();
    }
  });

  it('bad arguments give 10001 naming the field and the rule', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ voice_id: voice }, 'generate_text'],
      [{ voice_id: voice, generate_text: 'x', speed: 5 }, 'speed'],
      [{ voice_id: voice, generate_text: 'x', speed: 'fast' }, 'speed'],
      [{ voice_id: voice, generate_text: 'x', text_normalization: 'true' }, 'text_normalization'],
      [{ voice_id: voice, generate_text: 'x', audio_format: 'mp3' }, 'audio_format'],
      [{ voice_id: 'nobody', generate_text: 'x' }, 'voice_id'],
      [{ voice_id: voice, generate_text: '字'.repeat(251) }, 'generate_text'],
    ];
    for (const [args, field] of cases) {
      const r = await callTool('text_to_speech_generate', { apiKey: 'mcp-a', ...args });
      expect(r.isError, field).toBe(true);
      expect(r.json.error_code, field).toBe(10001);
      expect(r.json.error_message, field).toContain(field);
    }
    const notObject = await callTool('text_to_speech_stream', ['mcp-a']);
    expect(notObject.json).toMatchObject({ error_code: 10001, error_message: expect.stringContaining('arguments') });
    const none = await callTool('diarize', { apiKey: 'mcp-a' });
    expect(none.json).toMatchObject({ error_code: 10001, error_message: expect.stringContaining('object_key or url') });
  });

  it('balance: 20003 as the HTTP operation', async () => {
    await ctl.putAccount('mcp-poor', { balance_micro: 0 });
    const r = await callTool('text_to_speech_generate', { apiKey: 'mcp-poor', voice_id: voice, generate_text: 'x' });
    expect(r.json.error_code).toBe(20003);
  });

  it('X-Emulator-Fault code and status are expressed as the tool error of the operation family', async () => {
    const code = await callTool('diarize', { apiKey: 'mcp-a', url: 'x' }, { 'x-emulator-fault': 'code=10014' });
    expect(code.json).toMatchObject({ error_code: 10014, error_message: expect.stringContaining('injected') });
    expect(code.headers.get('x-emulator-fault-ignored')).toBeNull();
    const status = await callTool('text_to_speech_generate', { apiKey: 'mcp-a' }, { 'x-emulator-fault': 'status=429' });
    expect(status.json.error_code).toBe(10014);
    // A queued control-plane rule on /mcp reaches the next tool call the same way.
    await ctl.addFault({ service: 'platform', path: '/mcp', times: 1, fault: { code: 10000 } });
    expect((await callTool('voice_list', { apiKey: 'mcp-a' })).json.error_code).toBe(10000);
    expect((await callTool('voice_list', { apiKey: 'mcp-a' })).isError).toBe(false);
    const cut = await callTool('text_to_speech_generate', { apiKey: 'mcp-a' }, { 'x-emulator-fault': 'cut_after_chunks=1' });
    expect(cut.headers.get('x-emulator-fault-ignored')).toBe('cut_after_chunks');
  });
});

describe('diarize', () => {
  it('diarizes the tool’s own audio through its download link: one speaker', async () => {
    const g = await callTool('text_to_speech_generate', { apiKey: 'mcp-d', voice_id: voice, generate_text: 'One speaker here. Then a second sentence.' });
    const r = await callTool('diarize', { apiKey: 'mcp-d', url: g.json.download_url });
    expect(r.isError, r.text).toBe(false);
    expect(r.json).toMatchObject({ error_code: 0, succeed: true });
    expect(r.json.data.trace_id).toEqual(expect.any(String));
    expect(r.json.data.speakers).toHaveLength(1);
    expect(r.json.data.speakers[0].segments.length).toBeGreaterThanOrEqual(1);
  });
});

describe('voice tools', () => {
  const ref = { ref_audio: 'https://cdn.emulator.test/audio/ref-5s.wav', ref_text: 'A reference recording.' };

  it('save, list, synthesize with it, delete (idempotent), isolated per key', async () => {
    const saved = await callTool('voice_save', { apiKey: 'mcp-v', voice_id: 'my-voice_1', ...ref });
    expect(saved.isError, saved.text).toBe(false);
    expect(saved.json).toEqual({ error_code: 0, error_message: 'success', succeed: true, data: {} });
    const list = await callTool('voice_list', { apiKey: 'mcp-v' });
    expect(list.json.data).toMatchObject({
      total: 1,
      has_more: false,
      list: [{ voice_id: 'my-voice_1', voice_url: expect.stringContaining('/download/'), created_at: expect.any(Number) }],
    });
    expect((await callTool('voice_list', { apiKey: 'mcp-other' })).json.data.list).toEqual([]);
    const spoken = await callTool('text_to_speech_generate', { apiKey: 'mcp-v', voice_id: 'my-voice_1', generate_text: 'Cloned.', language: 'en' });
    expect(spoken.isError, spoken.text).toBe(false);
    expect((await callTool('text_to_speech_generate', { apiKey: 'mcp-other', voice_id: 'my-voice_1', generate_text: 'x' })).json.error_code).toBe(10001);
    const del = await callTool('voice_delete', { apiKey: 'mcp-v', voice_id: 'my-voice_1' });
    expect(del.json).toEqual({ error_code: 0, error_message: 'success', succeed: true, data: {} });
    expect((await callTool('voice_delete', { apiKey: 'mcp-v', voice_id: 'my-voice_1' })).isError).toBe(false);
    expect((await callTool('voice_list', { apiKey: 'mcp-v' })).json.data.list).toEqual([]);
  });

  it('failures follow the voice operations: 10001 arguments, 10003 key or capability', async () => {
    const noText = await callTool('voice_save', { apiKey: 'mcp-v', voice_id: 'v1', ref_audio: ref.ref_audio });
    expect(noText.json).toMatchObject({ error_code: 10001, error_message: expect.stringContaining('ref_text') });
    const badId = await callTool('voice_save', { apiKey: 'mcp-v', voice_id: 'Bad Id', ...ref });
    expect(badId.json).toMatchObject({ error_code: 10001, error_message: expect.stringContaining('voice_id') });
    expect((await callTool('voice_delete', { apiKey: 'mcp-v' })).json).toMatchObject({ error_code: 10001, error_message: expect.stringContaining('voice_id') });
    expect((await callTool('voice_delete', { apiKey: 'mcp-v', voice_id: '' })).json.error_code).toBe(10001);
    await ctl.putAccount('mcp-noclone', { capabilities: ['tts'] });
    for (const [name, args] of [
      ['voice_save', { voice_id: 'v', ...ref }],
      ['voice_list', {}],
      ['voice_delete', { voice_id: 'v' }],
    ] as const) {
      const r = await callTool(name, { apiKey: 'mcp-noclone', ...args });
      expect(r.json, name).toMatchObject({ error_code: 10003, error_message: expect.stringContaining('cloning capability') });
    }
    expect((await callTool('voice_list', {})).json.error_code).toBe(10003);
  });
});

describe('determinism', () => {
  it('same seed and same calls: same file name and same bytes on another instance', async () => {
    const other = await startTestEmulator();
    try {
      const args = { apiKey: 'mcp-det', voice_id: voice, generate_text: 'Same every time.', audio_format: 'pcm' };
      const a = await callTool('text_to_speech_generate', args);
      const res = await fetch(`${other.platformUrl}/mcp`, {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'text_to_speech_generate', arguments: args } }),
      });
      const b = JSON.parse(((await res.json()) as any).result.content[0].text);
      const path = (u: string) => new URL(u).pathname;
      expect(path(b.download_url)).toBe(path(a.json.download_url));
      expect(b.audio_base64).toBe(a.json.audio_base64);
    } finally {
      await other.close();
    }
  });
});

describe('journal', () => {
  it('records the account named by arguments.apiKey, with the key redacted from the body', async () => {
    await callTool('text_to_speech_generate', { apiKey: 'mcp-journal-key', voice_id: voice, generate_text: 'Logged.' });
    const { body } = await ctl.journal({ path: '/mcp' });
    const entry = body.entries[0];
    expect(entry.account).toEqual(expect.any(String));
    expect(entry.account).not.toContain('mcp-journal-key');
    expect(JSON.stringify(entry)).not.toContain('mcp-journal-key');
    const mine = await ctl.journal({ path: '/mcp', account: 'mcp-journal-key' });
    expect(mine.body.entries).toHaveLength(1);
  });
});
