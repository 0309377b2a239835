import { describe, expect, it } from 'vitest';
import { SignatureRecords, type SignatureRecord } from '../../src/core/state/signatures.js';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });

function record(id: string, textLength: number): SignatureRecord {
  const text = 'a'.repeat(textLength);
  return {
    id,
    kind: 'speech',
    text,
    speakers: [{ speaker: 0, voices: ['v'] }],
    segments: [{ text, startMs: 0, endMs: 1000 }],
    durationMs: 1000,
    createdAtMs: 0,
  };
}

describe('what a long run leaves behind is bounded, and a reset drops it', () => {
  it('signature records are bounded by count and by total text, oldest out', () => {
    const byCount = new SignatureRecords(3, 1_000_000);
    for (let i = 0; i < 10; i++) byCount.put(record(`r${i}`, 10));
    expect(byCount.size()).toBe(3);
    expect(byCount.get('r9')).toBeDefined();
    expect(byCount.get('r6')).toBeUndefined();

    const byWeight = new SignatureRecords(1000, 50_000);
    for (let i = 0; i < 100; i++) byWeight.put(record(`w${i}`, 10_000));
    expect(byWeight.totalWeight()).toBeLessThanOrEqual(50_000);
    expect(byWeight.size()).toBe(2);
    expect(byWeight.get('w99')).toBeDefined();
    byWeight.put(record('w99', 10)); // a record put again replaces itself, weight included
    expect(byWeight.size()).toBe(2);
    byWeight.clear();
    expect(byWeight.size()).toBe(0);
    expect(byWeight.totalWeight()).toBe(0);
  });

  it('a full reset drops the signature records and the journal', async () => {
    const res = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: { model: 'speech-02-turbo', text: 'Remember me.', voice_setting: { voice_id: 'male-qn-qingse' } },
      headers: { authorization: 'Bearer memory-key' },
    });
    expect(res.body.base_resp.status_code).toBe(0);
    expect((await ctl.state()).body.totals.signature_records).toBeGreaterThan(0);
    expect((await ctl.reset()).status).toBeLessThan(300);
    const after = (await ctl.state()).body;
    expect(after.totals.signature_records).toBe(0);
    expect(emu.emulator.journal.list().length).toBe(0);
  });
});
