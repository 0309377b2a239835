import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { control, emulatorForFile } from '../helpers/emulator.js';
import { codeOf, msgOf, speechApi } from './beyond.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { piecesOf, session, START } from './ws/ws-helpers.js';

/** The published system voice catalogue (speech-current.md E21, speech-beyond.md rule 12.8). */
const { emu } = emulatorForFile({ plane: 'speech' });

interface FixtureVoice {
  voice_id: string;
  voice_name: string;
  description: string;
  language: string;
  same_voice_as?: string;
}
const FIXTURE = JSON.parse(readFileSync(new URL('../../fixtures/speech-voices.json', import.meta.url), 'utf8')) as FixtureVoice[];

/** Ids that real clients name, the official examples use, or issue 20 found refused. */
const NAMED = [
  'English_radiant_girl',
  'English_Persuasive_Man',
  'English_Insightful_Speaker',
  'English_captivating_female1',
  'Chinese (Mandarin)_Lyrical_Voice',
  'Chinese (Mandarin)_Reliable_Executive',
  'male-qn-qingse-jingpin',
  'English_Trustworth_Man',
  'English_Trustworthy_Man',
  'Cantonese_ProfessionalHost（F)',
  'Cantonese_ProfessionalHost (F)',
  'French_Female_News Anchor',
];
const CLIENT_DEFAULTS = [
  'Calm_Woman',
  'Wise_Woman',
  'Friendly_Person',
  'Deep_Voice_Man',
  'Lively_Girl',
  'socialmedia_female_2_v1',
  'English_expressive_narrator',
  'audiobook_male_1',
];

/** One short synthesis as 16 kHz WAV; answers the reply. */
function speak(api: ReturnType<typeof speechApi>, voiceId: string, text = 'Hello there, one two three.') {
  return api.post('/v1/t2a_v2', {
    model: 'speech-2.8-turbo',
    text,
    voice_setting: { voice_id: voiceId },
    audio_setting: { format: 'wav', sample_rate: 16000 },
  });
}

describe('system voice catalogue', () => {
  it('get_voice lists the whole fixture in file order: voice_id, voice_name and description as written, created_time 1970-01-01, no language', async () => {
    expect(FIXTURE.length).toBeGreaterThan(315);
    const r = await speechApi(emu.speechUrl, 'catalogue-list').post('/v1/get_voice', { voice_type: 'system' });
    expect(codeOf(r)).toBe(0);
    expect(r.body.system_voice).toEqual(
      FIXTURE.map((v) => ({ voice_id: v.voice_id, voice_name: v.voice_name, description: [v.description], created_time: '1970-01-01' })),
    );
    const ids = new Set(r.body.system_voice.map((v: { voice_id: string }) => v.voice_id));
    expect(ids.size).toBe(FIXTURE.length);
    for (const id of [...NAMED, ...CLIENT_DEFAULTS]) expect(ids.has(id), id).toBe(true);
    // The Chinese page's `Santa_Claus ` (trailing space) is its typo of `Santa_Claus`, not a second id.
    expect(ids.has('Santa_Claus')).toBe(true);
    expect(ids.has('Santa_Claus ')).toBe(false);
    for (const v of FIXTURE) {
      expect(v.description, v.voice_id).toMatch(/^[^.]+\.$/); // one sentence
      expect(v.voice_name, v.voice_id).not.toMatch(/\p{Script=Han}/u); // the English display name
    }
  });

  it('a voice of every language synthesizes, and every named id: audio decodes with the length the answer claims', async () => {
    const api = speechApi(emu.speechUrl, 'catalogue-speak');
    const firstOfLanguage = new Map<string, string>();
    for (const v of FIXTURE) if (!firstOfLanguage.has(v.language)) firstOfLanguage.set(v.language, v.voice_id);
    expect(firstOfLanguage.size).toBeGreaterThanOrEqual(24);
    for (const id of [...firstOfLanguage.values(), ...NAMED]) {
      const r = await speak(api, id);
      expect(codeOf(r), `${id}: ${r.text}`).toBe(0);
      const audio = Buffer.from(r.body.data.audio, 'hex');
      const p = await ffprobe(audio, { ext: 'wav' });
      expect(p.sampleRate).toBe(16000);
      expect(Math.abs(p.durationMs - r.body.extra_info.audio_length), id).toBeLessThan(5);
    }
  });

  it('lookup is exact: no trimming, no case folding (2054 naming the id as sent)', async () => {
    const api = speechApi(emu.speechUrl, 'catalogue-exact');
    for (const id of ['Santa_Claus ', ' Santa_Claus', 'santa_claus', 'Chinese (mandarin)_Lyrical_Voice', 'Cantonese_ProfessionalHost(F)']) {
      const r = await speak(api, id);
      expect([r.status, codeOf(r)], id).toEqual([200, 2054]);
      expect(msgOf(r)).toBe(`voice id not exist: voice_setting.voice_id ${id}`);
    }
    expect(codeOf(await speak(api, 'Santa_Claus'))).toBe(0);
  });

  it('two spellings of one voice sound the same; other voices differ; a voice sounds the same every time', async () => {
    const api = speechApi(emu.speechUrl, 'catalogue-timbre');
    const bytes = async (id: string) => {
      const r = await speak(api, id);
      expect(codeOf(r), id).toBe(0);
      return r.body.data.audio as string;
    };
    expect(await bytes('Cantonese_ProfessionalHost (F)')).toBe(await bytes('Cantonese_ProfessionalHost（F)'));
    expect(await bytes('Cantonese_ProfessionalHost (M)')).toBe(await bytes('Cantonese_ProfessionalHost（M)'));
    expect(await bytes('English_Trustworth_Man')).toBe(await bytes('English_Trustworthy_Man'));
    expect(await bytes('Cantonese_ProfessionalHost (F)')).not.toBe(await bytes('Cantonese_ProfessionalHost (M)'));
    expect(await bytes('English_radiant_girl')).not.toBe(await bytes('English_Persuasive_Man'));
    expect(await bytes('Chinese (Mandarin)_Lyrical_Voice')).toBe(await bytes('Chinese (Mandarin)_Lyrical_Voice'));
  });

  it('ids with spaces and parentheses work on the WebSocket, in timber_weights and in async synthesis', async () => {
    const ws = await session(emu.speechUrl, [
      { ...START, voice_setting: { voice_id: 'Chinese (Mandarin)_Reliable_Executive' } },
      { event: 'task_continue', text: '你好，欢迎收听。' },
      { event: 'task_finish' },
    ]);
    expect(ws.messages.map((m) => m.base_resp.status_code).every((c) => c === 0)).toBe(true);
    const [piece] = piecesOf(ws.messages);
    const p = await ffprobe(piece!.audio, { ext: 'mp3' });
    expect(Math.abs(p.durationMs - piece!.extra.audio_length)).toBeLessThan(60);

    const api = speechApi(emu.speechUrl, 'catalogue-spaces');
    const mixed = await api.post('/v1/t2a_v2', {
      model: 'speech-02-hd',
      text: 'Two voices.',
      timber_weights: [
        { voice_id: 'French_Female_News Anchor', weight: 1 },
        { voice_id: 'Cantonese_ProfessionalHost（M)', weight: 2 },
      ],
      voice_setting: { voice_id: '' },
    });
    expect(codeOf(mixed), mixed.text).toBe(0);
    const missing = await api.post('/v1/t2a_v2', {
      model: 'speech-02-hd',
      text: 'Two voices.',
      timber_weights: [{ voice_id: 'French_Female_News Anchor ', weight: 1 }],
      voice_setting: { voice_id: '' },
    });
    expect(msgOf(missing)).toBe('voice id not exist: timber_weights[0].voice_id French_Female_News Anchor ');

    const task = { model: 'speech-02-hd', text: 'A long text, read later.', audio_setting: { audio_sample_rate: 24000, format: 'mp3' } };
    expect(codeOf(await api.post('/v1/t2a_async_v2', { ...task, voice_setting: { voice_id: 'Chinese (Mandarin)_Lyrical_Voice' } }))).toBe(0);
    expect(codeOf(await api.post('/v1/t2a_async_v2', { ...task, voice_setting: { voice_id: 'Chinese (Mandarin)_Lyrical_Voice ' } }))).toBe(2054);
  });

  it('published ids are taken: cloning or designing one is 2039; an id with spaces cannot be chosen at all (2013)', async () => {
    const api = speechApi(emu.speechUrl, 'catalogue-taken');
    expect(codeOf(await api.clone('male-qn-qingse-jingpin'))).toBe(2039);
    expect(codeOf(await api.clone('English_Trustworth_Man'))).toBe(2039);
    const designed = await api.post('/v1/voice_design', { prompt: 'A bright young woman', preview_text: 'Hello.', voice_id: 'English_radiant_girl' });
    expect(codeOf(designed)).toBe(2039);
    const spaced = await api.clone('Chinese (Mandarin)_Lyrical_Voice');
    expect(codeOf(spaced)).toBe(2013);
    expect(msgOf(spaced)).toContain('voice_id may hold only letters, digits, - and _');
  });

  it('a fixture set at run time may use voice_name (or the older name); same_voice_as must name a voice of the file', async () => {
    const ctl = control(emu.speechUrl);
    const api = speechApi(emu.speechUrl, 'catalogue-runtime');
    const extra = [
      { voice_id: 'Extra Voice (A)', voice_name: 'Extra A', language: 'English', description: 'An added voice.' },
      { voice_id: 'extra-b', name: 'Extra B', language: 'English' },
      { voice_id: 'extra-a-again', voice_name: 'Extra A', language: 'English', same_voice_as: 'Extra Voice (A)' },
    ];
    try {
      const put = await ctl.call('PUT', '/fixtures/speech-voices.json', [...FIXTURE, ...extra]);
      expect(put.status, put.text).toBe(200);
      const listed = (await api.post('/v1/get_voice', { voice_type: 'system' })).body.system_voice.slice(-3);
      expect(listed).toEqual([
        { voice_id: 'Extra Voice (A)', voice_name: 'Extra A', description: ['An added voice.'], created_time: '1970-01-01' },
        { voice_id: 'extra-b', voice_name: 'Extra B', description: ['An English voice.'], created_time: '1970-01-01' },
        { voice_id: 'extra-a-again', voice_name: 'Extra A', description: ['An English voice.'], created_time: '1970-01-01' },
      ]);
      expect((await speak(api, 'extra-a-again')).body.data.audio).toBe((await speak(api, 'Extra Voice (A)')).body.data.audio);
      const bad = await ctl.call('PUT', '/fixtures/speech-voices.json', [...FIXTURE, { ...extra[2], same_voice_as: 'nobody' }]);
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('same_voice_as must name another voice_id of the file');
    } finally {
      await ctl.call('POST', '/reset?fixtures=true');
    }
    expect(codeOf(await speak(api, 'extra-b'))).toBe(2054);
  });
});
