// The /ws/v1/t2a_v2 session (speech/ws/model.ts) through its port, with no socket: one test per check.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../src/core/state/accounts.js';
import type { Emulator } from '../../src/core/emulator.js';
import { speechArea } from '../../src/services/speech/state.js';
import { MAX_PIECE_CHARS, MAX_QUEUED, openSession } from '../../src/services/speech/ws/model.js';
import { IDLE_MS, type SessionPort } from '../../src/services/speech/ws/piece.js';
import { accountOf, modelEmulator } from './model-emulator.js';

let emu: Emulator;
let account: Account;
beforeAll(async () => {
  emu = await modelEmulator();
  account = accountOf(emu, 'session-key');
});

type Sent = { event: string; is_final?: boolean; data?: { audio?: string } | null; base_resp: { status_code: number; status_msg: string } };

/** A port that keeps what the session sent, its close and its timers (run by hand). */
function fakePort() {
  const ac = new AbortController();
  const sent: Sent[] = [];
  const timers = new Map<number, { ms: number; fn: () => void }>();
  let closedWith: { code: number; reason: string } | null = null;
  let nextId = 0;
  const port: SessionPort = {
    signal: ac.signal,
    get closed() {
      return closedWith !== null;
    },
    streamEnded: null,
    send: (body) => void sent.push(body as Sent),
    // The guard renders an audio message from its frame (here without pace or faults).
    sendAudio: (frame) => (sent.push(frame.render(frame.audio, { oddHex: false, inflate: 1 }) as Sent), true),
    close: (code, reason) => {
      closedWith = { code, reason };
      ac.abort();
    },
    after: (ms, fn) => (timers.set(++nextId, { ms, fn }), nextId),
    cancel: (id) => void (id !== null && timers.delete(id)),
  };
  return { port, sent, timers, closed: () => closedWith };
}

function session() {
  const t = fakePort();
  const s = openSession(emu, t.port, { account, area: speechArea(emu), sessionId: '1', traceId: 't' });
  const json = (frame: object) => s.onMessage(JSON.stringify(frame));
  const last = () => t.sent.at(-1)!;
  return { ...t, s, json, last };
}

const start = { event: 'task_start', model: 'speech-02-turbo', voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'pcm' } };

describe('speech socket session: the checks of a client message, in order', () => {
  it('not JSON: 2013, then close', () => {
    const t = session();
    t.s.onMessage('{oops');
    expect(t.last()).toMatchObject({ event: 'task_failed', base_resp: { status_code: 2013, status_msg: expect.stringMatching(/message is not valid JSON/) } });
    expect(t.closed()).toMatchObject({ code: 1000 });
  });

  it('JSON that is not an object: 2013', () => {
    const t = session();
    t.s.onMessage('[1]');
    expect(t.last().base_resp).toEqual({ status_code: 2013, status_msg: 'invalid params, message must be a JSON object with an event field' });
  });

  it('no event field: 2202', () => {
    const t = session();
    t.json({ text: 'hi' });
    expect(t.last().base_resp).toEqual({ status_code: 2202, status_msg: 'illegal event: the message has no event field (string)' });
  });

  it('an unknown event: 2202', () => {
    const t = session();
    t.json({ event: 'task_pause' });
    expect(t.last().base_resp.status_msg).toMatch(/^illegal event: unknown event "task_pause"/);
  });

  it('binary frame: 2013', () => {
    const t = session();
    t.s.onBinary();
    expect(t.last().base_resp.status_msg).toBe('invalid params, binary frames are not accepted: send JSON text frames');
  });
});

describe('speech socket session: the order of events', () => {
  it('task_continue before task_started: 2202', () => {
    const t = session();
    t.json({ event: 'task_continue', text: 'Hi.' });
    expect(t.last().base_resp).toEqual({ status_code: 2202, status_msg: 'illegal event: task_continue before task_started' });
  });

  it('task_finish before task_started: 2202', () => {
    const t = session();
    t.json({ event: 'task_finish' });
    expect(t.last().base_resp.status_msg).toBe('illegal event: task_finish before task_started');
  });

  it('task_start with a field the plan refuses: 2013', () => {
    const t = session();
    t.json({ ...start, model: 'speech-99' });
    expect(t.last()).toMatchObject({ event: 'task_failed', base_resp: { status_code: 2013, status_msg: expect.stringMatching(/model must be one of/) } });
  });

  it('task_start twice: 2202', () => {
    const t = session();
    t.json(start);
    expect(t.last().event).toBe('task_started');
    t.json(start);
    expect(t.last().base_resp.status_msg).toBe('illegal event: task_start was already received; one session per connection');
  });

  it('task_continue after task_finish: 2202', () => {
    const t = session();
    t.json(start);
    // A piece still being synthesized keeps the session open after task_finish.
    t.json({ event: 'task_continue', text: 'Still speaking.' });
    t.json({ event: 'task_finish' });
    t.json({ event: 'task_continue', text: 'Late.' });
    expect(t.last().base_resp).toEqual({ status_code: 2202, status_msg: 'illegal event: task_continue after task_finish' });
  });

  it('task_finish twice: 2202', () => {
    const t = session();
    t.json(start);
    t.json({ event: 'task_continue', text: 'Still speaking.' });
    t.json({ event: 'task_finish' });
    t.json({ event: 'task_finish' });
    expect(t.last().base_resp.status_msg).toBe('illegal event: task_finish was already received');
  });
});

describe('speech socket session: the checks of a piece (soft: the session goes on)', () => {
  it('nothing to pronounce: 2203', () => {
    const t = session();
    t.json(start);
    t.json({ event: 'task_continue', text: '...' });
    expect(t.last()).toMatchObject({ event: 'task_continued', is_final: true, base_resp: { status_code: 2203 } });
    expect(t.closed()).toBeNull();
  });

  it('a piece of MAX_PIECE_CHARS characters or more: 2204', () => {
    const t = session();
    t.json(start);
    t.json({ event: 'task_continue', text: 'a'.repeat(MAX_PIECE_CHARS) });
    expect(t.last().base_resp).toMatchObject({ status_code: 2204, status_msg: expect.stringMatching(/a piece must be shorter than 10000/) });
  });

  it('MAX_QUEUED pieces waiting: the next is refused with 2205', () => {
    const t = session();
    t.json(start);
    // The first piece is being synthesized; the next MAX_QUEUED wait; one more is refused.
    for (let i = 0; i <= MAX_QUEUED + 1; i++) t.json({ event: 'task_continue', text: `Piece ${i}.` });
    expect(t.last().base_resp).toMatchObject({ status_code: 2205 });
    t.port.close(1000, 'test over');
  });
});

describe('speech socket session: the idle clock and a whole session', () => {
  it(`${IDLE_MS / 1000} s without a message: 2201, then close`, () => {
    const t = session();
    const idle = [...t.timers.values()].find((x) => x.ms === IDLE_MS)!;
    idle.fn();
    expect(t.last().base_resp).toEqual({ status_code: 2201, status_msg: 'timeout disconnect' });
    expect(t.closed()).toMatchObject({ code: 1000 });
  });

  it('start, one piece, finish: audio through the port, the last one is_final, then task_finished and close 1000', async () => {
    const t = session();
    t.json(start);
    t.json({ event: 'task_continue', text: 'Hello there.' });
    t.json({ event: 'task_finish' });
    for (let i = 0; i < 200 && !t.closed(); i++) await new Promise((r) => setTimeout(r, 10));
    const audio = t.sent.filter((m) => m.data?.audio !== undefined);
    expect(audio.length).toBeGreaterThan(0);
    expect(audio.at(-1)!.is_final).toBe(true);
    expect(t.last().event).toBe('task_finished');
    expect(t.closed()).toEqual({ code: 1000, reason: 'task finished' });
  });
});
