import { describe, expect, it } from 'vitest';
import { recordViews } from '../../src/core/state/areas.js';

describe('record views of an area', () => {
  it('every account at once shows exactly what each account alone shows, in the same order', () => {
    const records = Array.from({ length: 500 }, (_, i) => ({ id: i, account: `acct-${i % 37}` }));
    const views = recordViews(
      () => records,
      (r) => r.account,
      (r) => ({ id: r.id }),
    );
    const ids = [...Array.from({ length: 37 }, (_, i) => `acct-${i}`), 'nobody'];
    const all = views.viewAll(ids);
    expect([...all.keys()]).toEqual(ids);
    for (const id of ids) expect(all.get(id)).toEqual(views.view(id));
    expect(all.get('nobody')).toEqual([]);
    expect((all.get('acct-3') as { id: number }[]).map((r) => r.id).slice(0, 3)).toEqual([3, 40, 77]);
  });
});
