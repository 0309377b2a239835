import { describe, expect, it } from 'vitest';
import { isNonPublicHost } from '../../src/services/shared/remote.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { api } from './tts-helpers.js';

/** The "not public" rule of URLs handed to the emulator (clone ref_audio, detection, diarization). */
const { emu } = emulatorForFile();

const hostOf = (url: string) => new URL(url).hostname;

describe('non-public hosts, in every form the URL parser lets through', () => {
  const nonPublic = [
    'http://127.0.0.1/a.wav',
    'http://127.1/a.wav',
    'http://2130706433/a.wav',
    'http://0x7f.0.0.1/a.wav',
    'http://0.0.0.0/a.wav',
    'http://10.1.2.3/a.wav',
    'http://172.16.0.1/a.wav',
    'http://172.31.255.255/a.wav',
    'http://192.168.0.10/a.wav',
    'http://169.254.169.254/a.wav',
    'http://100.64.0.1/a.wav',
    'http://192.0.0.8/a.wav',
    'http://198.18.0.1/a.wav',
    'http://224.0.0.1/a.wav',
    'http://255.255.255.255/a.wav',
    'http://localhost/a.wav',
    'http://LOCALHOST./a.wav',
    'http://api.localhost/a.wav',
    'http://[::1]/a.wav',
    'http://[0:0:0:0:0:0:0:1]/a.wav',
    'http://[::]/a.wav',
    'http://[::ffff:127.0.0.1]/a.wav',
    'http://[::ffff:7f00:1]/a.wav',
    'http://[::ffff:10.0.0.1]/a.wav',
    'http://[::ffff:169.254.169.254]/a.wav',
    'http://[::127.0.0.1]/a.wav',
    'http://[64:ff9b::192.168.1.1]/a.wav',
    'http://[fe80::1]/a.wav',
    'http://[febf::1]/a.wav',
    'http://[fec0::1]/a.wav',
    'http://[fc00::1]/a.wav',
    'http://[fd12:3456::1]/a.wav',
    'http://[ff02::1]/a.wav',
  ];
  it.each(nonPublic)('%s is not public', (url) => expect(isNonPublicHost(hostOf(url))).toBe(true));

  const pub = [
    'https://cdn.emulator.test/a.wav',
    'https://example.com/a.wav',
    'http://8.8.8.8/a.wav',
    'http://172.32.0.1/a.wav',
    'http://100.128.0.1/a.wav',
    'http://192.0.2.1/a.wav',
    'http://[2001:4860:4860::8888]/a.wav',
    'http://[::ffff:8.8.8.8]/a.wav',
    'http://[64:ff9b::8.8.8.8]/a.wav',
    'http://[fe00::1]/a.wav',
  ];
  it.each(pub)('%s is public', (url) => expect(isNonPublicHost(hostOf(url))).toBe(false));
});

describe('over HTTP', () => {
  it('an IPv4-mapped IPv6 loopback ref_audio is a parameter error (10001), not a download failure', async () => {
    const client = api(emu.platformUrl, 'remote-key');
    for (const ref of ['http://[::ffff:127.0.0.1]:9/voice.wav', 'http://localhost.:9/voice.wav', 'http://[fe80::1]/voice.wav']) {
      const r = await client('/v1/voice/save', { json: { voice_id: 'v', ref_audio: ref, ref_text: 'hello' } });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        error_code: 10001,
        succeed: false,
        data: null,
        error_message: expect.stringMatching(/^ref_audio: URL does not resolve to a public address/),
      });
    }
  });

  it('detection and diarization refuse a mapped private address as not public', async () => {
    const client = api(emu.platformUrl, 'remote-key');
    const det = await client('/v1/audio/ai-detect', { json: { audio_url: 'http://[::ffff:192.168.1.5]/a.wav' } });
    expect(det.body).toMatchObject({ error_code: 10001, error_message: expect.stringMatching(/public address/) });
    const dia = await client('/v1/diarize', { json: { url: 'http://[::ffff:a9fe:a9fe]/a.wav' } });
    expect(dia.body).toMatchObject({ error_code: 10001, error_message: expect.stringMatching(/public address/) });
  });
});
