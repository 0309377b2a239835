import { beforeAll, describe, expect, it } from 'vitest';
import { accountId } from '../../src/core/state/accounts.js';
import { putCustomVoice } from '../../src/services/shared/custom-voices.js';
import { emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { req, t2a, VOICE, VOICE_B } from './helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });
let url: string;
const pcm8k = { audio_setting: { format: 'pcm', sample_rate: 8000 } };

beforeAll(() => {
  url = emu.speechUrl;
});

/** Expects an error in the speech shape: HTTP 200 (unless given), code, message, Trace-Id = trace_id. */
function expectError(r: Awaited<ReturnType<typeof t2a>>, code: number, msg?: string | RegExp, http = 200) {
  expect(r.status).toBe(http);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.body.base_resp.status_code).toBe(code);
  if (typeof msg === 'string') expect(r.body.base_resp.status_msg).toBe(msg);
  else if (msg) expect(r.body.base_resp.status_msg).toMatch(msg);
  expect(r.body.trace_id).toMatch(/^[0-9a-f]{32}$/);
  expect(r.headers.get('trace-id')).toBe(r.body.trace_id);
}

describe('authentication and accounts', () => {
  it('missing, empty and disabled keys are 1004 with the real texts', async () => {
    const login = "login fail: Please carry the API secret key in the 'Authorization' field of the request header";
    expectError(await t2a(url, req(), { key: null }), 1004, login);
    expectError(await t2a(url, req(), { key: '' }), 1004, login);
    expectError(await t2a(url, req(), { headers: { authorization: 'Basic abc' }, key: null }), 1004, login);
    expectError(await t2a(url, req(), { key: 'emulator-disabled-key' }), 1004, /^login fail/);
  });

  it('a key without the tts capability is 1004', async () => {
    await ctl.putAccount('speech-no-tts', { capabilities: ['cloning'] });
    expectError(await t2a(url, req(), { key: 'speech-no-tts' }), 1004, /^login fail: .*tts/);
  });

  it('balance 0 and a price over the balance are 1008; usage is charged per billed character', async () => {
    expectError(await t2a(url, req(), { key: 'emulator-broke-key' }), 1008, 'insufficient balance');
    await ctl.putAccount('speech-poor', { balance_micro: 500 });
    // 11 billed characters at 100 micro each = 1100 > 500.
    expectError(await t2a(url, req({}, 'Hello world'), { key: 'speech-poor' }), 1008, 'insufficient balance');
    const ok = await t2a(url, req(pcm8k, 'Hi yo'), { key: 'speech-poor' });
    expect(ok.body.base_resp.status_code).toBe(0);
    expect(ok.body.extra_info.usage_characters).toBe(5);
    expect((await ctl.account('speech-poor')).body.balance_micro).toBe(0);
    expectError(await t2a(url, req(pcm8k, 'Hi'), { key: 'speech-poor' }), 1008);
  });

  it('?GroupId= and ?groupId= are accepted and ignored; Trace-Id equals trace_id on success', async () => {
    for (const q of ['?GroupId=123456', '?groupId=', '?GroupId=']) {
      const r = await t2a(url, req(pcm8k), { query: q });
      expect(r.body.base_resp).toEqual({ status_code: 0, status_msg: 'success' });
      expect(r.headers.get('trace-id')).toBe(r.body.trace_id);
      expect(r.body.trace_id).toMatch(/^[0-9a-f]{32}$/);
    }
  });
});

describe('fault directives and rate windows', () => {
  it('code faults give the code with its real text, before the key is even checked', async () => {
    const texts: Record<number, string> = { 1000: 'unknown error', 1001: 'request timeout', 1002: 'rate limit exceeded(RPM)', 1039: 'token limit' };
    for (const [code, text] of Object.entries(texts))
      expectError(await t2a(url, req(), { key: null, headers: { 'x-emulator-fault': `code=${code}` } }), Number(code), text);
  });

  it('status faults give that HTTP status with a fitting base_resp code', async () => {
    expectError(await t2a(url, req(), { headers: { 'x-emulator-fault': 'status=503' } }), 1000, 'unknown error', 503);
    expectError(await t2a(url, req(), { headers: { 'x-emulator-fault': 'status=429' } }), 1002, undefined, 429);
    expectError(await t2a(url, req(), { headers: { 'x-emulator-fault': 'status=504' } }), 1001, undefined, 504);
  });

  it('a queued rule answers 1039 on the next call only', async () => {
    await ctl.addFault({ service: 'speech', path: '/v1/t2a_v2', times: 1, fault: { code: 1039 } });
    expectError(await t2a(url, req(pcm8k)), 1039, 'token limit');
    expect((await t2a(url, req(pcm8k))).body.base_resp.status_code).toBe(0);
  });

  it('requests_per_minute gives 1002 and reopens when the clock moves a minute', async () => {
    await ctl.putAccount('speech-rpm', { limits: { requests_per_minute: 2 } });
    for (let i = 0; i < 2; i++) expect((await t2a(url, req(pcm8k), { key: 'speech-rpm' })).body.base_resp.status_code).toBe(0);
    expectError(await t2a(url, req(pcm8k), { key: 'speech-rpm' }), 1002, 'rate limit exceeded(RPM)');
    await ctl.advance(60_001);
    expect((await t2a(url, req(pcm8k), { key: 'speech-rpm' })).body.base_resp.status_code).toBe(0);
  });

  it('characters_per_minute gives 1039 and reopens when the clock moves a minute', async () => {
    await ctl.putAccount('speech-cpm', { limits: { characters_per_minute: 20 } });
    for (let i = 0; i < 2; i++) expect((await t2a(url, req(pcm8k, 'Helloworld'), { key: 'speech-cpm' })).body.base_resp.status_code).toBe(0);
    expectError(await t2a(url, req(pcm8k, 'Hi'), { key: 'speech-cpm' }), 1039, 'token limit');
    await ctl.advance(60_001);
    expect((await t2a(url, req(pcm8k, 'Hello world'), { key: 'speech-cpm' })).body.base_resp.status_code).toBe(0);
  });

  it('limits are off by default', async () => {
    for (let i = 0; i < 4; i++) expect((await t2a(url, req(pcm8k, 'Hi'), { key: 'speech-unlimited' })).body.base_resp.status_code).toBe(0);
  });
});

describe('request validation (2013 names the field and the rule)', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['model missing', { text: 'Hi', voice_setting: { voice_id: VOICE } }, 'invalid params, model is required'],
    ['model unknown', req({ model: 'speech-03' }), 'invalid params, model must be one of'],
    ['text missing', { model: 'speech-02-hd', voice_setting: { voice_id: VOICE } }, 'invalid params, text is required'],
    ['text wrong type', req({ text: 42 }), 'invalid params, text must be a string'],
    ['text empty', req({ text: '' }), 'invalid params, text is required'],
    ['stream wrong type', req({ stream: 'yes' }), 'invalid params, stream must be a boolean'],
    ['speed low', req({ voice_setting: { voice_id: VOICE, speed: 0.4 } }), 'invalid params, voice_setting.speed must be in [0.5, 2]'],
    ['speed high', req({ voice_setting: { voice_id: VOICE, speed: 2.1 } }), 'invalid params, voice_setting.speed must be in [0.5, 2]'],
    ['vol zero', req({ voice_setting: { voice_id: VOICE, vol: 0 } }), 'invalid params, voice_setting.vol must be in (0, 10]'],
    ['vol high', req({ voice_setting: { voice_id: VOICE, vol: 10.5 } }), 'invalid params, voice_setting.vol must be in (0, 10]'],
    ['pitch float', req({ voice_setting: { voice_id: VOICE, pitch: 1.5 } }), 'invalid params, voice_setting.pitch must be an integer in [-12, 12]'],
    ['pitch high', req({ voice_setting: { voice_id: VOICE, pitch: 13 } }), 'invalid params, voice_setting.pitch must be an integer in [-12, 12]'],
    [
      'emotion unknown',
      req({ voice_setting: { voice_id: VOICE, emotion: 'bored' } }),
      'invalid params, voice_setting.emotion bored is not supported by speech-02-turbo; it accepts happy, sad, angry, fearful, disgusted, surprised, calm',
    ],
    [
      'fluent on speech-02',
      req({ voice_setting: { voice_id: VOICE, emotion: 'fluent' } }),
      'invalid params, voice_setting.emotion fluent is not supported by speech-02-turbo',
    ],
    [
      'whisper on speech-01',
      req({ model: 'speech-01-hd', voice_setting: { voice_id: VOICE, emotion: 'whisper' } }),
      'invalid params, voice_setting.emotion whisper',
    ],
    [
      'sample rate',
      req({ audio_setting: { sample_rate: 48000 } }),
      'invalid params, audio_setting.sample_rate must be one of 8000, 16000, 22050, 24000, 32000, 44100',
    ],
    ['bitrate', req({ audio_setting: { bitrate: 96000 } }), 'invalid params, audio_setting.bitrate must be one of 32000, 64000, 128000, 256000'],
    ['format', req({ audio_setting: { format: 'ogg' } }), 'invalid params, audio_setting.format must be one of mp3, pcm, flac, wav, pcmu_raw, pcmu_wav, opus'],
    ['channel', req({ audio_setting: { channel: 3 } }), 'invalid params, audio_setting.channel must be one of 1, 2'],
    [
      'wav streamed',
      req({ stream: true, audio_setting: { format: 'wav' } }),
      'invalid params, audio_setting.format wav is supported only in non-streaming output',
    ],
    ['voice_id missing', { model: 'speech-02-hd', text: 'Hi', voice_setting: {} }, 'invalid params, voice_setting.voice_id is required'],
    ['voice_setting missing', { model: 'speech-02-hd', text: 'Hi' }, 'invalid params, voice_setting is required'],
    ['voice_id empty', req({ voice_setting: { voice_id: '' } }), 'invalid params, voice_setting.voice_id must not be empty unless timber_weights is given'],
    ['weights empty', req({ timber_weights: [] }), 'invalid params, timber_weights must hold 1 to 4 voices'],
    [
      'weights five',
      req({ timber_weights: Array.from({ length: 5 }, () => ({ voice_id: VOICE, weight: 1 })) }),
      'invalid params, timber_weights must hold 1 to 4 voices',
    ],
    ['weight zero', req({ timber_weights: [{ voice_id: VOICE, weight: 0 }] }), 'invalid params, timber_weights[0].weight must be an integer in [1, 100]'],
    ['weight 101', req({ timber_weights: [{ voice_id: VOICE, weight: 101 }] }), 'invalid params, timber_weights[0].weight must be an integer in [1, 100]'],
    ['weight float', req({ timber_weights: [{ voice_id: VOICE, weight: 1.5 }] }), 'invalid params, timber_weights[0].weight must be an integer in [1, 100]'],
    ['weight alone', req({ timber_weights: [{ voice_id: VOICE, weight: 10 }, { weight: 10 }] }), 'invalid params, timber_weights[1].voice_id is required'],
    ['voice alone', req({ timbre_weights: [{ voice_id: VOICE }] }), 'invalid params, timbre_weights[0].weight is required'],
    ['language_boost', req({ language_boost: 'Klingon' }), 'invalid params, language_boost must be one of Chinese'],
    ['voice_modify pitch', req({ voice_modify: { pitch: 101 } }), 'invalid params, voice_modify.pitch must be an integer in [-100, 100]'],
    ['voice_modify timbre', req({ voice_modify: { timbre: -101 } }), 'invalid params, voice_modify.timbre must be an integer in [-100, 100]'],
    ['sound effect', req({ voice_modify: { sound_effects: 'underwater' } }), 'invalid params, voice_modify.sound_effects must be one of'],
    ['output_format', req({ output_format: 'base64' }), 'invalid params, output_format must be one of url, hex'],
    ['subtitle_enable type', req({ subtitle_enable: 'true' }), 'invalid params, subtitle_enable must be a boolean'],
    ['dict shape', req({ pronunciation_dict: { tone: ['omg'] } }), 'invalid params, pronunciation_dict.tone[0] must have the shape <text>/<replacement>'],
    [
      'dict empty side',
      req({ pronunciation_dict: { tone: ['ok/(ou1)', '/x'] } }),
      'invalid params, pronunciation_dict.tone[1] must have the shape <text>/<replacement>',
    ],
    [
      'annotation tone digit',
      req({ pronunciation_dict: { tone: ['处理/(chu3)(li6)'] } }),
      'invalid params, pronunciation_dict.tone[0] annotation must be (<syllable><tone digit 1-5>) groups',
    ],
    [
      'annotation unclosed',
      req({ pronunciation_dict: { tone: ['ok/x', '处理/(chu3)(li3'] } }),
      'invalid params, pronunciation_dict.tone[1] annotation must be',
    ],
    ['annotation no digit', req({ pronunciation_dict: { tone: ['处理/(chu)(li3)'] } }), 'invalid params, pronunciation_dict.tone[0] annotation must be'],
    ['latex odd', req({ voice_setting: { voice_id: VOICE, latex_read: true } }, 'Area is $$\\pi r^2$$ and $$x'), 'invalid params, text has 3 "$$" delimiters'],
    ['array body', [] as unknown as Record<string, unknown>, 'invalid params, request body must be a JSON object'],
    ['no letters', req({}, '?!... ,'), 'invalid params, text must contain at least one letter or digit'],
  ];
  it.each(cases)('%s', async (_name, body, msg) => {
    const r = await t2a(url, body);
    expectError(r, 2013);
    expect(r.body.base_resp.status_msg.startsWith(msg), r.body.base_resp.status_msg).toBe(true);
  });

  it('text of 10000 characters is refused, 9999 is accepted by validation', async () => {
    expectError(await t2a(url, req({}, 'a'.repeat(10_000))), 2013, 'invalid params, text must be shorter than 10000 characters (got 10000)');
    // A 9,999-character text passes the length rule: the voice check after it answers, so no synthesis runs.
    expectError(await t2a(url, req({ voice_setting: { voice_id: 'nobody' } }, 'a'.repeat(9_999))), 2054);
  });

  it('a body that is not JSON is 2013 starting with "invalid params", also for a wrong content type', async () => {
    expectError(await t2a(url, null, { raw: '{"model": "speech-02-hd", ' }), 2013, /^invalid params/);
    expectError(await t2a(url, null, { raw: 'model=x', headers: { 'content-type': 'text/plain' } }), 2013, /^invalid params/);
  });

  it('faults and the key come before body validation even for a broken body', async () => {
    expectError(await t2a(url, null, { raw: '{oops', key: null }), 1004);
    expectError(await t2a(url, null, { raw: '{oops', headers: { 'x-emulator-fault': 'code=1002' } }), 1002);
  });

  it('order of checks: capability before the body, the body before balance and rate windows', async () => {
    const badSpeed = req({ voice_setting: { voice_id: VOICE, speed: 9 } });
    await ctl.putAccount('speech-order-no-tts', { capabilities: ['cloning'] });
    expectError(await t2a(url, badSpeed, { key: 'speech-order-no-tts' }), 1004);
    expectError(await t2a(url, badSpeed, { key: 'emulator-broke-key' }), 2013, 'invalid params, voice_setting.speed must be in [0.5, 2]');
    expectError(await t2a(url, req({ voice_setting: { voice_id: 'nobody' } }), { key: 'emulator-broke-key' }), 2054);
    expectError(await t2a(url, req({}, 'Hi\u0001\u0002'), { key: 'emulator-broke-key' }), 1042);
    // A refused body does not use up a request of the window; a refused balance neither.
    await ctl.putAccount('speech-order-rpm', { limits: { requests_per_minute: 1 } });
    expectError(await t2a(url, badSpeed, { key: 'speech-order-rpm' }), 2013);
    expect((await t2a(url, req(pcm8k), { key: 'speech-order-rpm' })).body.base_resp.status_code).toBe(0);
    expectError(await t2a(url, badSpeed, { key: 'speech-order-rpm' }), 2013);
    expectError(await t2a(url, req(pcm8k), { key: 'speech-order-rpm' }), 1002);
  });

  it('a well-formed annotation and a replacing word are accepted', async () => {
    const r = await t2a(url, req({ ...pcm8k, pronunciation_dict: { tone: ['处理/(chu3)(li3)', '危险/dangerous', 'omg/oh my god'] } }, '处理危险 omg'));
    expect(r.body.base_resp.status_code).toBe(0);
  });

  it('unknown fields are ignored; null optionals count as absent', async () => {
    const r = await t2a(
      url,
      req({ ...pcm8k, future_field: { x: 1 }, voice_setting: { voice_id: VOICE, emotion: null, speed: null, whatever: true }, language_boost: null }),
    );
    expect(r.body.base_resp.status_code).toBe(0);
  });

  it('unknown voices are 2054, in voice_setting and in timber_weights', async () => {
    expectError(await t2a(url, req({ voice_setting: { voice_id: 'no-such-voice' } })), 2054, /^voice id not exist/);
    expectError(
      await t2a(
        url,
        req({
          timber_weights: [
            { voice_id: VOICE, weight: 50 },
            { voice_id: 'nobody', weight: 50 },
          ],
        }),
      ),
      2054,
      /timber_weights\[1\]/,
    );
  });

  it('a custom voice of the caller account is accepted, and only for that account', async () => {
    // Custom voices live in services/shared (made by the platform's cloning); put one in directly (the control plane has no such setting).
    const custom = 'speech-test-custom-voice';
    const owner = accountId('speech-voice-owner');
    putCustomVoice(emu.emulator, {
      voiceId: custom,
      accountId: owner,
      toneId: 'clone-tone-1',
      refBlob: 'voices/x/ref.wav',
      refFormat: 'wav',
      refDurationMs: 10_000,
      refText: '',
      createdAt: 0,
    });
    const r = await t2a(url, req({ ...pcm8k, voice_setting: { voice_id: custom } }), { key: 'speech-voice-owner' });
    expect(r.body.base_resp.status_code).toBe(0);
    const sys = await t2a(url, req(pcm8k), { key: 'speech-voice-owner' });
    expect(r.body.data.audio).not.toBe(sys.body.data.audio); // the clone's own tone
    expectError(
      await t2a(url, req({ voice_setting: { voice_id: custom } }), { key: 'speech-voice-stranger' }),
      2054,
      'voice id not exist: voice_setting.voice_id speech-test-custom-voice',
    );
    expectError(await t2a(url, req({ timber_weights: [{ voice_id: custom, weight: 5 }] }), { key: 'speech-voice-stranger' }), 2054);
    const mixed = await t2a(
      url,
      req({
        ...pcm8k,
        timber_weights: [
          { voice_id: custom, weight: 5 },
          { voice_id: VOICE, weight: 5 },
        ],
      }),
      { key: 'speech-voice-owner' },
    );
    expect(mixed.body.base_resp.status_code).toBe(0);
  });

  it('invisible characters: ratio reported up to 10%, 1042 above', async () => {
    const ok = await t2a(url, req(pcm8k, `Hello world, how are you${'\u0001'.repeat(1)}?`)); // 1 of 26, to 4 decimals
    expect(ok.body.base_resp.status_code).toBe(0);
    expect(ok.body.extra_info.invisible_character_ratio).toBe(0.0385);
    const clean = await t2a(url, req(pcm8k, 'Hello\nworld\tagain'));
    expect(clean.body.extra_info.invisible_character_ratio).toBe(0);
    const edge = await t2a(url, req(pcm8k, `abcdefghi\r`)); // exactly 10%
    expect(edge.body.extra_info.invisible_character_ratio).toBe(0.1);
    expectError(await t2a(url, req(pcm8k, 'Hello\u0001\u0002\u0007\u007f\u0378')), 1042, 'invisible character ratio limit');
  });

  it('usage_characters and word_count follow the E20 definition', async () => {
    const r = await t2a(url, req(pcm8k, "Hello world, 你好 42! Don't <#0.5#> stop."));
    // 32 code points once the marker is gone, and 你好 counted twice: 34; words: Hello world 你 好 4 2 Don't stop = 8
    expect(r.body.extra_info.usage_characters).toBe(34);
    expect(r.body.extra_info.word_count).toBe(8);
  });

  it('each of the eight models of the catalogue and the two legacy aliases synthesizes', async () => {
    const models = [
      'speech-2.8-hd',
      'speech-2.8-turbo',
      'speech-2.6-hd',
      'speech-2.6-turbo',
      'speech-02-hd',
      'speech-02-turbo',
      'speech-01-hd',
      'speech-01-turbo',
      'speech-01-240228',
      'speech-01-turbo-240228',
    ];
    for (const model of models) {
      const r = await t2a(url, req({ ...pcm8k, model }, 'Hi'));
      expect(r.body.base_resp.status_code, model).toBe(0);
      expect(r.body.data.status).toBe(2);
      expect(r.body.data.audio.length).toBeGreaterThan(1000);
    }
    const fluent = await t2a(url, req({ ...pcm8k, model: 'speech-2.6-turbo', voice_setting: { voice_id: VOICE, emotion: 'whisper' } }, 'Hi'));
    expect(fluent.body.base_resp.status_code).toBe(0);
  });

  // A second emulator side by side: the subject is that two instances answer alike.
  it('same seed and same requests give the same trace ids and bytes on another emulator', async () => {
    const other = await startTestEmulator();
    try {
      const body = req(pcm8k, 'Same again');
      const a = [await t2a(url, body, { key: 'speech-determinism' }), await t2a(url, body, { key: 'speech-determinism' })];
      const b = [await t2a(other.speechUrl, body, { key: 'speech-determinism' }), await t2a(other.speechUrl, body, { key: 'speech-determinism' })];
      expect(b.map((r) => r.body.trace_id)).toEqual(a.map((r) => r.body.trace_id));
      expect(a[0]!.body.trace_id).not.toBe(a[1]!.body.trace_id);
      expect(b[1]!.body.data.audio).toBe(a[0]!.body.data.audio);
    } finally {
      await other.close();
    }
  });

  it('timbre_weights (the other spelling) mixes voices like timber_weights', async () => {
    const w = [
      { voice_id: VOICE, weight: 70 },
      { voice_id: VOICE_B, weight: 30 },
    ];
    const a = await t2a(url, req({ ...pcm8k, voice_setting: { voice_id: '' }, timber_weights: w }, 'Hi'));
    const b = await t2a(url, req({ ...pcm8k, voice_setting: { voice_id: '' }, timbre_weights: w }, 'Hi'));
    expect(a.body.base_resp.status_code).toBe(0);
    expect(b.body.data.audio).toBe(a.body.data.audio);
  });
});

describe('output size (emulator rule where the spec is silent)', () => {
  it('audio longer than 3 hours is 2013 naming text, before any work and before billing', async () => {
    await ctl.putAccount('size-broke', { balance_micro: 0 });
    const text = 'a<#99.99#>'.repeat(110) + 'a'; // 110 markers: 10,999 s of silence
    const r = await t2a(url, req({}, text), { key: 'size-broke' });
    expectError(r, 2013, /^invalid params, text: the audio would last 1\d{4} s, over the emulator's limit of 10800 s/);
  });

  it('a whole file too large for hex inside JSON is 2013 naming audio_setting; streamed without the aggregate it is served', async () => {
    const text = 'Slow speech fills a lot of bytes. '.repeat(290); // 9,860 characters at speed 0.5: about 24 minutes
    const big = { voice_setting: { voice_id: VOICE, speed: 0.5 }, audio_setting: { format: 'pcm', sample_rate: 44100, channel: 2 } };
    const whole = await t2a(url, req(big, text));
    expectError(whole, 2013, /^invalid params, audio_setting: the audio would be about \d+ MB, over the emulator's 200 MB limit/);
    const aggregated = await t2a(url, req({ ...big, stream: true }, text));
    expectError(aggregated, 2013, /200 MB limit/);
    // Without the aggregated file the stream holds nothing whole: it starts (and the client leaves).
    const ac = new AbortController();
    const res = await fetch(`${url}/v1/t2a_v2`, {
      method: 'POST',
      headers: { authorization: 'Bearer size-key', 'content-type': 'application/json' },
      body: JSON.stringify(req({ ...big, stream: true, stream_options: { exclude_aggregated_audio: true } }, text)),
      signal: ac.signal,
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const first = await res.body!.getReader().read();
    expect(new TextDecoder().decode(first.value).startsWith('data: ')).toBe(true);
    ac.abort();
  });
});
