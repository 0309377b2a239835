import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { req } from '../speech/helpers.js';

/** Counts in the server's messages take the singular for one ("1 chunk", "1 matching request", "1 item"). */
const { emu, ctl } = emulatorForFile({ plane: 'speech', resetEach: true });

describe('singular for one in server messages', () => {
  it('a stream cut after one chunk: the journal note says "1 chunk"', async () => {
    const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { authorization: 'Bearer plurals', 'content-type': 'application/json', 'x-emulator-fault': 'cut_after_chunks=1' },
      body: JSON.stringify(req({ stream: true }, 'One sentence. And another one after it. And a third to have many chunks.')),
    });
    await res.text().catch(() => '');
    let entry: any;
    for (let i = 0; i < 100 && !entry?.note; i++) {
      entry = (await ctl.journal({ limit: 1, path: '/v1/t2a_v2' })).body.entries[0];
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(entry.note).toBe('connection cut after 1 chunk (fault)');
  });

  it('verify: "expected exactly 1 matching request" and a one-item array difference "expected 1 item"', async () => {
    await call(`${emu.speechUrl}/v1/t2a_v2`, { json: req({ pronunciation_dict: { tone: ['a/b', 'c/d'] } }), headers: { authorization: 'Bearer plurals' } });
    const miss = await ctl.call('POST', '/verify', { request: { path: '/v1/t2a_v2', body: { pronunciation_dict: { tone: ['a/b'] } } }, exactly: 1 });
    expect(miss.status).toBe(409);
    expect(miss.body.error.message).toMatch(/^expected exactly 1 matching request, found 0/);
    expect(JSON.stringify(miss.body)).toContain('expected 1 item, got 2');
    expect(JSON.stringify(miss.body)).not.toMatch(/\b1 (items|chunks|matching requests)\b/);
  });
});
