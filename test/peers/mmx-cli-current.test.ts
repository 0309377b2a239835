/**
 * Peer: the official MiniMax CLI (`mmx-cli`) and its SDK on the parts of the current surface
 * (speech-current.md) that the emulator gains with the work of other areas:
 * - the formats pcmu_raw, pcmu_wav and opus, whole and streamed (E12-E15);
 * - `POST /v1/speech_to_text` in every response format, by word, with a language hint, and streamed (E1-E4);
 * - the file API as the CLI calls it: upload with the default purpose `retrieval`, list without
 *   `purpose`, delete by id without `purpose` (E18);
 * - the published system voice catalogue (E21).
 * Each case states the rule it needs; they pass once those parts are in. The cases that pass on the
 * present service are in mmx-cli.test.ts and mmx-sdk.test.ts.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MiniMaxSDK } from 'mmx-cli/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffmpegPcm16, ffprobe } from '../helpers/ffprobe.js';
import { mmx, type MmxOptions } from './mmx.js';

const KEY = 'mmx-current-peer-key';
const TEXT = 'Hello from the command line.';
/** Two sentences of nine words, spoken by the emulator and then transcribed back. */
const SPOKEN = 'The quick brown fox. It jumps over the dog.';
const WORDS = ['The', 'quick', 'brown', 'fox', 'It', 'jumps', 'over', 'the', 'dog'];
const { emu, ctl } = emulatorForFile({ plane: 'speech' });
let home: string;
let sdk: MiniMaxSDK;
/** The emulator's own speech of SPOKEN (mp3), made once, and its decoded length. */
let speech: { path: string; ms: number };

const run = (args: string[], extra: Partial<MmxOptions> = {}) => mmx(args, { baseUrl: emu.speechUrl, key: KEY, home, ...extra });

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'mmx-current-peer-'));
  process.env.MMX_CONFIG_DIR = join(home, '.mmx-sdk');
  sdk = new MiniMaxSDK({ apiKey: KEY, baseUrl: emu.speechUrl, region: 'global' });
  const made = await run(['speech', 'synthesize', '--text', SPOKEN, '--out', 'spoken.mp3']);
  expect(made.code, made.stderr).toBe(0);
  const path = join(home, 'spoken.mp3');
  speech = { path, ms: (await ffprobe(path)).durationMs };
});
afterAll(async () => {
  delete process.env.MMX_CONFIG_DIR;
  await rm(home, { recursive: true, force: true });
});

/** The new formats with mmx's own default rates (speech-current.md 4.6) and how ffprobe reads them. */
const NEW_FORMATS: Record<string, { rate: number; codec: string; probeRate: number; inputArgs?: string[]; ext: string }> = {
  pcmu_raw: { rate: 8000, codec: 'pcm_mulaw', probeRate: 8000, inputArgs: ['-f', 'mulaw', '-ar', '8000', '-ac', '1'], ext: 'raw' },
  pcmu_wav: { rate: 8000, codec: 'pcm_mulaw', probeRate: 8000, ext: 'wav' },
  // ffmpeg always decodes Opus at 48 kHz (speech-current.md 4.4); extra_info keeps the requested rate (E15).
  opus: { rate: 24000, codec: 'opus', probeRate: 48000, ext: 'ogg' },
};

describe('mmx synthesize in pcmu_raw, pcmu_wav and opus (E12-E15)', () => {
  for (const [format, want] of Object.entries(NEW_FORMATS)) {
    it(`--format ${format}: sent at ${want.rate} Hz; the saved file decodes to the length and size reported`, async () => {
      const out = `whole-${format}.${want.ext}`;
      const r = await run(['speech', 'synthesize', '--text', TEXT, '--format', format, '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      expect((await ctl.lastEntry({ path: '/v1/t2a_v2' })).request.body.audio_setting).toEqual({ format, sample_rate: want.rate, bitrate: 128000, channel: 1 });
      expect(r.json).toMatchObject({ saved: out, sample_rate: want.rate });
      const file = join(home, out);
      expect((await stat(file)).size).toBe(r.json.size_bytes);
      const p = await ffprobe(file, { inputArgs: want.inputArgs });
      expect(p).toMatchObject({ codec: want.codec, sampleRate: want.probeRate, channels: 1 });
      const decoded = await ffmpegPcm16(file, { ext: want.ext, rate: 8000 }).catch(() => null);
      if (format !== 'pcmu_raw') expect(Math.abs(decoded!.length / 16 - r.json.duration_ms)).toBeLessThanOrEqual(2);
      else expect(Math.abs(r.json.size_bytes / 8 - r.json.duration_ms)).toBeLessThanOrEqual(1);
    });

    it(`--format ${format} --stream: stdout is the chunks then the aggregate, and the chunks joined are the whole file`, async () => {
      const r = await run(['speech', 'synthesize', '--text', TEXT, '--format', format, '--stream'], { rawOutput: true });
      expect(r.code, r.stderr).toBe(0);
      const entry = await ctl.lastEntry({ path: '/v1/t2a_v2' });
      expect(entry.request.body).toMatchObject({ stream: true, audio_setting: { format, sample_rate: want.rate } });
      // The chunks joined are the whole file (E13, E14), and the final chunk repeats it as the aggregate.
      const half = r.stdout.length / 2;
      expect(Number.isInteger(half)).toBe(true);
      const whole = r.stdout.subarray(half);
      expect(r.stdout.subarray(0, half).equals(whole)).toBe(true);
      expect(entry.answer_audio).toMatchObject({ format, bytes: half });
      const p = await ffprobe(whole, { ext: want.ext, inputArgs: want.inputArgs });
      expect(p).toMatchObject({ codec: want.codec, sampleRate: want.probeRate, channels: 1 });
    });
  }

  it('SDK: opus at the SDK default of 32000 Hz is refused naming the rates opus takes; at 24000 it decodes', async () => {
    await expect(sdk.speech.synthesize({ text: TEXT, audio_setting: { format: 'opus' } })).rejects.toThrow(
      /sample_rate 32000 is not supported for opus; use 8000, 16000 or 24000/,
    );
    const res = await sdk.speech.synthesize({ text: TEXT, audio_setting: { format: 'opus', sample_rate: 24000 } });
    expect(res.extra_info).toMatchObject({ audio_sample_rate: 24000 });
    const bytes = Buffer.from(res.data.audio!, 'hex');
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('OggS');
    const pcm = await ffmpegPcm16(bytes, { ext: 'ogg', rate: 48000 });
    expect(Math.abs(pcm.length / 96 - res.extra_info!.audio_length!)).toBeLessThanOrEqual(1);
  });

  it('SDK: pcmu_wav at the SDK default of 32000 Hz comes back at 8000 Hz', async () => {
    const res = await sdk.speech.synthesize({ text: TEXT, audio_setting: { format: 'pcmu_wav' } });
    expect(res.extra_info).toMatchObject({ audio_sample_rate: 8000 });
    const path = sdk.speech.save(res, join(home, 'sdk.wav'), 'wav');
    expect(await ffprobe(path)).toMatchObject({ codec: 'pcm_mulaw', sampleRate: 8000, channels: 1 });
  });
});

describe('mmx speech transcribe (E1-E4)', () => {
  it('json (default): the text the emulator spoke and the audio duration', async () => {
    const r = await run(['speech', 'transcribe', '--file', 'spoken.mp3']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.text).toBe(SPOKEN);
    expect(Math.abs(r.json.duration * 1000 - speech.ms)).toBeLessThanOrEqual(60);
    expect(r.json.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const entry = await ctl.lastEntry({ path: '/v1/speech_to_text' });
    expect(entry.status).toBe(200);
    expect(entry.request.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(entry.request.headers).not.toHaveProperty('language');
  });

  it('verbose_json: one segment per sentence from one speaker; by word with --timestamp-level word', async () => {
    const r = await run(['speech', 'transcribe', '--file', 'spoken.mp3', '--response-format', 'verbose_json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ text: SPOKEN, n_speakers: 1 });
    expect(r.json.segments.map((s: any) => [s.id, s.speaker, s.text])).toEqual([
      [0, 'S1', 'The quick brown fox.'],
      [1, 'S1', 'It jumps over the dog.'],
    ]);
    expect(r.json.segments[1].end * 1000).toBeLessThanOrEqual(speech.ms + 60);

    const w = await run(['speech', 'transcribe', '--file', 'spoken.mp3', '--response-format', 'verbose_json', '--timestamp-level', 'word']);
    expect(w.code, w.stderr).toBe(0);
    expect(w.json.segments.map((s: any) => s.text)).toEqual(WORDS);
    const starts = w.json.segments.map((s: any) => s.start);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
  });

  it('srt and vtt: the documents come out verbatim, on stdout and with --out', async () => {
    const srt = await run(['speech', 'transcribe', '--file', 'spoken.mp3', '--response-format', 'srt'], { rawOutput: true });
    expect(srt.code, srt.stderr).toBe(0);
    expect(srt.out).toMatch(
      /^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\nThe quick brown fox\.\n\n2\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\nIt jumps over the dog\.\n/,
    );
    expect((await ctl.lastEntry({ path: '/v1/speech_to_text' })).response.content_type).toMatch(/^text\/plain/);

    const vtt = await run(['speech', 'transcribe', '--file', 'spoken.mp3', '--response-format', 'vtt', '--out', 'spoken.vtt']);
    expect(vtt.code, vtt.stderr).toBe(0);
    const doc = await readFile(join(home, 'spoken.vtt'), 'utf8');
    expect(doc).toMatch(/^WEBVTT\n\n\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}\nThe quick brown fox\.\n/);
    expect((await ctl.lastEntry({ path: '/v1/speech_to_text' })).response.content_type).toMatch(/^text\/vtt/);
  });

  it('--language en travels as the language header', async () => {
    const r = await run(['speech', 'transcribe', '--file', 'spoken.mp3', '--language', 'en']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.text).toBe(SPOKEN);
    expect((await ctl.lastEntry({ path: '/v1/speech_to_text' })).request.headers.language).toBe('en');
  });

  it('--stream: the deltas make the text, the final event the duration, with no warning', async () => {
    const asJson = await run(['speech', 'transcribe', '--file', 'spoken.mp3', '--stream']);
    expect(asJson.code, asJson.stderr).toBe(0);
    expect(asJson.stderr).not.toContain('[warning]');
    expect(asJson.json.text).toBe(SPOKEN);
    expect(Math.abs(asJson.json.duration * 1000 - speech.ms)).toBeLessThanOrEqual(60);
    expect((await ctl.lastEntry({ path: '/v1/speech_to_text' })).response.content_type).toMatch(/^text\/event-stream/);

    const asText = await run(['speech', 'transcribe', '--file', 'spoken.mp3', '--stream', '--output', 'text'], { rawOutput: true });
    expect(asText.code, asText.stderr).toBe(0);
    expect(asText.stderr).not.toContain('[warning]');
    expect(asText.out).toBe(`${SPOKEN}\n`);
  });

  it('a file that is not audio is refused with HTTP 400 and the unsupported-format message', async () => {
    await writeFile(join(home, 'notes.txt'), 'these are not sounds');
    const r = await run(['speech', 'transcribe', '--file', 'notes.txt']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"message": "API error: invalid params, unsupported audio format (2013) (HTTP 400)"');
  });

  it('SDK: every response format, from a path and from a Blob, and the stream of events', async () => {
    const json = await sdk.speech.transcribe({ file: speech.path });
    expect(json.text).toBe(SPOKEN);
    const verbose = await sdk.speech.transcribe({ file: speech.path, response_format: 'verbose_json', timestamp_level: 'word' });
    expect(verbose.segments!.map((s) => s.text)).toEqual(WORDS);
    const blob = new Blob([await readFile(speech.path)]);
    expect(await sdk.speech.transcribe({ file: blob, response_format: 'srt' })).toMatch(/^1\n00:00:00,\d{3} --> /);
    expect(await sdk.speech.transcribe({ file: blob, response_format: 'vtt', language: 'en' })).toMatch(/^WEBVTT\n\n/);

    const events = [];
    for await (const ev of await sdk.speech.transcribe({ file: speech.path, stream: true })) events.push(ev);
    expect(events.map((e) => e.index)).toEqual(events.map((_, i) => i));
    const last = events.at(-1)!;
    expect(last).toMatchObject({ finish: true, delta: '' });
    expect(Math.abs(last.duration! * 1000 - speech.ms)).toBeLessThanOrEqual(60);
    expect(events.map((e) => e.delta).join('')).toBe(SPOKEN);
  });
});

describe('mmx file as the CLI calls it (E18)', () => {
  it('upload with the default purpose, list without purpose, delete by id without purpose', async () => {
    const notes = '# Notes\nkept for retrieval\n';
    await writeFile(join(home, 'notes.md'), notes);
    const up = await run(['file', 'upload', '--file', 'notes.md']);
    expect(up.code, up.stderr).toBe(0);
    expect(up.json).toMatchObject({ filename: 'notes.md', purpose: 'retrieval', bytes: Buffer.byteLength(notes) });
    const clone = await run(['file', 'upload', '--file', 'spoken.mp3', '--purpose', 'voice_clone']);
    expect(clone.code, clone.stderr).toBe(0);

    const listed = await run(['file', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json.base_resp.status_code).toBe(0);
    const ids = (listed.json.files as { file_id: number }[]).map((f) => f.file_id);
    expect(ids.indexOf(clone.json.file_id)).toBeLessThan(ids.indexOf(up.json.file_id)); // newest first

    const del = await run(['file', 'delete', '--file-id', String(up.json.file_id)]);
    expect(del.code, del.stderr).toBe(0);
    expect(del.json).toEqual({ file_id: up.json.file_id, deleted: true });
    expect((await ctl.lastEntry({ path: '/v1/files/delete' })).request.body).toEqual({ file_id: up.json.file_id });
    const after = await run(['file', 'list']);
    expect((after.json.files as { file_id: number }[]).map((f) => f.file_id)).not.toContain(up.json.file_id);
  });

  it('a retrieval file is refused as a clone source, naming file_id', async () => {
    await writeFile(join(home, 'voice.txt'), 'not a voice');
    const up = await run(['file', 'upload', '--file', 'voice.txt']);
    expect(up.code, up.stderr).toBe(0);
    const res = await fetch(`${emu.speechUrl}/v1/voice_clone`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ file_id: up.json.file_id, voice_id: 'MmxCurrentClone01' }),
    });
    const body = (await res.json()) as { base_resp: { status_code: number; status_msg: string } };
    expect(body.base_resp.status_code).toBe(2013);
    expect(body.base_resp.status_msg).toContain('file_id');
  });

  it('SDK: upload with its default purpose, list, delete', async () => {
    await writeFile(join(home, 'sdk-notes.md'), 'sdk notes\n');
    const up = await sdk.file.upload(join(home, 'sdk-notes.md'));
    expect(up.file).toMatchObject({ purpose: 'retrieval', filename: 'sdk-notes.md' });
    const listed = await sdk.file.list();
    expect(listed.files.map((f) => f.file_id)).toContain(up.file.file_id);
    const del = await sdk.file.delete(up.file.file_id);
    expect(del.file_id).toBe(up.file.file_id);
    expect((await sdk.file.list()).files.map((f) => f.file_id)).not.toContain(up.file.file_id);
  });
});

describe('mmx speech voices with the published catalogue (E21)', () => {
  it('lists published ids verbatim and filters them by the language prefix', async () => {
    const all = await run(['speech', 'voices']);
    expect(all.code, all.stderr).toBe(0);
    for (const id of [
      'Chinese (Mandarin)_Reliable_Executive',
      'Cantonese_ProfessionalHost（F)',
      'Santa_Claus',
      'French_Female_News Anchor',
      'greek_male_1a_v1',
    ])
      expect(all.json).toContain(id);
    const cantonese = await run(['speech', 'voices', '--language', 'cantonese']);
    const ids = (cantonese.json as { voice_id: string }[]).map((v) => v.voice_id);
    expect(ids).toContain('Cantonese_GentleLady');
    expect(ids.every((id) => id.startsWith('Cantonese_'))).toBe(true);
  });

  it('a published voice with a space in its id synthesizes', async () => {
    const r = await run(['speech', 'synthesize', '--text', 'Bonjour à tous.', '--voice', 'French_Female_News Anchor', '--out', 'fr.mp3']);
    expect(r.code, r.stderr).toBe(0);
    const p = await ffprobe(join(home, 'fr.mp3'));
    expect(Math.abs(p.durationMs - r.json.duration_ms)).toBeLessThanOrEqual(60);
  });
});
