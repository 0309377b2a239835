// The stream guard on its own: a recording transport stands for SSE, chunked bodies and sockets.
import { describe, expect, it } from 'vitest';
import { AUDIO_CHUNK, EVENT_CHUNK, FINAL_AUDIO_CHUNK, StreamGuard, type StreamEnd, type StreamGuardOptions } from '../../src/core/stream/guard.js';
import { JournalEntry, JournalRequest } from '../../src/core/journal/entry.js';

function setUp(options: Partial<StreamGuardOptions> = {}, writeResult: (n: number) => boolean = () => true) {
  const written: string[] = [];
  const actions: string[] = [];
  const ends: [StreamEnd, number][] = [];
  // A real entry: the guard writes on it through its methods only.
  const entry = new JournalEntry(0, 'speech', 'speech', 'POST', '/v1/t2a_v2', null, undefined, new JournalRequest(null, null, null), undefined);
  let finished = 0;
  const guard = new StreamGuard<string>(
    {
      write: (frame) => {
        const ok = writeResult(written.length);
        if (ok) written.push(frame);
        return ok;
      },
      cut: () => void actions.push('cut'),
      endForShutdown: () => void actions.push('shutdown'),
    },
    { entry, finish: () => void finished++, onEnd: (end, chunks) => void ends.push([end, chunks]), ...options },
  );
  return { guard, written, actions, ends, entry, finished: () => finished };
}

describe('stream guard: chunk counting', () => {
  it('counts chunks in the guard and in the journal entry; frames that are not chunks pass uncounted', () => {
    const t = setUp();
    expect(t.guard.send('a', AUDIO_CHUNK)).toBe(true);
    expect(t.guard.send('event', { chunk: false, audio: false, final: false })).toBe(true);
    expect(t.guard.send('b', EVENT_CHUNK)).toBe(true);
    expect(t.written).toEqual(['a', 'event', 'b']);
    expect(t.guard.chunks).toBe(2);
    expect(t.entry.chunks).toBe(2);
  });

  it('a transport that writes asynchronously gets a promise back', async () => {
    const guard = new StreamGuard<string>({ write: async () => true, cut: () => undefined, endForShutdown: () => undefined }, { entry: null });
    const sent = guard.send('a', AUDIO_CHUNK);
    expect(sent).toBeInstanceOf(Promise);
    expect(await sent).toBe(true);
    expect(guard.chunks).toBe(1);
  });
});

describe('stream guard: cut_after_chunks', () => {
  it('N chunks leave, then the connection is cut, noted and finished once', () => {
    const t = setUp({ cutAfterChunks: 2 });
    expect(t.guard.send('a', AUDIO_CHUNK)).toBe(true);
    expect(t.guard.send('b', AUDIO_CHUNK)).toBe(false);
    expect(t.guard.send('c', AUDIO_CHUNK)).toBe(false);
    expect(t.written).toEqual(['a', 'b']);
    expect(t.actions).toEqual(['cut']);
    expect(t.guard.ended).toBe('cut');
    expect(t.entry.note).toBe('connection cut after 2 chunks (fault)');
    expect(t.finished()).toBe(1);
    expect(t.ends).toEqual([['cut', 2]]);
  });

  it('0 cuts before the first chunk leaves', () => {
    const t = setUp({ cutAfterChunks: 0 });
    expect(t.guard.send('a', AUDIO_CHUNK)).toBe(false);
    expect(t.written).toEqual([]);
    expect(t.actions).toEqual(['cut']);
    expect(t.entry.note).toBe('connection cut after 0 chunks (fault)');
  });

  it('a final chunk completes the answer: nothing is cut after it, the next chunk is', () => {
    const t = setUp({ cutAfterChunks: 2 });
    t.guard.send('a', AUDIO_CHUNK);
    expect(t.guard.send('last', FINAL_AUDIO_CHUNK)).toBe(true);
    expect(t.actions).toEqual([]);
    expect(t.guard.send('next answer', AUDIO_CHUNK)).toBe(false);
    expect(t.actions).toEqual(['cut']);
    expect(t.written).toEqual(['a', 'last']);
  });

  it('frames that are not chunks neither count towards the cut nor trigger it', () => {
    const t = setUp({ cutAfterChunks: 1 });
    expect(t.guard.send('event', { chunk: false, audio: false, final: false })).toBe(true);
    expect(t.guard.send('a', AUDIO_CHUNK)).toBe(false);
    expect(t.written).toEqual(['event', 'a']);
  });
});

describe('stream guard: client left', () => {
  it('a write that fails ends the stream as left: noted, finished, logged at debug', () => {
    const debug: string[] = [];
    const t = setUp({ logger: { debug: (m) => void debug.push(m) } }, (n) => n < 1);
    expect(t.guard.send('a', AUDIO_CHUNK)).toBe(true);
    expect(t.guard.send('b', AUDIO_CHUNK)).toBe(false);
    expect(t.guard.ended).toBe('left');
    expect(t.guard.chunks).toBe(1);
    expect(t.entry.note).toBe('client left before the end of the stream');
    expect(t.finished()).toBe(1);
    expect(debug).toEqual(['client left before the end of the stream']);
    expect(t.actions).toEqual([]);
  });

  it('the transport may say so itself (a close event); a second end changes nothing', () => {
    const t = setUp({ cutAfterChunks: 1 });
    t.guard.send('a', AUDIO_CHUNK);
    t.guard.end('left');
    expect(t.guard.ended).toBe('cut');
    expect(t.ends).toEqual([['cut', 1]]);
  });
});

describe('stream guard: shutdown', () => {
  it('no frame starts once the emulator closes: the transport ends cleanly, noted, not finished by the guard', () => {
    const closing = new AbortController();
    const t = setUp({ closing: closing.signal });
    expect(t.guard.send('a', AUDIO_CHUNK)).toBe(true);
    closing.abort();
    expect(t.guard.send('b', AUDIO_CHUNK)).toBe(false);
    expect(t.written).toEqual(['a']);
    expect(t.actions).toEqual(['shutdown']);
    expect(t.entry.note).toBe('stream ended by shutdown');
    expect(t.finished()).toBe(0);
    expect(t.ends).toEqual([['shutdown', 1]]);
  });
});

describe('stream guard: finish', () => {
  it('done is said by the transport: no note, no finish by the guard (the body ends cleanly)', () => {
    const t = setUp();
    t.guard.send('a', FINAL_AUDIO_CHUNK);
    t.guard.end('done');
    expect(t.entry.note).toBeUndefined();
    expect(t.finished()).toBe(0);
    expect(t.ends).toEqual([['done', 1]]);
  });
});

describe('stream guard: pulled frames', () => {
  async function collect(source: AsyncIterable<string>) {
    const out: string[] = [];
    for await (const frame of source) out.push(frame);
    return out;
  }
  async function* letters(n: number) {
    for (let i = 0; i < n; i++) yield String.fromCharCode(97 + i);
  }

  it('hands every frame on and ends done', async () => {
    const t = setUp();
    expect(await collect(t.guard.frames(letters(3), AUDIO_CHUNK))).toEqual(['a', 'b', 'c']);
    expect(t.guard.chunks).toBe(3);
    expect(t.ends).toEqual([['done', 3]]);
  });

  it('the same cut: N frames handed on, then the connection is cut', async () => {
    const t = setUp({ cutAfterChunks: 2 });
    expect(await collect(t.guard.frames(letters(5), AUDIO_CHUNK))).toEqual(['a', 'b']);
    expect(t.actions).toEqual(['cut']);
    expect(t.entry.note).toBe('connection cut after 2 chunks (fault)');
  });
});
