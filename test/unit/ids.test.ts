import { describe, expect, it } from 'vitest';
import { Ids, RandomStream } from '../../src/core/state/ids.js';

describe('seeded id streams', () => {
  it('the same seed and name give the same sequence; another name or seed another one', () => {
    const a = new Ids('seed-1');
    const b = new Ids('seed-1');
    const seqA = Array.from({ length: 100 }, () => a.traceId('acct'));
    const seqB = Array.from({ length: 100 }, () => b.traceId('acct'));
    expect(seqA).toEqual(seqB);
    expect(new Set(seqA).size).toBe(100);
    for (const id of seqA) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Ids('seed-1').traceId('other')).not.toBe(seqA[0]);
    expect(new Ids('seed-2').traceId('acct')).not.toBe(seqA[0]);
  });

  it('a stream saved mid-block and loaded goes on exactly where the uninterrupted one goes', () => {
    const whole = new RandomStream('k');
    const expected = [whole.hex(10), whole.uuid(), whole.bytes(2000).toString('hex'), whole.token(40), whole.hex(32)];

    const first = new RandomStream('k');
    const got = [first.hex(10), first.uuid()];
    const saved = JSON.parse(JSON.stringify(first.save()));
    const resumed = new RandomStream('k');
    resumed.load(saved);
    got.push(resumed.bytes(2000).toString('hex'));
    // Across a block boundary too.
    const again = new RandomStream('k');
    again.load(JSON.parse(JSON.stringify(resumed.save())));
    got.push(again.token(40), again.hex(32));
    expect(got).toEqual(expected);
    // Only the position is saved, never the bytes.
    expect(JSON.stringify(saved).length).toBeLessThan(64);
  });

  it('a snapshot of an earlier version (unused bytes saved as base64) is still read', () => {
    const s = new RandomStream('k');
    s.load({ counter: 3, pool: Buffer.from('00112233', 'hex').toString('base64') });
    expect(s.bytes(4).toString('hex')).toBe('00112233');
    // Then the stream goes on with block 3.
    const next = new RandomStream('k');
    next.load({ counter: 3, used: 1024 });
    expect(s.bytes(8).equals(next.bytes(8))).toBe(true);
  });
});
