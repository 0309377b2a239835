import { describe, expect, it } from 'vitest';
import { Journal, type JournalEntry } from '../../src/core/journal/journal.js';

const entry = (path: string, accountId?: string) => ({
  at_ms: 0,
  service: 'speech' as const,
  method: 'POST',
  path,
  account: null,
  accountId,
  request: { headers: {} },
  response: {},
});

describe('the journal keeps the newest entries only', () => {
  it('past the limit the oldest leave: list, get, size and kept audio follow, across many compactions', () => {
    const journal = new Journal(3);
    let first: JournalEntry | undefined;
    for (let i = 0; i < 2500; i++) {
      const e = journal.start(entry(`/p${i}`, i % 2 ? 'odd' : 'even'));
      if (i === 2496) first = e;
      if (i === 2496) journal.keepAnswerAudio(e, { bytes: Buffer.alloc(10), size: 10, format: 'mp3', sampleRate: 32000, channels: 1 });
    }
    expect(journal.size()).toBe(3);
    expect(journal.list().map((e) => e.path)).toEqual(['/p2499', '/p2498', '/p2497']);
    expect(journal.get('req_000001')).toBeUndefined();
    expect(journal.get('req_002500')?.path).toBe('/p2499');
    // The entry that held audio has left: its audio went with it.
    expect(first?.answer_audio).toBeUndefined();
    expect(journal.answerAudioOf(first!.id)).toBeUndefined();
    // A left entry takes no new audio.
    journal.keepAudio(first, Buffer.alloc(4), 16000);
    expect(first?.client_audio).toBeUndefined();
  });

  it('clearing one account keeps the others in order; clearing all empties it', () => {
    const journal = new Journal(10);
    for (let i = 0; i < 6; i++) journal.start(entry(`/p${i}`, i % 2 ? 'odd' : 'even'));
    journal.clear('odd');
    expect(journal.list().map((e) => e.path)).toEqual(['/p4', '/p2', '/p0']);
    journal.start(entry('/p6', 'odd'));
    expect(journal.size()).toBe(4);
    journal.clear();
    expect(journal.size()).toBe(0);
    expect(journal.list()).toEqual([]);
  });
});

describe('the journal is bounded in bytes of frame contents', () => {
  it('over the cap the oldest entries lose their frame contents first (frames stay, by size, marked); an entry that leaves gives its bytes back', () => {
    const journal = new Journal(3, undefined, 20_000);
    const text = (n: number) => ({ event: 'x', text: 'y'.repeat(n) });
    const a = journal.start(entry('/ws/a'));
    for (let i = 0; i < 10; i++) journal.recordFrame(a, { dir: 'out', type: 'text', size: 1000, at_ms: i }, text(1000));
    const b = journal.start(entry('/ws/b'));
    for (let i = 0; i < 15; i++) journal.recordFrame(b, { dir: 'out', type: 'text', size: 1000, at_ms: i }, text(1000));
    // a (the older) lost its contents, b kept all of its own
    expect(a.ws_frames!.every((f) => f.content === undefined && f.truncated === true)).toBe(true);
    expect(a.ws_frames_truncated).toBe(true);
    expect(a.ws_frames).toHaveLength(10);
    expect(b.ws_frames!.every((f) => f.content !== undefined)).toBe(true);
    // b leaves the journal: a new entry's frames have room again
    for (let i = 0; i < 3; i++) journal.start(entry(`/p${i}`));
    const c = journal.start(entry('/ws/c'));
    for (let i = 0; i < 15; i++) journal.recordFrame(c, { dir: 'out', type: 'text', size: 1000, at_ms: i }, text(1000));
    expect(c.ws_frames!.every((f) => f.content !== undefined)).toBe(true);
  });
});
