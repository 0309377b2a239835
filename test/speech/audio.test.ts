import { beforeAll, describe, expect, it } from 'vitest';
import { decodeToMono, readSignature } from '../../src/audio/index.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { flacTest, longestSilence, mp3Frames, parseWav, req, t2a, VOICE, VOICE_B } from './helpers.js';
import { distance, rms, samplesOf, spectralShape } from '../helpers/audio.js';
import { ffprobe } from '../helpers/ffprobe.js';

const { emu } = emulatorForFile();
let url: string;

beforeAll(() => {
  url = emu.speechUrl;
});

async function audioOf(body: Record<string, unknown>) {
  const r = await t2a(url, body);
  expect(r.body.base_resp, JSON.stringify(r.body.base_resp)).toEqual({ status_code: 0, status_msg: 'success' });
  expect(r.body.data.status).toBe(2);
  expect(r.body.data.ced).toBe('');
  expect(r.body.data.audio).toMatch(/^[0-9a-f]+$/);
  return { bytes: Buffer.from(r.body.data.audio, 'hex'), extra: r.body.extra_info, body: r.body };
}

const pcm16 = (extra: Record<string, unknown> = {}) => ({ audio_setting: { format: 'pcm', sample_rate: 16000 }, ...extra });
/** Frames of a mono 16 kHz PCM answer. */
const framesOf = async (body: Record<string, unknown>) => (await audioOf(body)).bytes.length / 2;

describe('non-streaming audio is true to extra_info', () => {
  it('MP3 at each of the six sample rates: ffprobe agrees on rate, channels, bitrate, duration; size is the byte count', async () => {
    const expected: Record<number, number> = { 8000: 64000, 16000: 128000, 22050: 128000, 24000: 128000, 32000: 128000, 44100: 128000 };
    for (const rate of [8000, 16000, 22050, 24000, 32000, 44100]) {
      const { bytes, extra } = await audioOf(req({ audio_setting: { sample_rate: rate } }, 'Hello there.'));
      const p = await ffprobe(bytes, { ext: 'mp3' });
      const frameMs = ((rate >= 32000 ? 1152 : 576) / rate) * 1000;
      expect(p.codec).toBe('mp3');
      expect(p.sampleRate).toBe(rate);
      expect(p.channels).toBe(1);
      expect(extra).toMatchObject({ audio_sample_rate: rate, audio_channel: 1, audio_format: 'mp3', audio_size: bytes.length });
      // 128 kbps is not legal MPEG audio at 8 kHz: the nearest legal bitrate is used and reported.
      expect(extra.bitrate).toBe(expected[rate]);
      expect(p.bitRate).toBe(extra.bitrate);
      expect(Math.abs(p.durationMs - extra.audio_length)).toBeLessThanOrEqual(frameMs + 1);
      expect(mp3Frames(bytes).length).toBeGreaterThan(5);
    }
  });

  it('bitrates: each of the four at 44.1 kHz stereo, and the nearest legal one at 16 kHz', async () => {
    for (const bitrate of [32000, 64000, 128000, 256000]) {
      const { bytes, extra } = await audioOf(req({ audio_setting: { sample_rate: 44100, channel: 2, bitrate } }, 'Hi.'));
      expect(extra.bitrate).toBe(bitrate);
      expect(extra.audio_channel).toBe(2);
      const frames = mp3Frames(bytes);
      expect(frames[1]!.len).toBeGreaterThanOrEqual(Math.floor((144 * bitrate) / 44100)); // frame size follows the bitrate
    }
    const { bytes, extra } = await audioOf(req({ audio_setting: { sample_rate: 16000, bitrate: 256000 } }, 'Hi.'));
    expect(extra.bitrate).toBe(160000);
    expect((await ffprobe(bytes, { ext: 'mp3' })).bitRate).toBe(160000);
  });

  it('WAV, FLAC, PCM and MP3 in stereo at 24 kHz decode to what extra_info says', async () => {
    const text = 'Formats are honest.';
    const base = { sample_rate: 24000, channel: 2 };
    const wav = await audioOf(req({ audio_setting: { ...base, format: 'wav' } }, text));
    const w = parseWav(wav.bytes);
    expect(w).toMatchObject({ format: 1, channels: 2, sampleRate: 24000, bits: 16, riffSize: wav.bytes.length - 8, dataSize: wav.bytes.length - 44 });
    expect(wav.extra).toMatchObject({ audio_format: 'wav', audio_channel: 2, audio_sample_rate: 24000, audio_size: wav.bytes.length, bitrate: 24000 * 2 * 16 });
    expect(wav.extra.audio_length).toBe(Math.round(w.durationMs));

    const pcm = await audioOf(req({ audio_setting: { ...base, format: 'pcm' } }, text));
    expect(pcm.bytes.length % 4).toBe(0);
    expect(pcm.extra).toMatchObject({ audio_format: 'pcm', audio_channel: 2, audio_size: pcm.bytes.length });
    expect(pcm.extra.audio_length).toBe(Math.round((pcm.bytes.length / 4 / 24000) * 1000));
    expect(pcm.bytes.equals(w.data)).toBe(true); // same samples, different container

    const flac = await audioOf(req({ audio_setting: { ...base, format: 'flac' } }, text));
    expect(flac.bytes.toString('latin1', 0, 4)).toBe('fLaC');
    await flacTest(flac.bytes);
    const fp = await ffprobe(flac.bytes, { ext: 'flac' });
    expect(fp).toMatchObject({ codec: 'flac', sampleRate: 24000, channels: 2 });
    expect(Math.abs(fp.durationMs - flac.extra.audio_length)).toBeLessThanOrEqual(1);
    expect(flac.extra).toMatchObject({ audio_format: 'flac', audio_size: flac.bytes.length });

    const mp3 = await audioOf(req({ audio_setting: { ...base, format: 'mp3' } }, text));
    const mp = await ffprobe(mp3.bytes, { ext: 'mp3' });
    expect(mp).toMatchObject({ codec: 'mp3', sampleRate: 24000, channels: 2 });
    expect(Math.abs(mp.durationMs - mp3.extra.audio_length)).toBeLessThanOrEqual(25);
  });

  it('FLAC and WAV at each of the six sample rates (channels alternating): the decoder agrees with extra_info', async () => {
    for (const [i, rate] of [8000, 16000, 22050, 24000, 32000, 44100].entries()) {
      const channel = (i % 2) + 1;
      const flac = await audioOf(req({ audio_setting: { format: 'flac', sample_rate: rate, channel } }, 'Hi.'));
      const fp = await ffprobe(flac.bytes, { ext: 'flac' });
      expect(fp).toMatchObject({ codec: 'flac', sampleRate: rate, channels: channel });
      expect(flac.extra).toMatchObject({ audio_format: 'flac', audio_sample_rate: rate, audio_channel: channel, audio_size: flac.bytes.length });
      expect(Math.abs(fp.durationMs - flac.extra.audio_length)).toBeLessThanOrEqual(1);
      const wav = await audioOf(req({ audio_setting: { format: 'wav', sample_rate: rate, channel } }, 'Hi.'));
      const w = parseWav(wav.bytes);
      expect(w).toMatchObject({ sampleRate: rate, channels: channel, bits: 16, riffSize: wav.bytes.length - 8 });
      expect(wav.extra).toMatchObject({
        audio_format: 'wav',
        audio_sample_rate: rate,
        audio_channel: channel,
        audio_size: wav.bytes.length,
        audio_length: Math.round(w.durationMs),
      });
    }
  });

  it('mono PCM at each sample rate has the asked rate (duration follows the frame count)', async () => {
    for (const rate of [8000, 16000, 22050, 24000, 32000, 44100]) {
      const { bytes, extra } = await audioOf(req({ audio_setting: { format: 'pcm', sample_rate: rate } }, 'Hi.'));
      expect(extra.audio_sample_rate).toBe(rate);
      expect(extra.audio_length).toBe(Math.round((bytes.length / 2 / rate) * 1000));
      expect(extra.bitrate).toBe(rate * 16);
    }
  });

  it('the same request gives the same bytes; the audio carries a signature the emulator recorded', async () => {
    const text = 'Recorded speech. Second sentence here.';
    const a = await audioOf(req(pcm16(), text));
    const b = await audioOf(req(pcm16(), text));
    expect(a.bytes.equals(b.bytes)).toBe(true);
    const decoded = await decodeToMono(a.bytes, { rawPcm: { sampleRate: 16000, channels: 1 } });
    const id = readSignature(decoded.samples, decoded.sampleRate);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    const rec = emu.emulator.signatures.get(id)!;
    expect(rec).toMatchObject({ kind: 'speech', text, speakers: [{ speaker: 1, voices: [VOICE] }], language: 'en' });
    expect(rec.segments.map((s) => s.text)).toEqual(['Recorded speech.', 'Second sentence here.']);
    expect(Math.round(rec.durationMs)).toBe(a.extra.audio_length);
  });
});

describe('text and voice settings shape the audio', () => {
  it('a pause marker adds exactly x seconds of digital silence', async () => {
    const long = await audioOf(req(pcm16(), 'Wait for it <#1.5#> now.'));
    const short = await framesOf(req(pcm16(), 'Wait for it <#0.5#> now.'));
    expect(long.bytes.length / 2 - short).toBe(16000);
    expect(longestSilence(samplesOf(long.bytes), 1)).toBeGreaterThanOrEqual(1.5 * 16000);
  });

  it('pause markers must have pronounceable text on both sides and not follow each other', async () => {
    const bad = [
      '<#1#> Hello',
      'Hello <#1#>',
      'Hello <#1#> <#2#> world',
      'Hello <#1#>!?<#2#> world',
      'Hello <#0#> world',
      'Hello <#100#> world',
      'Hello <#1.234#> world',
      'Hello <#abc#> world',
    ];
    for (const text of bad) {
      const r = await t2a(url, req({}, text));
      expect(r.body.base_resp.status_code, text).toBe(2013);
      expect(r.body.base_resp.status_msg).toMatch(/^invalid params, text pause marker/);
    }
    expect((await t2a(url, req(pcm16(), 'Hi <#0.01#> you <#99.99#> there'))).body.base_resp.status_code).toBe(0);
  });

  it('a newline is a longer pause than a sentence end; speed divides the duration', async () => {
    const sentence = await framesOf(req(pcm16(), 'One two. Three four'));
    const paragraph = await framesOf(req(pcm16(), 'One two\nThree four'));
    expect(paragraph).toBeGreaterThan(sentence);
    const fast = await framesOf(req(pcm16({ voice_setting: { voice_id: VOICE, speed: 2 } }), 'One two. Three four'));
    expect(fast / sentence).toBeGreaterThan(0.4);
    expect(fast / sentence).toBeLessThan(0.7); // the fixed signature lead-in does not speed up
  });

  it('text_normalization reads numbers as words (longer); pronunciation_dict changes what is spoken', async () => {
    const plain = await framesOf(req(pcm16(), 'I have 1234 apples'));
    const norm = await framesOf(req(pcm16({ voice_setting: { voice_id: VOICE, text_normalization: true } }), 'I have 1234 apples'));
    expect(norm).toBeGreaterThan(plain);
    const as = await framesOf(req(pcm16(), 'Say omg now'));
    const replaced = await audioOf(req(pcm16({ pronunciation_dict: { tone: ['omg/oh my goodness gracious'] } }), 'Say omg now'));
    expect(replaced.bytes.length / 2).toBeGreaterThan(as);
    expect(replaced.extra.usage_characters).toBe(11); // billed on the text sent, not the replacement
    const tone = await framesOf(req(pcm16({ pronunciation_dict: { tone: ['处理/(chu3)(li3)'] } }), '处理好'));
    expect(tone).toBeGreaterThan(0);
  });

  it('latex_read reads formulas between $$ as speech', async () => {
    const text = 'Area is $$\\pi r^2$$ here';
    const on = await audioOf(req(pcm16({ voice_setting: { voice_id: VOICE, latex_read: true } }), text));
    const off = await audioOf(req(pcm16(), text));
    expect(on.bytes.equals(off.bytes)).toBe(false);
  });

  it('timber_weights: the mix differs from each voice and is closer to the heavier one', async () => {
    const text = 'Mixing voices is fun to hear.';
    const specOf = async (extra: Record<string, unknown>) => spectralShape(samplesOf((await audioOf(req(pcm16(extra), text))).bytes), 24000);
    const a = await specOf({ voice_setting: { voice_id: VOICE } });
    const b = await specOf({ voice_setting: { voice_id: VOICE_B } });
    const mix = await specOf({
      voice_setting: { voice_id: '' },
      timber_weights: [
        { voice_id: VOICE, weight: 80 },
        { voice_id: VOICE_B, weight: 20 },
      ],
    });
    expect(distance(mix, a)).toBeGreaterThan(0.01);
    expect(distance(mix, b)).toBeGreaterThan(0.01);
    expect(distance(mix, a)).toBeLessThan(distance(mix, b));
  });

  it('vol scales loudness', async () => {
    const quiet = samplesOf((await audioOf(req(pcm16({ voice_setting: { voice_id: VOICE, vol: 0.3 } }), 'Loud and clear'))).bytes);
    const loud = samplesOf((await audioOf(req(pcm16({ voice_setting: { voice_id: VOICE, vol: 3 } }), 'Loud and clear'))).bytes);
    expect(rms(loud, 24000, loud.length)).toBeGreaterThan(2 * rms(quiet, 24000, quiet.length));
  });

  it('voice_modify changes wav/flac/mp3 audio and is accepted and ignored for pcm', async () => {
    const text = 'Modified voice';
    const modify = { voice_modify: { pitch: 60, intensity: -40, timbre: 30, sound_effects: 'robotic' } };
    const wav = (await audioOf(req({ audio_setting: { format: 'wav', sample_rate: 16000 } }, text))).bytes;
    const wavMod = (await audioOf(req({ audio_setting: { format: 'wav', sample_rate: 16000 }, ...modify }, text))).bytes;
    expect(wavMod.equals(wav)).toBe(false);
    const pcm = (await audioOf(req(pcm16(), text))).bytes;
    const pcmMod = (await audioOf(req(pcm16(modify), text))).bytes;
    expect(pcmMod.equals(pcm)).toBe(true);
    const echo = (await audioOf(req({ audio_setting: { format: 'wav', sample_rate: 16000 }, voice_modify: { sound_effects: 'spacious_echo' } }, text))).bytes;
    expect(echo.length).toBeGreaterThan(wav.length); // the echo tail lengthens the audio
  });

  it('each voice_modify setting, each sound effect, emotion and pitch audibly change the audio', async () => {
    const wav = (extra: Record<string, unknown>) => audioOf(req({ audio_setting: { format: 'wav', sample_rate: 8000 }, ...extra }, 'Changed'));
    const plain = (await wav({})).bytes;
    const variants: Record<string, unknown>[] = [
      { voice_modify: { pitch: -80 } },
      { voice_modify: { intensity: 70 } },
      { voice_modify: { timbre: 90 } },
      ...['spacious_echo', 'auditorium_echo', 'lofi_telephone', 'robotic'].map((e) => ({ voice_modify: { sound_effects: e } })),
      { voice_setting: { voice_id: VOICE, emotion: 'sad' } },
      { voice_setting: { voice_id: VOICE, pitch: 5 } },
    ];
    const seen = new Set<string>([plain.toString('base64')]);
    for (const v of variants) {
      const b = (await wav(v)).bytes;
      expect(b.equals(plain), JSON.stringify(v)).toBe(false);
      seen.add(b.toString('base64'));
    }
    expect(seen.size).toBe(variants.length + 1);
  });

  it('aigc_watermark appends an audible marker and audio_length says so', async () => {
    const plain = await audioOf(req(pcm16(), 'Marked audio'));
    const marked = await audioOf(req(pcm16({ aigc_watermark: true }), 'Marked audio'));
    expect(marked.extra.audio_length - plain.extra.audio_length).toBeGreaterThanOrEqual(500);
    const s = samplesOf(marked.bytes);
    expect(rms(s, s.length - 8000, s.length)).toBeGreaterThan(0.01); // the marker sounds at the very end
  });
});
