/**
 * Peer: LiveKit Agents' MiniMax TTS plugin with every voice it lists (its `TTSVoice` type, 28 ids),
 * which needs the published system voice catalogue (speech-current.md E21): today the emulator knows
 * only the default `socialmedia_female_2_v1`. Each voice is used through `synthesize()`, and two
 * (one with a space in its id) through `stream()`; the frames must be the audio the emulator reported.
 * The cases that pass on the present service are in livekit-plugin.test.ts.
 */
import { TTS } from '@livekit/agents-plugin-minimax';
import { beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { collect, initLogger, pluginStart, replaySession, reportedWhole, sentencesOf } from './livekit-plugin.js';

const KEY = 'livekit-plugin-current-key';
const { emu, ctl } = emulatorForFile({ plane: 'speech' });

beforeAll(() => initLogger());

/** The voices of the plugin's TTSVoice type (src/models.ts), in its order. */
const PLUGIN_VOICES = [
  'socialmedia_female_2_v1',
  'socialmedia_female_1_v1',
  'voice_agent_Female_Phone_4',
  'voice_agent_Male_Phone_1',
  'voice_agent_Male_Phone_2',
  'English_StressedLady',
  'English_SentimentalLady',
  'English_radiant_girl',
  'English_WiseScholar',
  'English_Persuasive_Man',
  'English_Explanatory_Man',
  'English_Insightful_Speaker',
  'japanese_male_social_media_1_v2',
  'japanese_female_social_media_1_v2',
  'French_CasualMan',
  'French_Female Journalist',
  'Spanish_Narrator',
  'Spanish_WiseScholar',
  'Spanish_ThoughtfulMan',
  'Arabic_CalmWoman',
  'Arabic_FriendlyGuy',
  'Portuguese_ThoughtfulLady',
  'German_PlayfulMan',
  'German_SweetLady',
  'moss_audio_7c7e7ae2-7356-11f0-9540-7ef9b4b62566',
  'moss_audio_b118f320-78c0-11f0-bbeb-26e8167c4779',
  'moss_audio_84f32de9-2363-11f0-b7ab-d255fae1f27b',
  'moss_audio_82ebf67c-78c8-11f0-8e8e-36b92fbb4f95',
];

describe('every voice the plugin lists', () => {
  it('synthesize(): each voice speaks, and its frames are the reported audio', async () => {
    const sounds = new Set<string>();
    for (const voice of PLUGIN_VOICES) {
      const frames = await collect(new TTS({ apiKey: KEY, baseUrl: emu.speechUrl, voice }).synthesize('One voice check.'));
      const entry = ((await ctl.journal({ path: '/v1/t2a_v2' })).body.entries as any[])[0];
      expect(entry.request.body.voice_setting.voice_id, voice).toBe(voice);
      const reported = await reportedWhole(emu.speechUrl, KEY, entry.request.body);
      expect(frames.samples * 2, voice).toBe(reported.audio.length);
      expect(frames.pcm.equals(reported.audio), voice).toBe(true);
      sounds.add(frames.pcm.toString('base64'));
    }
    // Each voice sounds like itself: no two of them give the same samples.
    expect(sounds.size).toBe(PLUGIN_VOICES.length);
  });

  it('stream(): a voice with a space in its id and a moss_audio voice', async () => {
    for (const voice of ['French_Female Journalist', 'moss_audio_84f32de9-2363-11f0-b7ab-d255fae1f27b']) {
      const tts = new TTS({ apiKey: KEY, baseUrl: emu.speechUrl, voice });
      const errors: Error[] = [];
      tts.on('error', (e) => errors.push(e.error));
      const parts = ['Bonjour à tous. ', 'Une deuxième phrase.'];
      const s = tts.stream();
      for (const p of parts) s.pushText(p);
      s.flush();
      s.endInput();
      const frames = await collect(s);
      s.close();
      expect(errors, voice).toEqual([]);
      const replay = await replaySession(emu.speechUrl, KEY, pluginStart({ voice }), await sentencesOf(parts));
      expect(frames.pcm.equals(replay.audio), voice).toBe(true);
      expect(frames.samples).toBeGreaterThan(0);
    }
  });
});
