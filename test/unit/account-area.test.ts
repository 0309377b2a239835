import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { accountArea } from '../../src/core/state/areas.js';

interface Upload {
  key: string;
  size: number;
}

interface Voice {
  voiceId: string;
  accountId: string;
  blob: string;
}

/** An area saved by account (a list of uploads each), with the files its resets were asked to drop. */
function uploads() {
  const dropped: { accountId: string | undefined; values: Upload[][] }[] = [];
  const area = accountArea<Upload[]>({
    name: 'uploads',
    savedByAccount: { value: z.array(z.looseObject({ key: z.string().min(1), size: z.number() })), blobs: (list) => list.map((u) => u.key) },
    show: (list) => list ?? [],
    dropFiles: (accountId, values) => dropped.push({ accountId, values }),
  });
  area.byAccount.set('a', [{ key: 'up/a/1', size: 3 }]);
  area.byAccount.set('b', [
    { key: 'up/b/1', size: 4 },
    { key: 'up/b/2', size: 5 },
  ]);
  return { area, dropped };
}

/** An area saved as one list of entries (voices of each account in a map by voice id). */
function voices() {
  const area = accountArea<Map<string, Voice>, Voice>({
    name: 'voices',
    savedAsEntries: {
      entry: z.looseObject({ voiceId: z.string().min(1), accountId: z.string().min(1), blob: z.string() }),
      idOf: (v) => `${v.accountId}/${v.voiceId}`,
      accountOf: (v) => v.accountId,
      entriesOf: (list) => list.values(),
      add: (list = new Map(), v) => list.set(v.voiceId, v),
      blobs: (v) => [v.blob],
    },
    show: (list) => [...(list?.keys() ?? [])],
  });
  area.byAccount.set(
    'a',
    new Map([
      ['v1', { voiceId: 'v1', accountId: 'a', blob: 'voices/a/v1' }],
      ['v2', { voiceId: 'v2', accountId: 'a', blob: 'voices/a/v2' }],
    ]),
  );
  area.byAccount.set('b', new Map([['v1', { voiceId: 'v1', accountId: 'b', blob: 'voices/b/v1' }]]));
  return area;
}

describe('an area of one value per account', () => {
  it("a reset of one account drops its value only, then asks to drop that account's files with the value dropped", () => {
    const { area, dropped } = uploads();
    area.reset('a');
    expect([...area.byAccount.keys()]).toEqual(['b']);
    expect(dropped).toEqual([{ accountId: 'a', values: [[{ key: 'up/a/1', size: 3 }]] }]);
    area.reset('nobody');
    expect(dropped.at(-1)).toEqual({ accountId: 'nobody', values: [] });
    expect(area.byAccount.size).toBe(1);
  });

  it('a reset of all drops every value, then asks to drop all files with every value dropped', () => {
    const { area, dropped } = uploads();
    area.reset();
    expect(area.byAccount.size).toBe(0);
    expect(dropped).toEqual([
      {
        accountId: undefined,
        values: [[{ key: 'up/a/1', size: 3 }], [expect.objectContaining({ key: 'up/b/1' }), expect.objectContaining({ key: 'up/b/2' })]],
      },
    ]);
  });

  it('the state view shows what the declaration shows, for an account without a value too', () => {
    const { area } = uploads();
    expect(area.view!('b')).toHaveLength(2);
    expect(area.view!('nobody')).toEqual([]);
    expect(voices().view!('a')).toEqual(['v1', 'v2']);
  });

  it('saved by account: the part is an object by account id, and a load brings back what was saved', () => {
    const { area } = uploads();
    const part = area.save!();
    expect(part).toEqual({ a: [{ key: 'up/a/1', size: 3 }], b: [expect.objectContaining({ key: 'up/b/1' }), expect.objectContaining({ key: 'up/b/2' })] });
    const copy = uploads().area;
    copy.reset();
    copy.load!(JSON.parse(JSON.stringify(part)));
    expect(copy.save!()).toEqual(part);
  });

  it('saved by account: one record per account, split and joined back, with the files it names', () => {
    const { area } = uploads();
    const records = area.records!;
    const rows = records.split(area.save!());
    expect(rows.map((r) => [r.id, r.account])).toEqual([
      ['a', 'a'],
      ['b', 'b'],
    ]);
    expect(records.join(rows)).toEqual(area.save!());
    expect(records.one!('b')).toEqual({ id: 'b', account: 'b', value: area.byAccount.get('b') });
    expect(records.one!('nobody')).toBeUndefined();
    expect(records.ofAccount!('a').map((r) => r.id)).toEqual(['a']);
    expect(records.blobsOf!(rows[1]!.value)).toEqual(['up/b/1', 'up/b/2']);
  });

  it('saved by account: what is saved and what a load keeps can differ from the value as kept', () => {
    const area = accountArea<{ n: number; live: boolean }, never, { n: number }>({
      name: 'usage',
      savedByAccount: { value: z.looseObject({ n: z.number() }), saved: ({ n }) => ({ n }), restore: (u) => ({ ...u, live: false }) },
      show: (u) => u ?? { n: 0 },
    });
    area.byAccount.set('a', { n: 2, live: true });
    expect(area.save!()).toEqual({ a: { n: 2 } });
    expect(area.records!.one!('a')!.value).toEqual({ n: 2 });
    area.load!({ a: { n: 2 } });
    expect(area.byAccount.get('a')).toEqual({ n: 2, live: false });
    expect(area.view!('nobody')).toEqual({ n: 0 });
  });

  it('saved as entries: the part is one list, a record per entry, and a load groups them by account again', () => {
    const area = voices();
    const part = area.save!();
    expect(part).toEqual([
      { voiceId: 'v1', accountId: 'a', blob: 'voices/a/v1' },
      { voiceId: 'v2', accountId: 'a', blob: 'voices/a/v2' },
      { voiceId: 'v1', accountId: 'b', blob: 'voices/b/v1' },
    ]);
    const rows = area.records!.split(part);
    expect(rows.map((r) => [r.id, r.account])).toEqual([
      ['a/v1', 'a'],
      ['a/v2', 'a'],
      ['b/v1', 'b'],
    ]);
    expect(area.records!.join(rows)).toEqual(part);
    expect(area.records!.ofAccount!('a').map((r) => r.id)).toEqual(['a/v1', 'a/v2']);
    expect(area.records!.ofAccount!('nobody')).toEqual([]);
    expect(area.records!.blobsOf!(rows[2]!.value)).toEqual(['voices/b/v1']);
    const copy = voices();
    copy.load!(JSON.parse(JSON.stringify(part)));
    expect([...copy.byAccount.keys()]).toEqual(['a', 'b']);
    expect([...copy.byAccount.get('a')!.keys()]).toEqual(['v1', 'v2']);
    expect(copy.save!()).toEqual(part);
  });

  it('a saved part is checked against the declared schema, naming where it fails', () => {
    const { area } = uploads();
    expect(area.check!(area.save!())).toBeNull();
    expect(area.check!({ a: [{ key: '', size: 1 }] })).toMatch(/^a\[0\]\.key: /);
    expect(area.check!([])).toMatch(/expected record/);
    const entries = voices();
    expect(entries.check!(entries.save!())).toBeNull();
    expect(entries.check!([{ voiceId: 'v', accountId: 'a', blob: 'x' }, { voiceId: 'v' }])).toMatch(/^\[1\]\.accountId: /);
    expect(entries.check!({})).toMatch(/expected array/);
  });
});
