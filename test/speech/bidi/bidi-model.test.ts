import { REGISTRY } from '../../../src/app.js';
import { describe, expect, it } from 'vitest';
import { openBidiSession } from '../../../src/services/speech/bidi/model.js';
import { Accounts } from '../../../src/core/state/accounts.js';
import { bidiSettingsOf, DEFAULT_MAX_PENDING_CHARS } from '../../../src/services/speech/bidi/settings.js';
import { DEFAULT_BUFFER_SETTINGS } from '../../../src/services/speech/bidi/buffer.js';
import { speechArea } from '../../../src/services/speech/state.js';
import type { SessionPort } from '../../../src/services/speech/ws/piece.js';
import { emulatorForFile } from '../../helpers/emulator.js';

// The session model driven directly, without a socket: a fake port collects what it sends.
const { emu } = emulatorForFile({ plane: 'speech', freeze: true });

const START = {
  event: 'task_start',
  model: 'speech-2.8-turbo',
  voice_setting: { voice_id: 'male-qn-qingse' },
  audio_setting: { format: 'pcm', sample_rate: 8000 },
};

function session(settings: Partial<typeof DEFAULT_BUFFER_SETTINGS & { maxPendingChars: number }> = {}) {
  const e = emu.emulator;
  const sent: any[] = [];
  const controller = new AbortController();
  let closed: { code: number; reason: string } | null = null;
  const port: SessionPort = {
    signal: controller.signal,
    get closed() {
      return closed !== null;
    },
    streamEnded: null,
    send: (body) => sent.push(body),
    // The guard renders an audio message from its frame (here without pace or faults).
    sendAudio: (frame) => (sent.push(frame.render(frame.audio, { oddHex: false, inflate: 1 })), true),
    close: (code, reason) => {
      closed = { code, reason };
      controller.abort();
    },
    after: (ms, fn, label) => e.clock.after(ms, fn, label),
    cancel: (id) => e.clock.cancel(id),
  };
  const account = e.accounts.put('speech-bidi-model', {});
  const s = openBidiSession(e, port, {
    account,
    area: speechArea(e),
    ids: { sessionId: '123456789012345', connectId: '123456789012345', traceId: 'a'.repeat(32) },
    settings: { ...DEFAULT_BUFFER_SETTINGS, maxPendingChars: DEFAULT_MAX_PENDING_CHARS, ...settings },
    newTrace: () => 'b'.repeat(32),
    now: () => e.clock.now(),
  });
  const msg = (frame: unknown) => s.onMessage(JSON.stringify(frame));
  return { s, sent, msg, closed: () => closed, events: () => sent.map((m) => m.event) };
}

describe('the order of checks of the bidi session model (E8, E9)', () => {
  it.each(['task_continue', 'task_flush', 'task_cancel', 'task_finish'])('%s before task_start is 2202, then close 1000', (name) => {
    const t = session();
    t.msg({ event: name, text: 'Hi.' });
    expect(t.sent).toEqual([
      expect.objectContaining({ event: 'task_failed', base_resp: { status_code: 2202, status_msg: `illegal event: ${name} before task_started` } }),
    ]);
    expect(t.closed()?.code).toBe(1000);
  });

  it('the order check comes before the frame check: task_continue without text before task_start is 2202, after it 2013', () => {
    const before = session();
    before.msg({ event: 'task_continue' });
    expect(before.sent[0].base_resp.status_code).toBe(2202);
    const after = session();
    after.msg(START);
    after.msg({ event: 'task_continue' });
    expect(after.sent.map((m) => m.base_resp.status_code)).toEqual([0, 2013]);
  });

  it('a second task_start is 2206; an unknown event 2202; nothing is answered after the end', () => {
    const t = session();
    t.msg(START);
    t.msg(START);
    expect(t.events()).toEqual(['task_started', 'task_failed']);
    expect(t.sent[1].base_resp.status_code).toBe(2206);
    t.msg({ event: 'task_continue', text: 'ignored' });
    expect(t.sent).toHaveLength(2);
    const u = session();
    u.msg(START);
    u.msg({ event: 'task_pause' });
    expect(u.sent[1].base_resp.status_code).toBe(2202);
  });

  it('whitespace-only text is silent; 2204 is checked before 2205; both are soft', () => {
    const t = session({ maxPendingChars: 5 });
    t.msg(START);
    t.msg({ event: 'task_continue', text: ' \n\t' });
    expect(t.events()).toEqual(['task_started']);
    t.msg({ event: 'task_continue', text: 'x'.repeat(10_001) });
    t.msg({ event: 'task_continue', text: 'abcdef' });
    expect(t.sent.slice(1).map((m) => [m.event, m.base_resp.status_code, m.data, m.is_final])).toEqual([
      ['task_continued', 2204, null, true],
      ['task_continued', 2205, null, true],
    ]);
    t.msg({ event: 'task_continue', text: 'abcde' });
    expect(t.s.view()).toMatchObject({ buffer: 'abcde', phase: 'started' });
    expect(t.closed()).toBeNull();
  });

  it('exactly 10,000 code points are accepted (2204 is for longer texts)', () => {
    const t = session();
    t.msg(START);
    t.msg({ event: 'task_continue', text: 'x'.repeat(10_000) });
    t.msg({ event: 'task_cancel' });
    expect(t.sent.some((m) => m.base_resp.status_code === 2204)).toBe(false);
    expect(t.events()).toEqual(['task_started', 'sentence_start', 'task_canceled']);
  });

  it('flush and cancel with nothing waiting answer at once on the connection trace; after task_finish frames are ignored', () => {
    const t = session();
    t.msg(START);
    t.msg({ event: 'task_flush' });
    t.msg({ event: 'task_cancel' });
    expect(t.events()).toEqual(['task_started', 'task_flushed', 'task_canceled']);
    for (const m of t.sent) expect(m).toMatchObject({ trace_id: 'a'.repeat(32), connect_id: '123456789012345', session_id: '123456789012345' });
    t.msg({ event: 'task_finish' });
    expect(t.events().at(-1)).toBe('task_finished');
    expect(t.closed()?.code).toBe(1000);
  });

  it('the client session_id replaces the connect_id from task_started on', () => {
    const t = session();
    t.msg({ ...START, session_id: 'mine' });
    expect(t.sent[0]).toMatchObject({ event: 'task_started', session_id: 'mine', connect_id: '123456789012345' });
  });

  it('the journal record names every frame and the cuts', () => {
    const t = session();
    t.msg(START);
    t.msg({ event: 'task_continue', text: 'Held tail' });
    t.msg({ event: 'task_cancel' });
    const record = t.s.journal.record;
    expect(record.frames.map((f) => `${f.dir}:${f.event}`)).toEqual([
      'out:connected_success',
      'in:task_start',
      'out:task_started',
      'in:task_continue',
      'in:task_cancel',
      'out:task_canceled',
    ]);
    expect(record.cuts).toEqual([]);
  });
});

describe('bidi settings of an account', () => {
  it('the accounts fixture and a PUT set them over the defaults; a PUT merges', () => {
    const accounts = new Accounts({
      strict: false,
      fixture: [{ key: 'listed', speech_settings: { bidi: { silence_ms: 250 } } }],
      freeCallSeconds: 0,
      registry: REGISTRY.accounts,
    });
    const listed = accounts.put('listed', {});
    expect(bidiSettingsOf(listed)).toEqual({ ...DEFAULT_BUFFER_SETTINGS, silenceMs: 250, maxPendingChars: DEFAULT_MAX_PENDING_CHARS });
    accounts.put('listed', { speech_settings: { bidi: { max_pending_chars: 99 } } });
    expect(bidiSettingsOf(listed)).toMatchObject({ silenceMs: 250, maxPendingChars: 99, backstopMs: 5_000 });
    const plain = accounts.put('plain', {});
    expect(bidiSettingsOf(plain)).toEqual({ ...DEFAULT_BUFFER_SETTINGS, maxPendingChars: 20_000 });
  });
});
