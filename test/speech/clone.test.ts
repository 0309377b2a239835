import { describe, expect, it } from 'vitest';
import { pcm16Wav } from '../helpers/audio.js';
import { control, emulatorForFile } from '../helpers/emulator.js';
import { codeOf, msgOf, PANGRAM, speechApi } from './beyond.js';
import { ffprobe } from '../helpers/ffprobe.js';

/** `POST /v1/voice_clone` and cloned voices in synthesis (section 4, rule 12.10). */
const { emu } = emulatorForFile({ plane: 'speech', freeze: true });
const DAY = 24 * 3600 * 1000;

describe('voice_clone', () => {
  it('without text: demo_audio "", input_sensitive false and type 0, no voice_id; the voice speaks, then is listed', async () => {
    const api = speechApi(emu.speechUrl, 'clone-basic');
    const r = await api.clone('MyCloneVoice01');
    expect([r.status, codeOf(r)]).toEqual([200, 0]);
    expect(r.body).toMatchObject({ input_sensitive: false, input_sensitive_type: 0, demo_audio: '' });
    expect(r.body.voice_id).toBeUndefined();
    expect(r.body.extra_info).toBeUndefined();
    // Created, not yet listed.
    expect((await api.post('/v1/get_voice', { voice_type: 'voice_cloning' })).body.voice_cloning).toEqual([]);
    const spoken = await api.speak('MyCloneVoice01');
    expect(codeOf(spoken)).toBe(0);
    const listed = (await api.post('/v1/get_voice', { voice_type: 'voice_cloning' })).body.voice_cloning;
    const today = new Date((await control(emu.speechUrl).clock()).body.now_ms).toISOString().slice(0, 10);
    expect(listed).toEqual([{ voice_id: 'MyCloneVoice01', description: [], created_time: today }]);
  });

  it('another key cannot use or see the voice: 2042 in synthesis, absent from its list; the id stays taken (2039)', async () => {
    const owner = speechApi(emu.speechUrl, 'clone-owner');
    const other = speechApi(emu.speechUrl, 'clone-other');
    expect(codeOf(await owner.clone('OwnedVoice01'))).toBe(0);
    expect(codeOf(await owner.speak('OwnedVoice01'))).toBe(0);
    const used = await other.speak('OwnedVoice01');
    expect(codeOf(used)).toBe(2042);
    expect(msgOf(used)).toContain("You don't have access to this voice_id");
    expect((await other.post('/v1/get_voice', { voice_type: 'all' })).body.voice_cloning).toEqual([]);
    const dup = await other.clone('OwnedVoice01');
    expect(codeOf(dup)).toBe(2039);
    expect(codeOf(await owner.clone('OwnedVoice01'))).toBe(2039);
    expect(codeOf(await owner.clone('Wise_Woman'))).toBe(2039); // a system voice
  });

  it('a cloned voice mixes in timber_weights like any voice', async () => {
    const api = speechApi(emu.speechUrl, 'clone-mix');
    expect(codeOf(await api.clone('MixedVoice01'))).toBe(0);
    const r = await api.post('/v1/t2a_v2', {
      model: 'speech-02-hd',
      text: 'Two voices at once.',
      timber_weights: [
        { voice_id: 'MixedVoice01', weight: 1 },
        { voice_id: 'Wise_Woman', weight: 1 },
      ],
      voice_setting: { voice_id: '' },
    });
    expect(codeOf(r), r.text).toBe(0);
    expect((await api.post('/v1/get_voice', { voice_type: 'voice_cloning' })).body.voice_cloning.map((v: any) => v.voice_id)).toEqual(['MixedVoice01']);
  });

  it('the clone sounds like its sample: the same recording gives the same voice, another recording another', async () => {
    const api = speechApi(emu.speechUrl, 'clone-timbre');
    const sampleA = await api.audio(PANGRAM.repeat(4), { voice: 'male-qn-qingse' });
    const sampleB = await api.audio(PANGRAM.repeat(4), { voice: 'female-shaonv' });
    for (const [voiceId, sample] of [
      ['TimbreVoiceA1', sampleA],
      ['TimbreVoiceA2', sampleA],
      ['TimbreVoiceB1', sampleB],
    ] as const) {
      const fileId = await api.uploadAudio('voice_clone', sample);
      expect(codeOf(await api.post('/v1/voice_clone', { file_id: fileId, voice_id: voiceId }))).toBe(0);
    }
    const audio = async (id: string) => (await api.speak(id, 'Same words here.')).body.data.audio as string;
    const [a1, a2, b1] = [await audio('TimbreVoiceA1'), await audio('TimbreVoiceA2'), await audio('TimbreVoiceB1')];
    expect(a1).toBe(a2);
    expect(a1).not.toBe(b1);
  });

  it('with text and model: demo_audio is a signed MP3 link (32 kHz, 128 kbps) and extra_info tells its truth', async () => {
    const api = speechApi(emu.speechUrl, 'clone-demo');
    const r = await api.clone('DemoVoice0001', { text: 'This is how I sound now.', model: 'speech-02-hd' });
    expect(codeOf(r)).toBe(0);
    const res = await fetch(r.body.demo_audio); // a plain unauthenticated GET, as the MCP servers do
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const mp3 = Buffer.from(await res.arrayBuffer());
    const p = await ffprobe(mp3, { ext: 'mp3' });
    expect(p).toMatchObject({ codec: 'mp3', sampleRate: 32000, channels: 1 });
    expect(r.body.extra_info).toMatchObject({
      audio_sample_rate: 32000,
      audio_size: mp3.length,
      bitrate: 128000,
      usage_characters: expect.any(Number),
      word_count: 6,
    });
    expect(Math.abs(r.body.extra_info.audio_length - p.durationMs)).toBeLessThanOrEqual(30);
    const expires = Number(new URL(r.body.demo_audio).searchParams.get('expires'));
    expect(expires - (await control(emu.speechUrl).clock()).body.now_ms).toBe(DAY);
    // A preview is not use: the voice is still unlisted.
    expect((await api.post('/v1/get_voice', { voice_type: 'voice_cloning' })).body.voice_cloning).toEqual([]);
  });

  it('sample durations: under 10 s or over 5 min is 2037; a prompt of 8 s or more is 2048, a shorter one is fine', async () => {
    const api = speechApi(emu.speechUrl, 'clone-durations');
    const short = await api.uploadAudio('voice_clone', await api.audio(PANGRAM.repeat(2)));
    const r1 = await api.post('/v1/voice_clone', { file_id: short, voice_id: 'ShortVoice01' });
    expect([codeOf(r1), msgOf(r1)]).toEqual([2037, expect.stringContaining('voice duration too short')]);
    const long = await api.uploadAudio('voice_clone', await api.audio(PANGRAM.repeat(100), { sampleRate: 8000 }));
    const r2 = await api.post('/v1/voice_clone', { file_id: long, voice_id: 'LongVoice001' });
    expect([codeOf(r2), msgOf(r2)]).toEqual([2037, expect.stringContaining('voice duration too long')]);
    const sample = await api.uploadAudio('voice_clone', await api.audio(PANGRAM.repeat(4)));
    const longPrompt = await api.uploadAudio('prompt_audio', await api.audio(PANGRAM.repeat(3)));
    const r3 = await api.post('/v1/voice_clone', {
      file_id: sample,
      voice_id: 'PromptVoice1',
      clone_prompt: { prompt_audio: longPrompt, prompt_text: 'The quick brown fox.' },
    });
    expect([codeOf(r3), msgOf(r3)]).toEqual([2048, expect.stringContaining('prompt audio too long')]);
    const prompt = await api.uploadAudio('prompt_audio', await api.audio(PANGRAM));
    const r4 = await api.post('/v1/voice_clone', {
      file_id: sample,
      voice_id: 'PromptVoice1',
      clone_prompt: { prompt_audio: prompt, prompt_text: PANGRAM.trim() },
    });
    expect(codeOf(r4)).toBe(0);
  });

  it('prompt_text: compared with what the prompt audio says when the emulator knows it; a mismatch is 1044', async () => {
    const api = speechApi(emu.speechUrl, 'clone-prompt-text');
    const sample = await api.uploadAudio('voice_clone', await api.audio(PANGRAM.repeat(4)));
    const prompt = await api.uploadAudio('prompt_audio', await api.audio(PANGRAM));
    const wrong = await api.post('/v1/voice_clone', {
      file_id: sample,
      voice_id: 'PromptText01',
      clone_prompt: { prompt_audio: prompt, prompt_text: 'Something else entirely was said here.' },
    });
    expect([codeOf(wrong), msgOf(wrong)]).toEqual([1044, expect.stringContaining('clone prompt similarity check failed')]);
    // Nothing was created: the id is still free.
    const right = await api.post('/v1/voice_clone', {
      file_id: sample,
      voice_id: 'PromptText01',
      clone_prompt: { prompt_audio: prompt, prompt_text: 'the QUICK brown fox jumps over the lazy dog!' },
    });
    expect(codeOf(right)).toBe(0);
    // A recording the emulator did not make cannot be checked: any transcript is taken.
    const foreign = await api.uploadAudio('prompt_audio', sineWav(2));
    const taken = await api.post('/v1/voice_clone', {
      file_id: sample,
      voice_id: 'PromptText02',
      clone_prompt: { prompt_audio: foreign, prompt_text: 'Whatever the recording says.' },
    });
    expect(codeOf(taken)).toBe(0);
  });

  it('file ids: unknown, foreign or of the wrong purpose is 20132 naming the field', async () => {
    const api = speechApi(emu.speechUrl, 'clone-files');
    const other = speechApi(emu.speechUrl, 'clone-files-other');
    const foreign = await other.uploadAudio('voice_clone', await other.audio(PANGRAM.repeat(4)));
    const prompt = await api.uploadAudio('prompt_audio', await api.audio(PANGRAM));
    const r1 = await api.post('/v1/voice_clone', { file_id: foreign, voice_id: 'FilesVoice01' });
    expect([codeOf(r1), msgOf(r1)]).toEqual([20132, expect.stringContaining(`file_id ${foreign} is not a file of this account`)]);
    const r2 = await api.post('/v1/voice_clone', { file_id: prompt, voice_id: 'FilesVoice01' });
    expect([codeOf(r2), msgOf(r2)]).toEqual([20132, expect.stringContaining('uploaded with purpose prompt_audio, not voice_clone')]);
    const sample = await api.uploadAudio('voice_clone', await api.audio(PANGRAM.repeat(4)));
    const r3 = await api.post('/v1/voice_clone', { file_id: sample, voice_id: 'FilesVoice01', clone_prompt: { prompt_audio: 42, prompt_text: 'x.' } });
    expect([codeOf(r3), msgOf(r3)]).toEqual([20132, expect.stringContaining('clone_prompt.prompt_audio 42')]);
  });

  it('voice_id rules and other bad input are 2013 naming the field and the rule', async () => {
    const api = speechApi(emu.speechUrl, 'clone-ids');
    const cases: [Record<string, unknown>, string][] = [
      [{ voice_id: 'Short1' }, 'voice_id must be 8 to 256 characters (got 6)'],
      [{ voice_id: '1StartsWithDigit' }, 'voice_id must start with an ASCII letter'],
      [{ voice_id: 'Has space inside' }, 'voice_id may hold only letters, digits, - and _'],
      [{ voice_id: 'EndsWithDash-' }, 'voice_id must not end with - or _'],
      [{ voice_id: 'GoodVoiceId1', text: 'Hello.' }, 'model is required when text is given'],
      [{ voice_id: 'GoodVoiceId1', text: 'x'.repeat(1001), model: 'speech-02-hd' }, 'text must be at most 1000 characters'],
      [{ voice_id: 'GoodVoiceId1', accuracy: 2 }, 'accuracy must be in [0, 1]'],
      [{ voice_id: 'GoodVoiceId1', text_validation: 'x'.repeat(201) }, 'text_validation must be at most 200 characters'],
      [{ voice_id: 'GoodVoiceId1', clone_prompt: { prompt_audio: 1 } }, 'clone_prompt.prompt_text is required'],
      [{ voice_id: 42 }, 'voice_id must be a string'],
      [{}, 'voice_id is required'],
    ];
    const fileId = await api.uploadAudio('voice_clone', await api.audio(PANGRAM.repeat(4)));
    for (const [body, msg] of cases) {
      const r = await api.post('/v1/voice_clone', { file_id: fileId, ...body });
      expect([r.status, codeOf(r), msgOf(r)]).toEqual([200, 2013, `invalid params, ${msg}`]);
    }
    const noFile = await api.post('/v1/voice_clone', { voice_id: 'GoodVoiceId1' });
    expect(msgOf(noFile)).toBe('invalid params, file_id is required');
  });

  it('an account without real-name verification gets 2038 with the text clients match on', async () => {
    await control(emu.speechUrl).putAccount('clone-unverified', { real_name_verified: false });
    const r = await speechApi(emu.speechUrl, 'clone-unverified').clone('Unverified01');
    expect([codeOf(r), msgOf(r)]).toEqual([2038, 'user voice clone forbidden, should complete real-name verification']);
    expect((await control(emu.speechUrl).account('clone-unverified')).body.real_name_verified).toBe(false);
  });

  it('a key without the cloning capability is refused with 1004 before the body is read', async () => {
    const r = await speechApi(emu.speechUrl, 'emulator-tts-only-key').post('/v1/voice_clone', { nothing: true });
    expect([r.status, codeOf(r), msgOf(r)]).toEqual([200, 1004, 'login fail: the API secret key has no access to voice cloning (capability cloning)']);
    await control(emu.speechUrl).putAccount('clone-no-tts', { capabilities: ['cloning'] });
    const list = await speechApi(emu.speechUrl, 'clone-no-tts').post('/v1/get_voice', { voice_type: 'all' });
    expect([codeOf(list), msgOf(list)]).toEqual([1004, 'login fail: the API secret key has no access to speech synthesis (capability tts)']);
  });

  it('text_validation: compared with what recognition hears in the sample; below accuracy is 1043', async () => {
    const api = speechApi(emu.speechUrl, 'clone-asr');
    const said = PANGRAM.repeat(4).trim();
    const fileId = await api.uploadAudio('voice_clone', await api.audio(said));
    const bad = await api.post('/v1/voice_clone', { file_id: fileId, voice_id: 'AsrVoice0001', text_validation: 'Something else entirely was said here.' });
    expect([codeOf(bad), msgOf(bad)]).toEqual([1043, expect.stringContaining('The asr similarity check failed')]);
    const loose = await api.post('/v1/voice_clone', {
      file_id: fileId,
      voice_id: 'AsrVoice0001',
      text_validation: 'Something else entirely was said here.',
      accuracy: 0.01,
    });
    expect(codeOf(loose)).toBe(0);
    const good = await api.post('/v1/voice_clone', { file_id: fileId, voice_id: 'AsrVoice0002', text_validation: said.toUpperCase() });
    expect(codeOf(good)).toBe(0);
  });

  it('a voice not used within 7 days on the clock is deleted (2054); a used one is kept', async () => {
    const api = speechApi(emu.speechUrl, 'clone-expiry');
    expect(codeOf(await api.clone('UnusedVoice1'))).toBe(0);
    expect(codeOf(await api.clone('UsedVoice001'))).toBe(0);
    expect(codeOf(await api.speak('UsedVoice001'))).toBe(0);
    await control(emu.speechUrl).advance(7 * DAY - 1);
    await control(emu.speechUrl).advance(1);
    const gone = await api.speak('UnusedVoice1');
    expect([codeOf(gone), msgOf(gone)]).toEqual([2054, 'voice id not exist: voice_setting.voice_id UnusedVoice1']);
    expect(codeOf(await api.speak('UsedVoice001'))).toBe(0);
    // The id is free again.
    expect(codeOf(await api.clone('UnusedVoice1'))).toBe(0);
  });
});

/** A 16-bit mono WAV of a plain 440 Hz tone: audio the emulator did not make. */
function sineWav(seconds: number, rate = 16000): Buffer {
  const n = seconds * rate;
  const wav = pcm16Wav(n * 2, rate);
  for (let i = 0; i < n; i++) wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return wav;
}
