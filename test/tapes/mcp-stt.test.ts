/**
 * `/mcp` and speech to text on tape, recorded through the emulator from an upstream emulator (a voice only it knows,
 * speech only it has heard), then replayed strictly with the upstream gone:
 * - a JSON-RPC `tools/call` of `text_to_speech_generate` (the key travels in `arguments.apiKey`): the answer's JSON-RPC
 *   frame as recorded with the client's own id, its audio (a file beside the tape) byte for byte, and its download link
 *   served by the replaying emulator;
 * - the platform's `POST /v1/speech-to-text` (PCM in Base64) and the speech service's `POST /v1/speech_to_text`
 *   (a WAV file in a multipart form): the client's audio is kept as a file of its decoded bytes and matched by them.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { spokenPcm } from '../platform/conversation/conversation-helpers.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { REAL_KEY, startRecorder, startReplayer, startUpstream, tapeDir, UPSTREAM_PLATFORM_VOICE } from './helpers.js';
import { pcm16Wav } from '../helpers/audio.js';

const HEARD = 'Hello from the recorded service. It heard this once.';

function mcpCall(base: string, key: string, id: number | string = 7) {
  const body = {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'text_to_speech_generate', arguments: { apiKey: key, voice_id: UPSTREAM_PLATFORM_VOICE, generate_text: 'A tool call on tape.' } },
  };
  return fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** A JSON-RPC batch of two tools/list calls with these ids. */
function mcpBatch(base: string, ids: (number | string)[]) {
  const body = ids.map((id) => ({ jsonrpc: '2.0', id, method: 'tools/list' }));
  return fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function mcpResult(res: Response): Promise<{ status: number; body: any; tool: any }> {
  const body = (await res.json()) as any;
  return { status: res.status, body, tool: JSON.parse(body.result.content[0].text) };
}

const platformStt = (base: string, key: string, pcm: Buffer) =>
  fetch(`${base}/v1/speech-to-text`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ audio_data: pcm.toString('base64'), audio_format: 'pcm16', language: 'en' }),
  });

/** The PCM in a 16-bit mono WAV (test/helpers/audio.ts writes the header). */
function wavOf(pcm: Buffer, rate = 16_000): Buffer {
  const wav = pcm16Wav(pcm.length, rate);
  pcm.copy(wav, 44);
  return wav;
}

function speechStt(base: string, key: string, wav: Buffer) {
  const form = new FormData();
  form.append('model', 'asr-1.0');
  form.append('file', new Blob([wav], { type: 'audio/wav' }), 'heard.wav');
  return fetch(`${base}/v1/speech_to_text`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
}

/** The same audio with one sample changed: as long, but not the audio recorded. */
function altered(pcm: Buffer): Buffer {
  const copy = Buffer.from(pcm);
  copy.writeInt16LE(copy.readInt16LE(2000) ^ 0x100, 2000);
  return copy;
}

describe('tapes: /mcp and speech to text, recorded then replayed offline', () => {
  const dir = tapeDir();
  let pcm: Buffer;
  const recorded: Record<string, any> = {};
  let replayer: RunningEmulator;
  let upstreamPlatform: string;

  beforeAll(async () => {
    const upstream = await startUpstream();
    upstreamPlatform = upstream.emu.platformUrl;
    // Speech the upstream made, so only it knows what was said (the replaying emulator's own rules do not).
    pcm = (await spokenPcm(upstream.emu.emulator, HEARD)).pcm;
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      recorded.mcp = await mcpResult(await mcpCall(recorder.platformUrl, REAL_KEY));
      recorded.mcpDownload = Buffer.from(await (await fetch(recorded.mcp.tool.download_url)).arrayBuffer());
      recorded.batch = await (await mcpBatch(recorder.platformUrl, [1, 2])).json();
      const p = await platformStt(recorder.platformUrl, REAL_KEY, pcm);
      recorded.platformStt = { status: p.status, body: await p.json() };
      const s = await speechStt(recorder.speechUrl, REAL_KEY, wavOf(pcm));
      recorded.speechStt = { status: s.status, body: await s.json() };
    } finally {
      await recorder.close();
      await upstream.close();
    }
    replayer = await startReplayer(dir, { replayStrict: true });
  }, 90_000);

  afterAll(async () => {
    await replayer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the recording holds what the upstream answered, and no file of the folder holds the key', () => {
    expect(recorded.mcp.status).toBe(200);
    expect(recorded.mcp.body.result.isError).toBe(false);
    expect(recorded.mcp.tool.download_url.startsWith(upstreamPlatform)).toBe(true);
    expect(Buffer.from(recorded.mcp.tool.audio_base64, 'base64').equals(recorded.mcpDownload)).toBe(true);
    expect(recorded.platformStt.status).toBe(200);
    expect(recorded.platformStt.body.text).toContain('Hello from the recorded service');
    expect(recorded.speechStt.status).toBe(200);
    expect(recorded.speechStt.body.text).toContain('Hello from the recorded service');
    const files = [...readdirSync(dir).map((f) => join(dir, f)), ...readdirSync(join(dir, 'files')).map((f) => join(dir, 'files', f))].filter(
      (f) => !f.endsWith('files'),
    );
    for (const f of files) expect(readFileSync(f).includes(REAL_KEY), f).toBe(false);
  });

  it("/mcp: the tool result's JSON text is kept as its value, its Base64 audio as a file of the decoded bytes", () => {
    const tape = readdirSync(dir).find((f) => f.startsWith('platform-post-mcp-'))!;
    const text = readFileSync(join(dir, tape), 'utf8');
    expect(text).not.toContain(recorded.mcp.tool.audio_base64.slice(0, 200));
    const result = JSON.parse(text).answer.body.json.result.content[0].text.$json;
    expect(result).toMatchObject({ duration_ms: recorded.mcp.tool.duration_ms, audio_base64: { $file: expect.stringMatching(/\.wav$/), encoding: 'base64' } });
    expect(readFileSync(join(dir, 'files', result.audio_base64.$file)).equals(recorded.mcpDownload)).toBe(true);
  });

  it('/mcp tools/call: another key matches (the key is never part of a match); the frame as recorded, the audio byte for byte, the link served here and its expiry fresh', async () => {
    // Replayed ten days after it was recorded (on the emulator clock): the link's expiry is the new link's.
    await replayer.control.clock.advance(10 * 86_400_000);
    const before = (await replayer.control.clock.read()).now_ms;
    const res = await mcpCall(replayer.platformUrl, 'ci-key');
    const after = (await replayer.control.clock.read()).now_ms;
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const replayed = await mcpResult(res);
    expect(replayed.status).toBe(200);
    expect(Object.keys(replayed.body)).toEqual(['jsonrpc', 'id', 'result']);
    expect(replayed.body).toMatchObject({ jsonrpc: '2.0', id: 7, result: { isError: false } });
    expect(replayed.tool.audio_base64).toBe(recorded.mcp.tool.audio_base64);
    expect(replayed.tool.duration_ms).toBe(recorded.mcp.tool.duration_ms);
    // The recorded link expired with the upstream: the answer names the replaying emulator's, serving the same bytes.
    expect(replayed.tool.download_url.startsWith(replayer.platformUrl)).toBe(true);
    expect(replayed.tool.download_expires_at).toBeGreaterThanOrEqual(Math.floor(before / 1000) + 86_400);
    expect(replayed.tool.download_expires_at).toBeLessThanOrEqual(Math.floor(after / 1000) + 86_400);
    expect(replayed.tool.download_expires_at - recorded.mcp.tool.download_expires_at).toBeGreaterThan(9 * 86_400);
    const download = await fetch(replayed.tool.download_url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(recorded.mcpDownload)).toBe(true);
    const entry = (await replayer.control.journal.list({ path: '/mcp', limit: 1 }))[0]!;
    expect(entry.tape?.mode).toBe('replayed');
  });

  it('/mcp batch: the ids of its messages are never part of a match, and each answer repeats the id its message sent', async () => {
    expect(recorded.batch.map((m: any) => m.id)).toEqual([1, 2]);
    const res = await mcpBatch(replayer.platformUrl, ['list-a', 'list-b']);
    expect(res.status).toBe(200);
    const replayed = (await res.json()) as any[];
    expect(replayed.map((m) => m.id)).toEqual(['list-a', 'list-b']);
    expect(replayed.map((m) => m.result)).toEqual(recorded.batch.map((m: any) => m.result));
  });

  it('/mcp: the JSON-RPC id is never part of a match, and the answer repeats the id the client sent', async () => {
    for (const id of ['call-b', 0, 42]) {
      const replayed = await mcpResult(await mcpCall(replayer.platformUrl, 'ci-key', id));
      expect(replayed.body.id).toBe(id);
      expect(replayed.tool.audio_base64).toBe(recorded.mcp.tool.audio_base64);
    }
  });

  it('/mcp: unloaded, the emulator answers the same call by its own rules (it does not know the voice)', async () => {
    const other = await startReplayer(dir);
    try {
      await other.control.tapesStopReplay();
      const own = await mcpResult(await mcpCall(other.platformUrl, 'ci-key'));
      expect(own.body.result.isError).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('tapes check reads inside the tool result: an emulator that does not know the voice differs in the fields of its JSON text', async () => {
    const checked = await startTestEmulator();
    try {
      const report = await checked.control.tapesCheck(dir);
      const mcp = report.results.find((r) => r.operation === 'platform POST /mcp')!;
      const inText = (field: string) => `result.content[].text(json).${field}`;
      // The tool's failure is read from its text: the code of the voice operation's envelope.
      expect(mcp.differences).toContainEqual({ what: 'code', recorded: null, emulator: expect.stringMatching(/^\d+$/) });
      expect(mcp.differences).toContainEqual({ what: 'field', where: inText('audio_base64'), recorded: 'string', emulator: 'absent' });
      expect(mcp.differences).toContainEqual({ what: 'field', where: inText('download_url'), recorded: 'string', emulator: 'absent' });
      expect(mcp.differences).toContainEqual({ what: 'field', where: inText('error_code'), recorded: 'absent', emulator: 'number' });
      // The JSON-RPC frame itself is the same.
      expect(mcp.differences.filter((d) => d.what === 'field' && !d.where!.startsWith('result.content[].text(json)'))).toEqual([]);
      // Speech to text: the emulator's own answer to audio it never heard has the recorded answer's fields.
      expect(report.results.find((r) => r.operation === 'platform POST /v1/speech-to-text')!.differences.filter((d) => d.what === 'field')).toEqual([]);
    } finally {
      await checked.close();
    }
  });

  it('platform speech to text: the audio is a file of its decoded bytes in the tape, the same audio is answered as recorded, other audio is a miss', async () => {
    const tape = readdirSync(dir).find((f) => f.startsWith('platform-post-v1-speech-to-text-'))!;
    const audioRef = JSON.parse(readFileSync(join(dir, tape), 'utf8')).request.body.json.audio_data;
    expect(audioRef).toMatchObject({ $file: expect.stringMatching(/^[0-9a-f]{64}\./), encoding: 'base64' });
    expect(readFileSync(join(dir, 'files', audioRef.$file)).equals(pcm)).toBe(true);

    const same = await platformStt(replayer.platformUrl, 'ci-key', pcm);
    expect(same.status).toBe(200);
    expect(await same.json()).toEqual(recorded.platformStt.body);
    const other = await platformStt(replayer.platformUrl, 'ci-key', altered(pcm));
    expect(other.status).toBe(404);
    const miss = (await other.json()) as any;
    expect(miss.error_message).toBe(`replay: no tape matches POST /v1/speech-to-text; nearest: ${tape.slice(0, -5)} (differs in body.audio_data)`);
  });

  it('speech service speech to text (multipart): the WAV is matched by its bytes; the transcript is the recorded one with a fresh trace id', async () => {
    const same = await speechStt(replayer.speechUrl, 'ci-key', wavOf(pcm));
    expect(same.status).toBe(200);
    const body = (await same.json()) as any;
    expect(body).toEqual({ ...recorded.speechStt.body, trace_id: expect.any(String) });
    expect(body.trace_id).not.toBe(recorded.speechStt.body.trace_id);
    const other = await speechStt(replayer.speechUrl, 'ci-key', wavOf(altered(pcm)));
    expect(other.status).toBe(404);
  });

  it('not strict, audio no tape holds falls through to the emulator, which reads the body the tapes read first (multipart and JSON)', async () => {
    const lenient = await startReplayer(dir);
    try {
      const speech = await speechStt(lenient.speechUrl, 'ci-key', wavOf(altered(pcm)));
      expect(speech.status).toBe(200);
      expect(((await speech.json()) as any).duration).toBeCloseTo(recorded.speechStt.body.duration, 1);
      const platform = await platformStt(lenient.platformUrl, 'ci-key', altered(pcm));
      expect(platform.status).toBe(200);
      const entries = await lenient.control.journal.list({ limit: 2 });
      expect(entries.map((e) => e.tape?.mode)).toEqual(['missed', 'missed']);
    } finally {
      await lenient.close();
    }
  });
});
