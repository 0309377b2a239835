import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { codeOf, msgOf, speechApi } from './beyond.js';
import { req, t2a } from './helpers.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { piecesOf, session, START } from './ws/ws-helpers.js';

/** `usage_characters`, `word_count` and the invisible-character ratio (speech-current.md E20). */
const { emu, ctl } = emulatorForFile({ plane: 'speech', freeze: true });
const LAUGHS = '今天是不是很开心呀(laughs)，当然了！';
const pcm = { audio_setting: { format: 'pcm', sample_rate: 8000 } };
/** One character at the default price (fixtures/billing.json). */
const PRICE = 100;

describe('counting', () => {
  it('usage_characters: every code point once, a Chinese character twice, pause markers removed; word_count as before', async () => {
    const cases: [string, number, number][] = [
      [LAUGHS, 34, 13],
      ['Hello, world.', 13, 2],
      ['Hello <#0.5#> world.', 13, 2], // "Hello  world." once the marker is gone
      ['Line one.\nLine two!', 19, 4],
      ['こんにちは 안녕', 8, 7], // kana and Hangul count once
    ];
    for (const [text, usage, words] of cases) {
      const r = await t2a(emu.speechUrl, req({ ...pcm, model: 'speech-2.8-hd' }, text), { key: 'count-http' });
      expect(codeOf(r), text).toBe(0);
      expect([r.body.extra_info.usage_characters, r.body.extra_info.word_count], text).toEqual([usage, words]);
    }
  });

  it('billing and the character window use usage_characters', async () => {
    await ctl.putAccount('count-bill', { balance_micro: 100_000, limits: { characters_per_minute: 40 } });
    const before = (await ctl.account('count-bill')).body.balance_micro;
    expect(codeOf(await t2a(emu.speechUrl, req(pcm, LAUGHS), { key: 'count-bill' }))).toBe(0);
    expect((await ctl.account('count-bill')).body.balance_micro).toBe(before - 34 * PRICE);
    // 34 used of 40: "Hello, world." (13) does not fit, "Hi!" (3) does.
    const refused = await t2a(emu.speechUrl, req(pcm, 'Hello, world.'), { key: 'count-bill' });
    expect([codeOf(refused), msgOf(refused)]).toEqual([1039, 'token limit']);
    expect(codeOf(await t2a(emu.speechUrl, req(pcm, 'Hi!'), { key: 'count-bill' }))).toBe(0);
  });

  it('each WebSocket piece, the async creation and the clone preview count the same way', async () => {
    const ws = await session(
      emu.speechUrl,
      [START, { event: 'task_continue', text: LAUGHS }, { event: 'task_continue', text: 'Hello, world.' }, { event: 'task_finish' }],
      { key: 'count-ws' },
    );
    const pieces = piecesOf(ws.messages);
    expect(pieces.map((p) => [p.extra.usage_characters, p.extra.word_count])).toEqual([
      [34, 13],
      [13, 2],
    ]);
    const probe = await ffprobe(pieces[1]!.audio, { ext: 'mp3' });
    expect(Math.abs(probe.durationMs - pieces[1]!.extra.audio_length)).toBeLessThan(60);

    const api = speechApi(emu.speechUrl, 'count-more');
    const task = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: LAUGHS, voice_setting: { voice_id: 'male-qn-qingse' } });
    expect([codeOf(task), task.body.usage_characters]).toEqual([0, 34]);
    const clone = await api.clone('CountVoice01', { text: 'Hello, world.', model: 'speech-02-hd' });
    expect(codeOf(clone)).toBe(0);
    expect(clone.body.extra_info).toMatchObject({ usage_characters: 13, word_count: 2 });
  });

  it('invisible characters are the ASCII controls but tab and newline; the ratio has 4 decimals; above 0.1 is 1042', async () => {
    const ratioOf = async (text: string) => {
      const r = await t2a(emu.speechUrl, req(pcm, text), { key: 'count-ratio' });
      return codeOf(r) === 0 ? (r.body.extra_info.invisible_character_ratio as number) : codeOf(r);
    };
    // Emoji with zero-width joiners, variation selectors, zero-width spaces: not invisible characters.
    expect(await ratioOf('Hi 👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦.')).toBe(0);
    expect(await ratioOf('I ❤️ it\u200b\u200b\u200b\u200b.')).toBe(0);
    expect(await ratioOf('Tab\tand\nnewline.')).toBe(0);
    expect(await ratioOf('Hello world, how are you\u0001?')).toBe(0.0385); // 1 of 26
    expect(await ratioOf('Carriage\r\nreturn')).toBe(0.0625); // \r counts: 1 of 16
    expect(await ratioOf('abcdefghi\u007f')).toBe(0.1); // exactly 10%: allowed
    expect(await ratioOf('abcdefgh\u0000\u001f')).toBe(1042);
    const r = await t2a(emu.speechUrl, req(pcm, 'Hi\r\r\r'), { key: 'count-ratio' });
    expect([r.status, codeOf(r), msgOf(r)]).toEqual([200, 1042, 'invisible character ratio limit']);

    const ws = await session(emu.speechUrl, [START, { event: 'task_continue', text: 'Hi 👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦.' }, { event: 'task_continue', text: 'Hi\u0001\u0002' }], {
      key: 'count-ratio',
    });
    expect(piecesOf(ws.messages)[0]!.extra.invisible_character_ratio).toBe(0);
    const failed = ws.messages.at(-1);
    expect([failed.event, failed.base_resp.status_code]).toEqual(['task_failed', 1042]);
  });
});
