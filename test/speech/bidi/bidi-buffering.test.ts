import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../../helpers/emulator.js';
import { until } from '../ws/ws-helpers.js';
import { BIDI_START, sentencesOf, startedClient, type BidiClient } from './bidi-helpers.js';

// The clock is frozen: text stays buffered until a test advances it.
const { emu, ctl } = emulatorForFile({ plane: 'speech', freeze: true });

const PCM = { ...BIDI_START, audio_setting: { format: 'pcm', sample_rate: 8000 } };
const text = (t: unknown) => ({ event: 'task_continue', text: t });
const FLUSH = { event: 'task_flush' };

let keyNo = 0;
/** A started session of a fresh account (with bidi settings when given). */
async function open(settings?: Record<string, number>, start: Record<string, unknown> = PCM): Promise<BidiClient & { key: string }> {
  const key = `speech-bidi-buf-${++keyNo}`;
  if (settings) await ctl.putAccount(key, { speech_settings: { bidi: settings } });
  return Object.assign(await startedClient(emu.speechUrl, start, { key }), { key });
}

/** The open bidi sockets of an account, as the state view shows them. */
async function sockets(key: string): Promise<any[]> {
  return (await ctl.accountState(key))?.resources.speech_bidi?.open_sockets ?? [];
}

/** Waits until the server has taken every frame sent (its view shows the buffer). */
async function buffered(c: { key: string }, expected: string): Promise<void> {
  await until(async () => (await sockets(c.key))[0]?.buffer === expected);
}

/** The journal record of the account's bidi socket. */
async function recordOf(key: string): Promise<any> {
  const account = (await ctl.accountState(key)).account;
  const entries = (await ctl.journal({ path: '/ws/v1/t2a_v2_bidi' })).body.entries;
  return entries.find((e: any) => e.account === account).response.summary;
}

/** Sentence texts as the journal's cuts show them (dropped fragments have sentence null). */
async function cutsOf(key: string): Promise<any[]> {
  return (await recordOf(key)).cuts;
}

const starts = (c: BidiClient) => c.messages.filter((m) => m.event === 'sentence_start').length;
/** Flushes and waits for task_flushed, so every sentence made so far has ended. */
async function settle(c: BidiClient): Promise<void> {
  const n = c.messages.filter((m) => m.event === 'task_flushed').length;
  c.send(FLUSH);
  await c.waitFor((m) => m.event === 'task_flushed', n + 1);
}

describe('buffering through the socket, on the emulator clock (E6)', () => {
  it('text without an end stays buffered; the silence window (600 ms) makes a sentence of a long enough tail', async () => {
    const c = await open();
    c.send(text('Hel'));
    c.send(text('lo there my friend'));
    await buffered(c, 'Hello there my friend');
    const [view] = await sockets(c.key);
    const now = (await ctl.clock()).body.now_ms;
    expect(view).toMatchObject({ phase: 'started', queue: [], in_progress: null, flushes_waiting: 0 });
    expect(view.timers).toEqual({ silence: now + 600, backstop: now + 5_000, idle: now + 120_000 });
    expect((await ctl.accountState(c.key)).pending_timers.map((t: any) => t.label).sort()).toEqual([
      'bidi backstop window',
      'bidi idle timeout',
      'bidi silence window',
    ]);
    await ctl.advance(599);
    expect(starts(c)).toBe(0);
    await ctl.advance(1);
    await c.waitFor((m) => m.event === 'sentence_end');
    expect(await cutsOf(c.key)).toEqual([expect.objectContaining({ reason: 'silence', text: 'Hello there my friend', sentence: 1 })]);
    c.ws.close();
  });

  it('a short tail waits for the backstop (5,000 ms); a final mark cuts at once', async () => {
    const c = await open();
    c.send(text('Half a wo'));
    await buffered(c, 'Half a wo');
    await ctl.advance(600);
    await ctl.advance(4_399);
    expect(starts(c)).toBe(0);
    expect((await sockets(c.key))[0].buffer).toBe('Half a wo');
    await ctl.advance(1);
    await c.waitFor((m) => m.event === 'sentence_end');
    c.send(text('rd. Next'));
    await c.waitFor((m) => m.event === 'sentence_end', 2);
    await buffered(c, ' Next');
    expect((await cutsOf(c.key)).map((x: any) => [x.reason, x.text])).toEqual([
      ['backstop', 'Half a wo'],
      ['final', 'rd.'],
    ]);
    c.ws.close();
  });

  it('final marks incl. the full-width semicolon; runs and closing quotes stay; a fragment with nothing to say is dropped', async () => {
    const c = await open();
    c.send(text('第一句；第二句。“Really?!” he said. ... ok'));
    await buffered(c, ' ok');
    await settle(c);
    expect((await cutsOf(c.key)).map((x: any) => [x.text, x.sentence])).toEqual([
      ['第一句；', 1],
      ['第二句。', 2],
      ['“Really?!”', 3],
      ['he said.', 4],
      ['...', null],
      ['ok', 5],
    ]);
    expect(starts(c)).toBe(5);
    c.ws.close();
  });

  it('3.14 sent as "3." + "14" stays whole; a secondary mark cuts once the clause has 20 characters', async () => {
    const c = await open();
    c.send(text('Pi is 3.'));
    await buffered(c, 'Pi is 3.');
    c.send(text('14, more or less, and this clause is long enough, so'));
    await buffered(c, ' so');
    expect((await cutsOf(c.key)).map((x: any) => [x.reason, x.text])).toEqual([
      ['secondary', 'Pi is 3.14, more or less,'],
      ['secondary', 'and this clause is long enough,'],
    ]);
    c.ws.close();
  });

  it('a cut never falls inside a pause marker or a tag; an unclosed one waits', async () => {
    const c = await open();
    c.send(text('Wait <#0.5'));
    c.send(text('#> then go. Laugh (laughs. ok'));
    await buffered(c, ' Laugh (laughs. ok');
    expect((await cutsOf(c.key)).map((x: any) => x.text)).toEqual(['Wait <#0.5#> then go.']);
    c.ws.close();
  });

  it('the forced split at 200 code points cuts at the last whitespace of the second half', async () => {
    const c = await open();
    const words = Array.from({ length: 50 }, (_, i) => `word${i}`).join(' ');
    c.send(text(words));
    await until(async () => (await sockets(c.key))[0]?.buffer.length < words.length);
    const [cut] = await cutsOf(c.key);
    expect(cut.reason).toBe('forced');
    expect(cut.text.length).toBeLessThanOrEqual(200);
    expect(cut.text.length).toBeGreaterThan(100);
    expect(words.startsWith(`${cut.text} `)).toBe(true);
    c.ws.close();
  });

  it('whitespace-only text is dropped without any event and does not restart the windows', async () => {
    const c = await open();
    c.send(text('Long enough tail'));
    await buffered(c, 'Long enough tail');
    await ctl.advance(500);
    c.send(text('   '));
    c.send(text(''));
    c.send(text('\n'));
    // connected_success, task_start, task_started and four task_continue frames have reached the server.
    await until(async () => (await recordOf(c.key)).frames_total === 7);
    await ctl.advance(100);
    await c.waitFor((m) => m.event === 'sentence_end');
    expect(c.events().filter((e) => e !== 'sentence_start' && e !== 'task_continued' && e !== 'sentence_end')).toEqual(['connected_success', 'task_started']);
    c.ws.close();
  });

  it('the account settings move every number and are recorded in the journal entry', async () => {
    const settings = { min_clause_chars: 5, max_sentence_chars: 12, silence_ms: 50, min_tail_chars: 3, backstop_ms: 70, max_pending_chars: 100 };
    const c = await open(settings);
    expect((await ctl.account(c.key)).body.speech_settings).toEqual({ bidi: settings });
    c.send(text('Short, abcdefghijklmno'));
    await buffered(c, 'lmno');
    await ctl.advance(50);
    await c.waitFor((m) => m.event === 'sentence_end', 3);
    expect((await cutsOf(c.key)).map((x: any) => [x.reason, x.text])).toEqual([
      ['secondary', 'Short,'],
      ['forced', 'abcdefghijk'], // 12 code points with the leading space
      ['silence', 'lmno'],
    ]);
    const entry = (await ctl.journal({ path: '/ws/v1/t2a_v2_bidi' })).body.entries.find((e: any) => e.response.summary?.settings?.silence_ms === 50);
    expect(entry.response.summary.settings).toEqual(settings);
    expect(entry.response.summary.timers).toEqual([expect.objectContaining({ timer: 'silence', cuts: 1 })]);
    c.ws.close();
  });

  it('settings out of range are refused by the control plane, naming the field', async () => {
    const r = await ctl.putAccount('speech-bidi-bad', { speech_settings: { bidi: { max_sentence_chars: 10_000 } } });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('max_sentence_chars');
  });
});

describe('task_flush (E8)', () => {
  it('with nothing buffered, queued or in flight, task_flushed comes at once', async () => {
    const c = await open();
    c.send(FLUSH);
    await c.waitFor((m) => m.event === 'task_flushed');
    expect(c.events()).toEqual(['connected_success', 'task_started', 'task_flushed']);
    expect(c.messages[2].trace_id).toBe(c.messages[0].trace_id);
    c.ws.close();
  });

  it('cuts the buffer by the rules, the rest becomes the last sentence; task_flushed follows its sentence_end; several flushes in order', async () => {
    const c = await open();
    c.send(text('Hello. How'));
    c.send(FLUSH);
    c.send(FLUSH);
    c.send(text('Again, a third one'));
    c.send(FLUSH);
    await c.waitFor((m) => m.event === 'task_flushed', 3);
    const order = c.events().filter((e) => e !== 'task_continued');
    expect(order).toEqual([
      'connected_success',
      'task_started',
      'sentence_start',
      'sentence_end',
      'sentence_start',
      'sentence_end',
      'task_flushed',
      'task_flushed',
      'sentence_start',
      'sentence_end',
      'task_flushed',
    ]);
    expect((await cutsOf(c.key)).map((x: any) => [x.reason, x.text])).toEqual([
      ['final', 'Hello.'],
      ['flush', 'How'],
      ['flush', 'Again, a third one'],
    ]);
    // The flushed audio ends with its is_final, before task_flushed.
    const i = c.messages.findIndex((m) => m.event === 'task_flushed');
    expect(c.messages[i - 2]).toMatchObject({ event: 'task_continued', is_final: true });
    c.ws.close();
  });
});

describe('task_cancel (E8)', () => {
  it('mid-sentence: the audio stops at once, no is_final or sentence_end, queued sentences are dropped and never billed; the session goes on', async () => {
    // A long sentence (the cap raised) keeps the synthesis busy for many chunks.
    const c = await open({ max_sentence_chars: 9_000 }, BIDI_START);
    await ctl.putAccount(c.key, { balance_micro: 10_000_000 });
    c.send(text(`${'A long sentence that goes on and on '.repeat(120)}to its end. Second sentence. Third sentence.`));
    await c.waitFor((m) => m.event === 'task_continued');
    c.send(FLUSH); // outstanding when the cancel arrives: answered before task_canceled
    c.send({ event: 'task_cancel' });
    await c.waitFor((m) => m.event === 'task_canceled');
    const i = c.events().indexOf('task_canceled');
    expect(c.events()[i - 1]).toBe('task_flushed');
    expect(c.messages[i].trace_id).toBe(c.messages[0].trace_id);
    // Nothing more arrives for the cancelled sentence.
    await new Promise((r) => setTimeout(r, 300));
    expect(c.messages.length).toBe(i + 1);
    const [first] = sentencesOf(c.messages);
    expect(first!.ended).toBe(false);
    expect(first!.chunks.some((m) => m.is_final)).toBe(false);
    expect(c.events().filter((e) => e === 'sentence_start')).toHaveLength(1);
    // Only the started sentence was billed, in full.
    const view = await ctl.accountState(c.key);
    expect(view.resources.speech.requests).toBe(1);
    expect(view.balance_micro).toBe(10_000_000 - view.resources.speech.usage_characters * 100);
    expect((await sockets(c.key))[0]).toMatchObject({ phase: 'started', buffer: '', queue: [], in_progress: null });
    // The session stays started.
    c.send(text('Still here.'));
    await c.waitFor((m) => m.event === 'sentence_end');
    expect(sentencesOf(c.messages).at(-1)!.extra.audio_size).toBeGreaterThan(0);
    c.ws.close();
  });

  it('with nothing running, task_canceled at once and the buffer is dropped', async () => {
    const c = await open();
    c.send(text('Buffered tail'));
    await buffered(c, 'Buffered tail');
    c.send({ event: 'task_cancel' });
    await c.waitFor((m) => m.event === 'task_canceled');
    expect((await sockets(c.key))[0]).toMatchObject({ buffer: '', timers: { silence: null, backstop: null } });
    await ctl.advance(10_000);
    expect(starts(c)).toBe(0);
    c.ws.close();
  });
});

describe('task_finish (E8)', () => {
  it('flushes a trailing unfinished sentence, then task_finished and close 1000; later frames are ignored', async () => {
    const c = await open();
    c.send(text('One. And a tail'));
    c.send({ event: 'task_finish' });
    c.send(text('late'));
    c.send({ event: 'nonsense' });
    const closed = await c.closed;
    expect(c.events().filter((e) => e !== 'task_continued')).toEqual([
      'connected_success',
      'task_started',
      'sentence_start',
      'sentence_end',
      'sentence_start',
      'sentence_end',
      'task_finished',
    ]);
    expect(closed.code).toBe(1000);
  });
});

describe('the state view and reset', () => {
  it('shows the queue and the sentence in progress; a reset closes the socket and leaves nothing', async () => {
    const c = await open({ max_sentence_chars: 9_000 });
    c.send(text(`${'Keep the synthesis busy for a while '.repeat(100)}. Next one. And another.`));
    await c.waitFor((m) => m.event === 'task_continued');
    const [view] = await sockets(c.key);
    expect(view.in_progress).toMatchObject({ sentence: 1, trace_id: c.messages.find((m) => m.event === 'sentence_start').trace_id });
    expect(view.queue).toEqual([
      { sentence: 2, text: 'Next one.' },
      { sentence: 3, text: 'And another.' },
    ]);
    expect(view.connect_id).toBe(c.messages[0].connect_id);
    await ctl.reset(c.key);
    expect((await c.closed).code).toBe(1012);
    await until(async () => (await sockets(c.key)).length === 0);
  });
});
