import { describe, expect, it } from 'vitest';
import { control, emulatorForFile } from '../helpers/emulator.js';
import { codeOf, msgOf, speechApi } from './beyond.js';
import { parseWav } from './helpers.js';
import { samplesOf, spectralShape } from '../helpers/audio.js';
import { ffprobe } from '../helpers/ffprobe.js';

/** `POST /v1/voice_design` and designed voices in synthesis (section 5, rule 12.11). */
const { emu } = emulatorForFile({ plane: 'speech', freeze: true });
const DAY = 24 * 3600 * 1000;

/** The strongest frequency of a voice reading a text (its fundamental), in Hz. */
async function pitchOf(api: ReturnType<typeof speechApi>, voiceId: string): Promise<number> {
  const r = await api.post('/v1/t2a_v2', {
    model: 'speech-02-hd',
    text: 'One two three four five six seven.',
    voice_setting: { voice_id: voiceId },
    audio_setting: { format: 'wav', sample_rate: 16000 },
  });
  const wav = parseWav(Buffer.from(r.body.data.audio, 'hex'));
  const spec = spectralShape(samplesOf(wav.data));
  let best = 2;
  for (let k = 2; k < spec.length; k++) if (spec[k]! > spec[best]!) best = k;
  return (best * 16000) / 1024;
}

describe('voice_design', () => {
  it('answers a generated ttv-voice id and trial_audio as hex MP3 (32 kHz, 128 kbps); the voice speaks and is then listed', async () => {
    const api = speechApi(emu.speechUrl, 'design-basic');
    const r = await api.post('/v1/voice_design', { prompt: 'A warm, calm female narrator', preview_text: 'Welcome to the story.' });
    expect([r.status, codeOf(r)]).toEqual([200, 0]);
    const now = (await control(emu.speechUrl).clock()).body.now_ms;
    const stamp = new Date(now).toISOString().replace(/\D/g, '').slice(0, 14);
    expect(r.body.voice_id).toMatch(new RegExp(`^ttv-voice-${stamp}\\d{2}-[A-Za-z0-9]{8}$`));
    const mp3 = Buffer.from(r.body.trial_audio, 'hex');
    const p = await ffprobe(mp3, { ext: 'mp3' });
    expect(p).toMatchObject({ codec: 'mp3', sampleRate: 32000, channels: 1, bitRate: 128000 });
    expect(p.durationMs).toBeGreaterThan(500);
    expect((await api.post('/v1/get_voice', { voice_type: 'voice_generation' })).body.voice_generation).toEqual([]);
    expect(codeOf(await api.speak(r.body.voice_id))).toBe(0);
    expect((await api.post('/v1/get_voice', { voice_type: 'voice_generation' })).body.voice_generation).toEqual([
      { voice_id: r.body.voice_id, description: [], created_time: new Date(now).toISOString().slice(0, 10) },
    ]);
    // Another key can neither use nor see it.
    const other = speechApi(emu.speechUrl, 'design-other');
    expect(codeOf(await other.speak(r.body.voice_id))).toBe(2042);
    expect((await other.post('/v1/get_voice', { voice_type: 'voice_generation' })).body.voice_generation).toEqual([]);
  });

  it('the timbre follows the prompt: same prompt, same voice; a deep old man sounds lower than a young girl', async () => {
    const api = speechApi(emu.speechUrl, 'design-timbre');
    const design = async (prompt: string) => (await api.post('/v1/voice_design', { prompt, preview_text: 'Same words.' })).body;
    const a = await design('A deep, low voice of an old man');
    const b = await design('A deep, low voice of an old man');
    const c = await design('A bright, cheerful young girl with a high voice');
    expect(a.voice_id).not.toBe(b.voice_id);
    expect(a.trial_audio).toBe(b.trial_audio);
    expect(a.trial_audio).not.toBe(c.trial_audio);
    const low = await pitchOf(api, a.voice_id);
    const high = await pitchOf(api, c.voice_id);
    expect(low).toBeLessThan(130);
    expect(high).toBeGreaterThan(180);
  });

  it('a custom voice_id follows the cloning rules and must be free (2039)', async () => {
    const api = speechApi(emu.speechUrl, 'design-custom');
    const ok = await api.post('/v1/voice_design', { prompt: 'A calm man', preview_text: 'Hi.', voice_id: 'MyDesigned01' });
    expect([codeOf(ok), ok.body.voice_id]).toEqual([0, 'MyDesigned01']);
    expect(codeOf(await api.post('/v1/voice_design', { prompt: 'A calm man', preview_text: 'Hi.', voice_id: 'MyDesigned01' }))).toBe(2039);
    const bad = await api.post('/v1/voice_design', { prompt: 'A calm man', preview_text: 'Hi.', voice_id: 'bad id' });
    expect([codeOf(bad), msgOf(bad)]).toEqual([2013, 'invalid params, voice_id must be 8 to 256 characters (got 6)']);
  });

  it('bad input is 2013 naming the field and the rule', async () => {
    const api = speechApi(emu.speechUrl, 'design-bad');
    const cases: [Record<string, unknown>, string][] = [
      [{ preview_text: 'Hi.' }, 'prompt is required'],
      [{ prompt: '  ', preview_text: 'Hi.' }, 'prompt must not be empty'],
      [{ prompt: 'A voice' }, 'preview_text is required'],
      [{ prompt: 'A voice', preview_text: 'x'.repeat(501) }, 'preview_text must be at most 500 characters'],
      [{ prompt: 'A voice', preview_text: 'Hi.', aigc_watermark: 'yes' }, 'aigc_watermark must be a boolean'],
    ];
    for (const [body, msg] of cases) {
      const r = await api.post('/v1/voice_design', body);
      expect([r.status, codeOf(r), msgOf(r)]).toEqual([200, 2013, `invalid params, ${msg}`]);
    }
  });

  it('designed voices follow the 7-day rule', async () => {
    const api = speechApi(emu.speechUrl, 'design-expiry');
    const r = await api.post('/v1/voice_design', { prompt: 'A voice', preview_text: 'Hi.' });
    await control(emu.speechUrl).advance(7 * DAY);
    expect(codeOf(await api.speak(r.body.voice_id))).toBe(2054);
  });
});
