import { beforeEach, describe, expect, it } from 'vitest';
import { control, emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });
beforeEach(async () => {
  await ctl.reset();
});

describe('control clock', () => {
  it('GET answers now_ms on real time, not frozen', async () => {
    const before = Date.now();
    const r = await ctl.clock();
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['frozen', 'now_ms']);
    expect(r.body.frozen).toBe(false);
    expect(r.body.now_ms).toBeGreaterThanOrEqual(before);
    expect(r.body.now_ms).toBeLessThanOrEqual(Date.now());
  });

  it('freeze stops time; advance moves it exactly; unfreeze resumes from emulator time', async () => {
    const f = await ctl.freeze();
    expect(f.body.frozen).toBe(true);
    const t0 = f.body.now_ms;
    await new Promise((r) => setTimeout(r, 20));
    expect((await ctl.clock()).body.now_ms).toBe(t0);
    const a = await ctl.advance(3_600_000);
    expect(a.body).toEqual({ now_ms: t0 + 3_600_000, frozen: true });
    const u = await ctl.freeze(false);
    expect(u.body.frozen).toBe(false);
    expect(u.body.now_ms).toBeGreaterThanOrEqual(t0 + 3_600_000);
    expect(u.body.now_ms).toBeLessThan(t0 + 3_600_000 + 5_000);
  });

  it('advance fires a due timer before the response returns, in due order, and leaves later ones pending', async () => {
    await ctl.freeze();
    const fired: string[] = [];
    const clock = emu.emulator.clock;
    clock.after(2_000, () => fired.push('b'), 'b');
    clock.after(1_000, () => fired.push('a'), 'a');
    clock.after(60_000, () => fired.push('late'), 'late');
    await ctl.advance(999);
    expect(fired).toEqual([]);
    await ctl.advance(1_001);
    expect(fired).toEqual(['a', 'b']);
    expect(clock.pending().map((t) => t.label)).toEqual(['late']);
  });

  it('a timer fires on the emulator clock with time flowing (no advance)', async () => {
    let fired = false;
    emu.emulator.clock.after(30, () => (fired = true));
    await new Promise((r) => setTimeout(r, 120));
    expect(fired).toBe(true);
  });

  it('a frozen clock fires nothing however long we wait', async () => {
    await ctl.freeze();
    let fired = false;
    emu.emulator.clock.after(10, () => (fired = true));
    await new Promise((r) => setTimeout(r, 60));
    expect(fired).toBe(false);
    await ctl.advance(10);
    expect(fired).toBe(true);
  });

  it('set_ms may go backwards; a fired timer stays fired, a pending one fires when reached again', async () => {
    await ctl.freeze();
    const t0 = (await ctl.clock()).body.now_ms;
    const fired: string[] = [];
    emu.emulator.clock.at(t0 + 1_000, () => fired.push('early'));
    emu.emulator.clock.at(t0 + 5_000, () => fired.push('later'));
    await ctl.setClock({ set_ms: t0 + 2_000 });
    expect(fired).toEqual(['early']);
    const back = await ctl.setClock({ set_ms: t0 - 10_000 });
    expect(back.body).toEqual({ now_ms: t0 - 10_000, frozen: true });
    await ctl.setClock({ set_ms: t0 + 4_999 });
    expect(fired).toEqual(['early']);
    await ctl.advance(1);
    expect(fired).toEqual(['early', 'later']);
  });

  it('freeze and set_ms in one body: frozen at exactly that time', async () => {
    const r = await ctl.setClock({ freeze: true, set_ms: 1_700_000_000_000 });
    expect(r.body).toEqual({ now_ms: 1_700_000_000_000, frozen: true });
  });

  it('reset returns the clock to real time, unfrozen, and drops pending timers', async () => {
    await ctl.setClock({ freeze: true, set_ms: 1_000_000 });
    let fired = false;
    emu.emulator.clock.after(1_000, () => (fired = true));
    expect((await ctl.reset()).status).toBe(200);
    const r = await ctl.clock();
    expect(r.body.frozen).toBe(false);
    expect(Math.abs(r.body.now_ms - Date.now())).toBeLessThan(2_000);
    expect(emu.emulator.clock.pending()).toEqual([]);
    expect(fired).toBe(false);
  });

  it('invalid clock bodies answer 400 naming the problem', async () => {
    for (const [body, word] of [
      [{ advance_ms: -5 }, 'advance_ms'],
      [{ advance_ms: 'soon' }, 'advance_ms'],
      [{ freeze: 'yes' }, 'freeze'],
      [{ set_ms: 1.5 }, 'set_ms'],
      [{ rewind: 1 }, 'rewind'],
      [{ set_ms: 9007199254740991 }, 'set_ms'],
      [{ set_ms: 253_402_300_800_000 }, 'set_ms'],
      [{ set_ms: 253_402_300_799_999 - 10, advance_ms: 11 }, 'advance_ms'],
      [{ advance_ms: 253_402_300_800_000 }, 'advance_ms'],
    ] as const) {
      const r = await ctl.call('POST', '/clock', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(word);
    }
    // a refused body changes nothing; the last instant itself is a valid time, and a voice designed then is answered
    expect((await ctl.clock()).body.now_ms).toBeLessThan(253_402_300_799_999 - 1e12);
    const last = await ctl.call('POST', '/clock', { set_ms: 253_402_300_799_999, freeze: true });
    expect(last.status).toBe(200);
    expect(new Date(last.body.now_ms).toISOString()).toBe('9999-12-31T23:59:59.999Z');
    const design = await fetch(`${emu.speechUrl}/v1/voice_design`, {
      method: 'POST',
      headers: { authorization: 'Bearer clock-end', 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'A calm narrator with a warm low voice.', preview_text: 'Hello there.' }),
    });
    expect(((await design.json()) as { base_resp: { status_code: number } }).base_resp.status_code).toBe(0);
    // Set to the last instant while flowing, the clock stays there: it never runs past its range.
    await ctl.call('POST', '/clock', { set_ms: 253_402_300_799_999 - 5, freeze: false });
    await new Promise((r) => setTimeout(r, 30));
    expect((await ctl.clock()).body.now_ms).toBe(253_402_300_799_999);
    const more = await ctl.call('POST', '/clock', { advance_ms: 1 });
    expect(more.body.error.message).toBe('clock field advance_ms: would move the clock past 253402300799999 (the latest date); at most 0');
    const late = await fetch(`${emu.speechUrl}/v1/voice_design`, {
      method: 'POST',
      headers: { authorization: 'Bearer clock-end', 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'A calm narrator with a warm low voice.', preview_text: 'Hello there.' }),
    });
    expect(((await late.json()) as { base_resp: { status_code: number } }).base_resp.status_code).toBe(0);
    await ctl.call('POST', '/clock', { set_ms: Date.now(), freeze: true });
    const bad = await fetch(`${emu.platformUrl}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"advance_ms":' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/JSON/);
  });
});
