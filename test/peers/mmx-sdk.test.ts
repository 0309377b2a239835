/**
 * Peer: the SDK of the official MiniMax CLI (`mmx-cli/sdk`, `MiniMaxSDK`), unmodified and in process,
 * pointed at the speech listener by `baseUrl` alone with `region: "global"`. Its speech part offers
 * synthesize (whole and streamed), save, voices and transcribe; its file part upload, retrieve, list
 * and delete (1.0.27 has no async, clone or design operation). MMX_CONFIG_DIR points at a temporary
 * directory, so the SDK never reads a real saved login. Cases that need parts of the service not
 * built yet are in mmx-cli-current.test.ts.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MiniMaxSDK } from 'mmx-cli/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffmpegPcm16, ffprobe } from '../helpers/ffprobe.js';

const KEY = 'mmx-sdk-peer-key';
const TEXT = 'Hello from the SDK.';
const { emu, ctl } = emulatorForFile({ plane: 'speech' });
let dir: string;
let sdk: MiniMaxSDK;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mmx-sdk-peer-'));
  process.env.MMX_CONFIG_DIR = join(dir, '.mmx');
  sdk = new MiniMaxSDK({ apiKey: KEY, baseUrl: emu.speechUrl, region: 'global' });
});
afterAll(async () => {
  delete process.env.MMX_CONFIG_DIR;
  await rm(dir, { recursive: true, force: true });
});

const WHOLE: Record<string, { codec: string; inputArgs?: string[]; slackMs: number }> = {
  mp3: { codec: 'mp3', slackMs: 60 },
  pcm: { codec: 'pcm_s16le', inputArgs: ['-f', 's16le', '-ar', '32000', '-ac', '1'], slackMs: 1 },
  flac: { codec: 'flac', slackMs: 1 },
  wav: { codec: 'pcm_s16le', slackMs: 1 },
};

describe('MiniMaxSDK speech.synthesize against the speech listener', () => {
  for (const [format, want] of Object.entries(WHOLE)) {
    it(`${format}: save() writes a file that decodes to what extra_info reported`, async () => {
      const res = await sdk.speech.synthesize({ text: TEXT, audio_setting: { format } });
      expect(res.base_resp.status_code).toBe(0);
      const file = sdk.speech.save(res, join(dir, `whole.${format}`), format);
      expect((await stat(file)).size).toBe(res.extra_info!.audio_size);
      const p = await ffprobe(file, { inputArgs: want.inputArgs });
      expect(p).toMatchObject({ codec: want.codec, sampleRate: res.extra_info!.audio_sample_rate, channels: 1 });
      expect(Math.abs(p.durationMs - res.extra_info!.audio_length!)).toBeLessThanOrEqual(want.slackMs);
      // The SDK's defaults, merged with what was given.
      expect((await ctl.lastEntry({ path: '/v1/t2a_v2' })).request.body).toEqual({
        model: 'speech-2.8-hd',
        text: TEXT,
        voice_setting: { voice_id: 'English_expressive_narrator' },
        audio_setting: { format, sample_rate: 32000, bitrate: 128000, channel: 1 },
        output_format: 'hex',
      });
    });
  }

  it('stream: the chunks joined decode to the aggregate of the final chunk, whose extra_info is true to it', async () => {
    const events = [];
    for await (const ev of await sdk.speech.synthesize({ text: TEXT, stream: true, voice_setting: { voice_id: 'female-shaonv', speed: 1.2 } })) events.push(ev);
    const last = events.at(-1)!;
    expect(last.data.status).toBe(2);
    expect(events.slice(0, -1).every((e) => e.data.status === 1 && e.base_resp.status_code === 0)).toBe(true);
    const chunks = Buffer.concat(events.slice(0, -1).map((e) => Buffer.from(e.data.audio!, 'hex')));
    const whole = Buffer.from(last.data.audio!, 'hex');
    expect(whole.length).toBe(last.extra_info!.audio_size);
    const [a, b] = await Promise.all([ffmpegPcm16(chunks, { ext: 'mp3', rate: 32000 }), ffmpegPcm16(whole, { ext: 'mp3', rate: 32000 })]);
    expect(Math.abs(a.length - b.length) / 64).toBeLessThanOrEqual(60);
    expect(Math.abs(b.length / 64 - last.extra_info!.audio_length!)).toBeLessThanOrEqual(60);
    expect((await ctl.lastEntry({ path: '/v1/t2a_v2' })).request.body).toMatchObject({
      stream: true,
      voice_setting: { voice_id: 'female-shaonv', speed: 1.2 },
    });
  });

  it('an error under HTTP 200 rejects with the service message', async () => {
    await expect(sdk.speech.synthesize({ text: TEXT, voice_setting: { voice_id: 'no_such_voice_here' } })).rejects.toThrow(/voice/);
  });
});

describe('MiniMaxSDK speech.voices', () => {
  it('answers the system voices with names and descriptions, and filters them by language', async () => {
    const all = await sdk.speech.voices();
    expect(all.length).toBeGreaterThan(5);
    const narrator = all.find((v) => v.voice_id === 'English_expressive_narrator');
    expect(narrator).toBeDefined();
    expect(typeof narrator!.voice_name).toBe('string');
    expect(Array.isArray(narrator!.description)).toBe(true);
    const english = await sdk.speech.voices('english');
    expect(english.length).toBeGreaterThan(0);
    expect(english.every((v) => v.voice_id.startsWith('English_'))).toBe(true);
  });
});

describe('MiniMaxSDK file', () => {
  it('upload with a purpose, then retrieve: the download link gives the same bytes', async () => {
    const res = await sdk.speech.synthesize({ text: 'A sample of speech to upload for a clone.' });
    const path = sdk.speech.save(res, join(dir, 'upload.mp3'));
    const up = await sdk.file.upload(path, 'voice_clone');
    expect(up.file).toMatchObject({ filename: 'upload.mp3', purpose: 'voice_clone', bytes: res.extra_info!.audio_size });
    const got = await sdk.file.retrieve(String(up.file.file_id));
    expect(got.file).toMatchObject({ file_id: up.file.file_id, purpose: 'voice_clone' });
    const link = (got.file as { download_url?: string }).download_url!;
    expect(link).toBeTruthy();
    const body = Buffer.from(await (await fetch(link)).arrayBuffer());
    expect(body.equals(await readFile(path))).toBe(true);
  });

  it('upload of a missing file fails locally, before any request', async () => {
    await expect(sdk.file.upload(join(dir, 'missing.mp3'), 'voice_clone')).rejects.toThrow(/File not found/);
  });
});
