import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile({ resetEach: true });

/** Requests with distinct keys that leave nothing behind (a list of voices, a refused body). */
async function throwaway(n: number, prefix: string): Promise<void> {
  for (let i = 0; i < n; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, (_, j) =>
        j % 2
          ? call(`${emu.platformUrl}/v1/voice/list`, { headers: { 'x-api-key': `${prefix}-${i + j}` } })
          : call(`${emu.speechUrl}/v1/t2a_v2`, { headers: { authorization: `Bearer ${prefix}-${i + j}` }, json: { text: 1 } }),
      ),
    );
}

describe('an account that holds nothing costs nothing after its request', () => {
  it('thousands of throwaway keys are forgotten; accounts that hold something stay', async () => {
    const inner = emu.emulator;
    inner.accounts.graceMs = 0;
    try {
      await ctl.putAccount('sweep-set', { balance_micro: 5 });
      const keeper = await call(`${emu.platformUrl}/api/v1/audio/sessions`, { headers: { 'x-api-key': 'sweep-keeper' }, json: { voice_id: 'default' } });
      expect(keeper.body.succeed).toBe(true);
      await throwaway(2500, 'sweep-throwaway');
      const state = await ctl.state();
      expect(state.status).toBe(200);
      const labels = state.body.accounts.map((a: { account: string }) => a.account);
      expect(labels.some((l: string) => l.startsWith('swee'))).toBe(true);
      // Only the account with a setting and the one with a session are kept.
      expect(state.body.totals.accounts).toBe(2);
      expect(inner.accounts.all()).toHaveLength(2);
      // A forgotten key is rebuilt the same at its next request.
      const again = await call(`${emu.platformUrl}/v1/voice/list`, { headers: { 'x-api-key': 'sweep-throwaway-1' } });
      expect(again.body.succeed).toBe(true);
    } finally {
      inner.accounts.graceMs = 60_000;
    }
  });

  it('an account whose request is recent is kept (its request may still be running)', async () => {
    await throwaway(10, 'sweep-recent');
    const state = await ctl.state();
    expect(state.body.totals.accounts).toBe(10);
  });
});

describe('the state view pages', () => {
  it('?limit and ?cursor walk every account once, in a stable order', async () => {
    await throwaway(25, 'page');
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await ctl.call('GET', `/state?limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.accounts.length).toBeLessThanOrEqual(10);
      expect(r.body.totals.accounts).toBe(25);
      seen.push(...r.body.accounts.map((a: { account: string }) => a.account));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(25);
  });

  it('a bad limit or cursor is 400 naming it', async () => {
    for (const q of ['limit=0', 'limit=10001', 'limit=x', 'cursor=zz']) {
      const r = await ctl.call('GET', `/state?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error.message, q).toMatch(new RegExp(`state query field ${q.split('=')[0]}`));
    }
  });
});
