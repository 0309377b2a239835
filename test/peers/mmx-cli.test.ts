/**
 * Peer: the official MiniMax CLI (npm `mmx-cli`), run unmodified as its own process and pointed at the
 * speech listener by `--base-url` alone (see ./mmx.ts for how it is kept off the network and out of
 * the real home). What 1.0.27 sends, read from its bundle: `POST /v1/t2a_v2` with model
 * `speech-2.8-hd`, voice `English_expressive_narrator`, `audio_setting` {format, sample_rate 32000,
 * bitrate 128000, channel 1} on every format, `output_format: "hex"` and `stream` always present;
 * `--subtitles` as `subtitle_enable` (the link is then fetched with no credentials, and must hold a
 * flat JSON array); `--pronunciation` as `{tone: [...]}`; `--stream` writes every chunk's audio to
 * stdout, the final chunk's aggregate included; `speech voices` is `POST /v1/get_voice`
 * `{voice_type: "system"}`; `file upload` is multipart `file` first, then `purpose`.
 * Cases that need parts of the service not built yet are in mmx-cli-current.test.ts.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { ffmpegPcm16, ffprobe } from '../helpers/ffprobe.js';
import { mmx, type MmxOptions } from './mmx.js';

const KEY = 'mmx-peer-key';
const TEXT = 'Hello from the command line.';
const { emu, ctl } = emulatorForFile({ plane: 'speech' });
let home: string;

const run = (args: string[], extra: Partial<MmxOptions> = {}) => mmx(args, { baseUrl: emu.speechUrl, key: KEY, home, ...extra });

/** The newest journal entry of a path. */
/** The audio the emulator's answer carried, as the journal keeps it (raw PCM is served inside a WAV: its tail is the audio). */
async function answerAudio(entry: any): Promise<Buffer> {
  const res = await fetch(`${emu.speechUrl}${entry.answer_audio.url}`);
  expect(res.status).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  return bytes.subarray(bytes.length - entry.answer_audio.bytes);
}

const rawPcm = (rate: number, channels = 1) => ({ inputArgs: ['-f', 's16le', '-ar', String(rate), '-ac', String(channels)] });

/** What ffprobe must find for each format mmx writes with its defaults (32 kHz mono). */
const WHOLE: Record<string, { codec: string; probe?: { inputArgs: string[] }; slackMs: number }> = {
  mp3: { codec: 'mp3', slackMs: 60 },
  pcm: { codec: 'pcm_s16le', probe: rawPcm(32000), slackMs: 1 },
  flac: { codec: 'flac', slackMs: 1 },
  wav: { codec: 'pcm_s16le', slackMs: 1 },
};

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'mmx-peer-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('mmx speech synthesize against the speech listener', () => {
  for (const [format, want] of Object.entries(WHOLE)) {
    it(`--format ${format}: the file it saves decodes to the length and size the answer reported`, async () => {
      const out = `whole.${format}`;
      const r = await run(['speech', 'synthesize', '--text', TEXT, '--format', format, '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ saved: out, sample_rate: 32000 });
      const file = join(home, out);
      expect((await stat(file)).size).toBe(r.json.size_bytes);
      const p = await ffprobe(file, want.probe);
      expect(p).toMatchObject({ codec: want.codec, sampleRate: 32000, channels: 1 });
      expect(Math.abs(p.durationMs - r.json.duration_ms)).toBeLessThanOrEqual(want.slackMs);

      const entry = await ctl.lastEntry({ path: '/v1/t2a_v2' });
      expect(entry.status).toBe(200);
      expect(entry.request.headers['user-agent']).toMatch(/^mmx-cli\//);
      expect(entry.request.body).toEqual({
        model: 'speech-2.8-hd',
        text: TEXT,
        voice_setting: { voice_id: 'English_expressive_narrator' },
        audio_setting: { format, sample_rate: 32000, bitrate: 128000, channel: 1 },
        output_format: 'hex',
        stream: false,
      });
    });
  }

  it('model, voice, speed, volume, pitch, emotion, language, rate, bitrate and channels reach the service and the file', async () => {
    const args = ['--model', 'speech-02-hd', '--voice', 'female-shaonv', '--speed', '1.5', '--volume', '2', '--pitch', '3', '--emotion', 'happy'];
    const r = await run([
      'speech',
      'synthesize',
      '--text',
      TEXT,
      ...args,
      '--language',
      'English',
      '--sample-rate',
      '16000',
      '--bitrate',
      '64000',
      '--channels',
      '2',
      '--out',
      'flags.mp3',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect((await ctl.lastEntry({ path: '/v1/t2a_v2' })).request.body).toMatchObject({
      model: 'speech-02-hd',
      voice_setting: { voice_id: 'female-shaonv', speed: 1.5, vol: 2, pitch: 3, emotion: 'happy' },
      audio_setting: { format: 'mp3', sample_rate: 16000, bitrate: 64000, channel: 2 },
      language_boost: 'English',
    });
    const p = await ffprobe(join(home, 'flags.mp3'));
    expect(p).toMatchObject({ codec: 'mp3', sampleRate: 16000, channels: 2, bitRate: 64000 });
    expect(Math.abs(p.durationMs - r.json.duration_ms)).toBeLessThanOrEqual(60);
  });

  it('--subtitles: the link it downloads without credentials becomes an SRT whose cues cover the text within the audio', async () => {
    const r = await run(['speech', 'synthesize', '--text', 'First sentence here. And a second one.', '--subtitles', '--out', 'subs.mp3']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('Warning');
    expect(r.out).toContain('"subtitles": "subs.srt"');
    const entry = await ctl.lastEntry({ path: '/v1/t2a_v2' });
    expect(entry.request.body).toMatchObject({ subtitle_enable: true });
    expect(entry.request.body).not.toHaveProperty('subtitle_type');

    const srt = await readFile(join(home, 'subs.srt'), 'utf8');
    const cues = srt.split('\n\n').map((c) => c.split('\n'));
    expect(cues.length).toBeGreaterThanOrEqual(1);
    cues.forEach((c, i) => {
      expect(c[0]).toBe(String(i + 1));
      expect(c[1]).toMatch(/^\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}$/);
    });
    expect(cues.map((c) => c[2]).join(' ')).toBe('First sentence here. And a second one.');
    const ms = (t: string) => {
      const [h, m, s] = t.split(':');
      return (Number(h) * 3600 + Number(m) * 60 + Number(s!.replace(',', '.'))) * 1000;
    };
    const lastEnd = ms(cues.at(-1)![1]!.split(' --> ')[1]!);
    const p = await ffprobe(join(home, 'subs.mp3'));
    expect(lastEnd).toBeGreaterThan(0);
    expect(lastEnd).toBeLessThanOrEqual(p.durationMs + 60);
  });

  it('--pronunciation (repeatable) is sent as {tone: [...]} and is spoken: the replaced text makes longer audio', async () => {
    const plain = await run(['speech', 'synthesize', '--text', 'omg, the API.', '--out', 'plain.mp3']);
    const spoken = await run([
      'speech',
      'synthesize',
      '--text',
      'omg, the API.',
      '--pronunciation',
      'omg/oh my god',
      '--pronunciation',
      'API/application programming interface',
      '--out',
      'pron.mp3',
    ]);
    expect(spoken.code, spoken.stderr).toBe(0);
    expect((await ctl.lastEntry({ path: '/v1/t2a_v2' })).request.body.pronunciation_dict).toEqual({
      tone: ['omg/oh my god', 'API/application programming interface'],
    });
    expect(spoken.json.duration_ms).toBeGreaterThan(plain.json.duration_ms + 500);
    const p = await ffprobe(join(home, 'pron.mp3'));
    expect(Math.abs(p.durationMs - spoken.json.duration_ms)).toBeLessThanOrEqual(60);
  });
});

describe('mmx speech synthesize --stream', () => {
  for (const format of ['mp3', 'pcm', 'flac']) {
    it(`--format ${format}: stdout is the streamed chunks, then the final chunk's whole file, and both decode to the same audio`, async () => {
      const r = await run(['speech', 'synthesize', '--text', TEXT, '--format', format, '--stream'], { rawOutput: true });
      expect(r.code, r.stderr).toBe(0);
      const entry = await ctl.lastEntry({ path: '/v1/t2a_v2' });
      expect(entry.request.body).toMatchObject({ stream: true, audio_setting: { format, sample_rate: 32000 } });
      expect(entry.request.body).not.toHaveProperty('stream_options');
      expect(entry.response.content_type).toContain('text/event-stream');
      // mmx does not ask to leave the aggregate out, so the last chunk repeats the audio as one file.
      const whole = await answerAudio(entry);
      expect(entry.answer_audio).toMatchObject({ format, sample_rate: 32000, channels: 1 });
      expect(r.stdout.subarray(r.stdout.length - whole.length).equals(whole)).toBe(true);
      const chunks = r.stdout.subarray(0, r.stdout.length - whole.length);
      if (format === 'pcm') {
        expect(chunks.equals(whole)).toBe(true);
        const p = await ffprobe(whole, rawPcm(32000));
        expect(Math.abs(p.durationMs - (whole.length / 64000) * 1000)).toBeLessThanOrEqual(1);
        return;
      }
      const [a, b] = await Promise.all([ffmpegPcm16(chunks, { ext: format, rate: 32000 }), ffmpegPcm16(whole, { ext: format, rate: 32000 })]);
      expect(a.length).toBeGreaterThan(32000);
      expect(Math.abs(a.length - b.length) / 64).toBeLessThanOrEqual(60);
      expect(await ffprobe(chunks, { ext: format })).toMatchObject({ codec: format, sampleRate: 32000, channels: 1 });
    });
  }

  it('--stream with --subtitles and --pronunciation: both are sent, and stdout is still the audio then its aggregate', async () => {
    const r = await run(['speech', 'synthesize', '--text', 'omg, it streams.', '--stream', '--subtitles', '--pronunciation', 'omg/oh my god'], {
      rawOutput: true,
    });
    expect(r.code, r.stderr).toBe(0);
    const entry = await ctl.lastEntry({ path: '/v1/t2a_v2' });
    expect(entry.request.body).toMatchObject({ stream: true, subtitle_enable: true, pronunciation_dict: { tone: ['omg/oh my god'] } });
    const whole = await answerAudio(entry);
    expect(r.stdout.subarray(r.stdout.length - whole.length).equals(whole)).toBe(true);
    const chunks = r.stdout.subarray(0, r.stdout.length - whole.length);
    const [a, b] = await Promise.all([ffmpegPcm16(chunks, { ext: 'mp3', rate: 32000 }), ffmpegPcm16(whole, { ext: 'mp3', rate: 32000 })]);
    expect(Math.abs(a.length - b.length) / 64).toBeLessThanOrEqual(60);
  });

  it('--format wav is refused before any request, with the streaming formats in its hint', async () => {
    await ctl.clearJournal();
    const r = await run(['speech', 'synthesize', '--text', TEXT, '--format', 'wav', '--stream'], { rawOutput: true });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('wav format is not supported in streaming mode');
    expect((await ctl.journal({ path: '/v1/t2a_v2' })).body.entries).toHaveLength(0);
  });
});

describe('mmx speech voices', () => {
  it('lists the ids get_voice answers for system voices, and filters them by language', async () => {
    const direct = await call(`${emu.speechUrl}/v1/get_voice`, { json: { voice_type: 'system' }, headers: { authorization: `Bearer ${KEY}` } });
    const ids = (direct.body.system_voice as { voice_id: string }[]).map((v) => v.voice_id);
    const all = await run(['speech', 'voices']);
    expect(all.code, all.stderr).toBe(0);
    expect(all.json).toEqual(ids);
    expect(all.json).toContain('English_expressive_narrator');
    expect((await ctl.lastEntry({ path: '/v1/get_voice' })).request.body).toEqual({ voice_type: 'system' });

    const english = await run(['speech', 'voices', '--language', 'english']);
    expect(english.code, english.stderr).toBe(0);
    const found = (english.json as { voice_id: string; voice_name: string }[]).map((v) => v.voice_id);
    expect(found).toContain('English_expressive_narrator');
    expect(found.every((id) => id.startsWith('English_'))).toBe(true);
  });
});

describe('mmx file upload', () => {
  it('--purpose voice_clone: the multipart upload is stored and its file object printed', async () => {
    const made = await run(['speech', 'synthesize', '--text', 'A sample to upload for cloning later on.', '--out', 'sample.mp3']);
    expect(made.code, made.stderr).toBe(0);
    const r = await run(['file', 'upload', '--file', 'sample.mp3', '--purpose', 'voice_clone']);
    expect(r.code, r.stderr).toBe(0);
    const size = (await stat(join(home, 'sample.mp3'))).size;
    expect(r.json).toMatchObject({ bytes: size, filename: 'sample.mp3', purpose: 'voice_clone' });
    expect(Number.isSafeInteger(r.json.file_id)).toBe(true);
    const entry = await ctl.lastEntry({ path: '/v1/files/upload' });
    expect(entry.status).toBe(200);
    expect(entry.request.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);

    const got = await call(`${emu.speechUrl}/v1/files/retrieve?file_id=${r.json.file_id}`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(got.body.file).toMatchObject({ file_id: r.json.file_id, bytes: size, purpose: 'voice_clone' });
  });
});

describe('mmx speech transcribe: its own checks, before any request', () => {
  it('--stream with srt, and --stream with --out, are refused locally (exit 2) and nothing reaches the service', async () => {
    await ctl.clearJournal();
    const srt = await run(['speech', 'transcribe', '--file', 'whole.mp3', '--response-format', 'srt', '--stream']);
    expect(srt.code).toBe(2);
    expect(srt.stderr).toContain('cannot be combined with stream=true');
    const out = await run(['speech', 'transcribe', '--file', 'whole.mp3', '--stream', '--out', 't.txt']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('--stream and --out cannot be combined');
    expect((await ctl.journal({ path: '/v1/speech_to_text' })).body.entries).toHaveLength(0);
  });
});

describe('errors reach mmx', () => {
  it('an unknown voice (HTTP 200 with base_resp) exits 1 with the service message', async () => {
    const r = await run(['speech', 'synthesize', '--text', TEXT, '--voice', 'no_such_voice_here', '--out', 'never.mp3']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr).error.message).toMatch(/^API error: .*voice.*\(HTTP 200\)$/);
    expect(existsSync(join(home, 'never.mp3'))).toBe(false);
  });
});

describe('isolation', () => {
  it('without --region it would probe the real regional hosts first: the preload refuses them and nothing leaves', async () => {
    const r = await run(['speech', 'voices'], { noRegion: true });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Detecting region');
    expect(r.stderr).toContain('Could not reach the regional API endpoints');
  });

  it('wrote nothing into its HOME but the files it was asked for (no config, no update check state)', async () => {
    const names = await readdir(home);
    expect(names).not.toContain('.mmx');
    expect(names.every((n) => /\.(mp3|pcm|flac|wav|srt)$/.test(n))).toBe(true);
  });
});
