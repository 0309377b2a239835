// Detection's input rules (platform/detection/model.ts) called directly: fetchDetectionUrl (JSON mode) and
// checkUpload (multipart mode), one test per check in the order the model runs them. URLs go through the
// offline resolver, which never reaches the network: private and unknown hosts are refused without a fetch.
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { readConfig } from '../../src/config.js';
import type { Emulator } from '../../src/core/emulator.js';
import { createEmulator } from '../../src/app.js';
import { checkUpload, fetchDetectionUrl, type Upload } from '../../src/services/platform/detection/model.js';
import { rejected, thrown } from './model-emulator.js';
import { expectRefusal, messageOf } from './platform-refusal.js';

/** The base of this emulator's own download links (no listener: EMULATOR_PUBLIC_URL names it). */
const PUBLIC_URL = 'http://emulator.test:8900';
const FIXTURE_WAV = 'https://cdn.emulator.test/audio/ref-5s.wav';

let emu: Emulator;
beforeAll(async () => {
  emu = await createEmulator(readConfig([], { EMULATOR_PUBLIC_URL: PUBLIC_URL }), pino({ level: 'silent' }));
});
afterAll(async () => {
  await emu.close({ save: false });
});

/** Any attempt to reach the network fails the test that made it. */
const network = vi.spyOn(globalThis, 'fetch');
afterEach(() => {
  expect(network).not.toHaveBeenCalled();
});

const refusal = (raw: string | null | undefined) => rejected(fetchDetectionUrl(emu, raw));
const param = (message: string) => ({ family: 'detection', codeOrKind: 'param', code: 10001, message }) as const;

describe('fetchDetectionUrl: the checks in order', () => {
  it('fetchDetectionUrl: audio_url absent, null or empty → 10001', async () => {
    for (const raw of [undefined, null, '']) {
      expectRefusal(await refusal(raw), param('audio_url is required (or send the file as multipart field audio)'));
    }
  });

  it('fetchDetectionUrl: audio_url not a URL (blank counts here) → 10001', async () => {
    expectRefusal(await refusal('not a url'), param('audio_url is not a valid URL'));
    expectRefusal(await refusal('   '), param('audio_url is not a valid URL'));
  });

  it('fetchDetectionUrl: audio_url neither http nor https → 10001', async () => {
    expectRefusal(await refusal('ftp://cdn.emulator.test/audio/ref-5s.wav'), param('audio_url must be an http or https URL'));
  });

  it("fetchDetectionUrl: audio_url's path not .wav or .mp3 (the query does not count) → 10001", async () => {
    expectRefusal(await refusal('https://cdn.emulator.test/audio/ref-5s.ogg'), param('audio_url must be a .wav or .mp3 file'));
    expectRefusal(await refusal('https://cdn.emulator.test/audio/clip?name=a.wav'), param('audio_url must be a .wav or .mp3 file'));
  });

  it('fetchDetectionUrl: audio_url on a loopback, private, link-local or localhost host → 10001, nothing fetched', async () => {
    for (const raw of [
      'http://127.0.0.1/a.wav',
      'http://10.1.2.3/a.wav',
      'http://192.168.0.5/a.mp3',
      'http://169.254.169.254/a.wav',
      'http://localhost:8080/a.wav',
      'http://[::1]/a.wav',
      'http://[::ffff:127.0.0.1]/a.wav',
    ]) {
      expectRefusal(await refusal(raw), param('audio_url does not resolve to a public address'));
    }
  });

  it('fetchDetectionUrl: audio_url on a public host the offline resolver does not know → 10001', async () => {
    expectRefusal(await refusal('https://example.com/a.wav'), param('audio_url could not be downloaded (the emulator is offline; only fixture URLs resolve)'));
  });

  it("fetchDetectionUrl: the emulator's own download link with a wrong signature → 10001", async () => {
    const link = emu.downloadUrl('platform', 'uploads/audio/acct/clip.wav', emu.clock.now() + 60_000).replace(/sig=[^&]+/, 'sig=forged');
    expectRefusal(await refusal(link), param('audio_url is a download link with an invalid signature'));
  });

  it("fetchDetectionUrl: the emulator's own download link past its expiry → 10001", async () => {
    const link = emu.downloadUrl('platform', 'uploads/audio/acct/clip.wav', emu.clock.now() - 1000);
    expectRefusal(await refusal(link), param('audio_url is an expired download link'));
  });

  it("fetchDetectionUrl: the emulator's own valid link to a file that is gone → 10001", async () => {
    const link = emu.downloadUrl('platform', 'uploads/audio/acct/gone.wav', emu.clock.now() + 60_000);
    expectRefusal(await refusal(link), param('audio_url points at a file that no longer exists'));
  });

  it('fetchDetectionUrl: a URL that passes every check is fetched (fixture URL, trimmed; own link)', async () => {
    expect(await fetchDetectionUrl(emu, `  ${FIXTURE_WAV}  `)).toMatchObject({ name: 'ref-5s.wav', contentType: 'audio/wav', bytes: expect.any(Buffer) });
    await emu.blobs.put('uploads/audio/acct/mine.WAV', Buffer.from('RIFF'));
    const own = await fetchDetectionUrl(emu, emu.downloadUrl('platform', 'uploads/audio/acct/mine.WAV', emu.clock.now() + 60_000));
    expect(own).toMatchObject({ name: 'mine.WAV' });
    expect(own.bytes.toString()).toBe('RIFF');
  });

  it('fetchDetectionUrl: the order — scheme before extension before the host is looked at', async () => {
    expect(messageOf(await refusal('ftp://10.0.0.1/a.txt'))).toBe('audio_url must be an http or https URL');
    expect(messageOf(await refusal('http://10.0.0.1/a.txt'))).toBe('audio_url must be a .wav or .mp3 file');
  });
});

describe('checkUpload: the checks in order', () => {
  const file = (name: string, bytes = Buffer.from('RIFF')): Extract<Upload, { kind: 'file' }> => ({ kind: 'file', bytes, name, contentType: 'audio/wav' });
  const refuse = (upload: Exclude<Upload, { kind: 'too-large' }>) => thrown(() => checkUpload(upload));

  it('checkUpload: the file in a field other than audio → 10001', () => {
    expectRefusal(refuse({ kind: 'wrong-field', field: 'file' }), param('the file must be sent in the multipart field named audio, not file'));
  });

  it('checkUpload: no file at all → 10001', () => {
    expectRefusal(refuse({ kind: 'none' }), param('no audio: send the file in the multipart field audio'));
  });

  it('checkUpload: an empty file → 10001', () => {
    expectRefusal(refuse(file('a.wav', Buffer.alloc(0))), param('audio is an empty file'));
  });

  it('checkUpload: a file not named .wav or .mp3 → 10001', () => {
    expectRefusal(refuse(file('a.flac')), param('audio must be a .wav or .mp3 file'));
  });

  it('checkUpload: a file that passes every check is answered as it came', () => {
    const upload = file('Clip.MP3');
    expect(checkUpload(upload)).toBe(upload);
  });

  it('checkUpload: the order — empty is named before a wrong name', () => {
    expect(messageOf(refuse(file('a.flac', Buffer.alloc(0))))).toBe('audio is an empty file');
  });
});
