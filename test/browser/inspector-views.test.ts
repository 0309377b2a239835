import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FAULT_FIELD_NAMES } from '../../src/core/faults/fields.js';
import { REGISTRY } from '../../src/app.js';

const CAPABILITIES = REGISTRY.accounts.capabilities;
import { call, emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { launchChromium, screenshotPath } from './chromium.js';

/** What the inspector shows and lets one do, from 800 px wide up: paths, codes, state tables, the forms. */
/* Browser globals used inside page.evaluate (the project compiles without the DOM library). */
type HTMLElement = any;
const { emu, ctl } = emulatorForFile({ plane: 'platform' });
let browser: Browser;
let page: Page;

const t2a = (key: string, extra: Record<string, unknown> = {}) =>
  call(`${emu.speechUrl}/v1/t2a_v2`, {
    headers: { authorization: `Bearer ${key}` },
    json: { model: 'speech-02-turbo', text: 'Shown in full.', voice_setting: { voice_id: 'male-qn-qingse' }, ...extra },
  });

async function conversation(path: string) {
  const ws = new WebSocket(`${emu.platformUrl.replace(/^http/, 'ws')}${path}?api_key=views-key`);
  const closed = new Promise((resolve) => ws.once('close', resolve));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  // "bye" ends the conversation: the emulator closes the socket.
  ws.send(JSON.stringify({ voice_id: 'english_tutor', text_input: 'bye' }));
  await closed;
}

/** Whether any element of the page sticks out to the right of the window (columns cut). */
const overflowsRight = () =>
  page.evaluate(() => {
    const doc = (globalThis as any).document;
    return doc.documentElement.scrollWidth > doc.documentElement.clientWidth;
  });

beforeAll(async () => {
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 800, height: 900 } });
  page.on('pageerror', (err) => {
    throw err;
  });
});
afterAll(async () => {
  await browser?.close();
});

describe('the inspector views', () => {
  it('shows full socket paths and a code for every success, without cutting columns at 800 px', async () => {
    await conversation('/api/v1/audio/conversation/stream-text');
    await t2a('views-key', { stream: true });
    await call(`${emu.platformUrl}/v1/text-to-speech`, { headers: { 'x-api-key': 'views-key' }, json: { voice_id: 'female_bright', generate_text: 'Hi.' } });
    await page.goto(`${emu.platformUrl}/_emulator/`);
    const socketRow = page.locator('#journal tbody tr', { hasText: '/api/v1/audio/conversation/stream-text' });
    await socketRow.waitFor();
    expect(await socketRow.locator('td.path').textContent()).toBe('/api/v1/audio/conversation/stream-text');
    for (const path of ['/v1/t2a_v2', '/v1/text-to-speech']) {
      const cells = page.locator('#journal tbody tr', { hasText: path }).first().locator('td');
      expect(await cells.nth(5).textContent()).toBe('0');
    }
    expect(await overflowsRight()).toBe(false);
    await socketRow.click();
    await page.locator('#detail h2', { hasText: '/api/v1/audio/conversation/stream-text' }).waitFor();
    await page.locator('#detail .frames').waitFor();
    await page.screenshot({ path: screenshotPath('inspector-800-journal'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await overflowsRight()).toBe(false);
    await page.screenshot({ path: screenshotPath('inspector-1280-journal') });
    await page.setViewportSize({ width: 800, height: 900 });
  }, 60_000);

  it('plays the answer audio of every format the control plane serves (Opus as Ogg, raw μ-law as WAV)', async () => {
    for (const format of ['opus', 'pcmu_raw', 'pcmu_wav', 'pcm']) {
      const r = await t2a('formats-key', { audio_setting: { format, sample_rate: format === 'opus' ? 24000 : 8000 } });
      expect(r.body.base_resp.status_code).toBe(0);
      const [entry] = (await ctl.journal({ limit: 1 })).body.entries;
      expect(entry.answer_audio.format).toBe(format);
      await page.locator(`#journal tbody tr[data-id="${entry.id}"]`).click();
      const player = page.locator(`#detail audio.answer-audio`);
      await page.locator('#detail h2 + p', { hasText: entry.id }).waitFor();
      const duration = await player.evaluate(
        (el: HTMLElement) =>
          new Promise<number>((resolve, reject) => {
            if (el.readyState >= 1) return resolve(el.duration);
            el.onloadedmetadata = () => resolve(el.duration);
            el.onerror = () => reject(new Error(`audio failed to load: ${el.error?.message}`));
          }),
      );
      expect(Math.abs(duration * 1000 - r.body.extra_info.audio_length)).toBeLessThan(100);
      if (format === 'pcmu_raw') {
        // Served as the μ-law WAV of the same bytes.
        const file = await ctl.call('GET', `/journal/${entry.id}/answer-audio`);
        expect(file.headers.get('content-type')).toBe('audio/wav');
        expect(file.headers.get('content-disposition')).toContain('-answer.wav');
        const probe = await ffprobe(file.bytes, { ext: 'wav' });
        expect(probe).toMatchObject({ codec: 'pcm_mulaw', sampleRate: 8000, channels: 1 });
        expect(Math.abs(probe.durationMs - r.body.extra_info.audio_length)).toBeLessThan(5);
      }
    }
  }, 60_000);

  it('shows state as tables per account, with readable balances', async () => {
    await ctl.putAccount('counted-key', { balance_micro: 2_500_000 });
    await page.click('#tabs [data-tab=state]');
    const card = (label: RegExp) => page.locator('#state .card', { has: page.locator('h3', { hasText: label }) });
    await page.locator('#state .card').first().waitFor();
    const views = card(/^view/);
    expect(await views.locator('table.facts tr', { hasText: 'balance' }).first().locator('td').textContent()).toBe('unlimited');
    expect(await card(/^coun/).locator('table.facts tr', { hasText: 'balance' }).first().locator('td').textContent()).toBe('2.5 units');
    expect(await page.locator('#state').textContent()).not.toMatch(/999999/);
    expect(await overflowsRight()).toBe(false);
    await page.screenshot({ path: screenshotPath('inspector-800-state'), fullPage: true });
  }, 60_000);

  it('the fault form takes every field of a rule and names the field that is wrong', async () => {
    await page.click('#tabs [data-tab=faults]');
    const error = page.locator('#fault-error');
    await page.fill('#fault-form [name=code]', 'abc');
    await page.click('#fault-form button[type=submit]');
    await error.filter({ hasText: 'code must be a whole number' }).waitFor();
    expect(await error.textContent()).toContain('"abc"');
    await page.fill('#fault-form [name=code]', '1002');
    await page.fill('#fault-form [name=probability]', '2');
    await page.click('#fault-form button[type=submit]');
    await error.filter({ hasText: 'probability must be a number from 0 to 1' }).waitFor();
    await page.fill('#fault-form [name=probability]', '0.5');
    await page.fill('#fault-form [name=close_ws]', '99');
    await page.click('#fault-form button[type=submit]');
    await error.filter({ hasText: 'close_ws must be' }).waitFor();
    await page.fill('#fault-form [name=close_ws]', '');
    await page.selectOption('#fault-form [name=service]', 'speech-backup');
    await page.fill('#fault-form [name=method]', 'post');
    await page.fill('#fault-form [name=path]', '/v1/t2a_v2');
    await page.fill('#fault-form [name=account]', 'fault-form-key');
    await page.fill('#fault-form [name=times]', 'always');
    await page.fill('#fault-form [name=delay_ms]', '5');
    await page.fill('#fault-form [name=cut_after_chunks]', '2');
    await page.fill('#fault-form [name=status]', '503');
    await page.click('#fault-form button[type=submit]');
    await page.locator('#faults tbody tr', { hasText: 'code=1002' }).waitFor();
    expect(await error.textContent()).toBe('');
    const [rule] = (await ctl.faults()).body.rules;
    expect(rule).toMatchObject({
      service: 'speech-backup',
      method: 'POST',
      path: '/v1/t2a_v2',
      times: 'always',
      probability: 0.5,
      fault: { code: 1002, status: 503, delay_ms: 5, cut_after_chunks: 2 },
    });
    expect(rule.account).toMatch(/^faul…/);
    expect(await overflowsRight()).toBe(false);
    await page.screenshot({ path: screenshotPath('inspector-800-faults'), fullPage: true });
    await ctl.clearFaults();
  }, 60_000);

  it('the fault form offers every field of the registry, the voice-agent ones included, and applies them', async () => {
    await page.click('#tabs [data-tab=faults]');
    const offered = await page.locator('#fault-form fieldset.fault-fields input').evaluateAll((inputs: HTMLElement[]) => inputs.map((i) => i.name));
    expect(offered).toEqual(FAULT_FIELD_NAMES);
    // The same registry, as the control plane serves it.
    const listed = await call(`${emu.platformUrl}/_emulator/faults/fields`);
    expect(listed.body.fields.map((f: { name: string }) => f.name)).toEqual(FAULT_FIELD_NAMES);
    const error = page.locator('#fault-error');
    await page.fill('#fault-form [name=hex_odd]', '0');
    await page.click('#fault-form button[type=submit]');
    await error.filter({ hasText: 'hex_odd must be a chunk number, 1 or more; got 0' }).waitFor();
    await page.fill('#fault-form [name=hex_odd]', '2');
    await page.fill('#fault-form [name=rtf]', 'fast');
    await page.click('#fault-form button[type=submit]');
    await error.filter({ hasText: 'rtf must be a number' }).waitFor();
    await page.fill('#fault-form [name=rtf]', '1.5');
    await page.fill('#fault-form [name=ttfa_ms]', '40');
    await page.fill('#fault-form [name=path]', '/v1/t2a_v2');
    await page.fill('#fault-form [name=times]', '1');
    await page.click('#fault-form button[type=submit]');
    await page.locator('#faults tbody tr', { hasText: 'hex_odd=2' }).waitFor();
    expect((await ctl.faults()).body.rules[0].fault).toEqual({ ttfa_ms: 40, rtf: 1.5, hex_odd: 2 });
    // The rule shapes the next stream: its journal entry says what the guard did.
    const r = await t2a('form-stream-key', { stream: true });
    expect(r.status).toBe(200);
    const entry = (await ctl.journal({ path: '/v1/t2a_v2', limit: 1 })).body.entries[0];
    expect(entry.fault).toMatchObject({ ttfa_ms: 40, rtf: 1.5, hex_odd: 2, audio_faults: ['hex_odd=2'] });
    expect(await overflowsRight()).toBe(false);
    await page.screenshot({ path: screenshotPath('inspector-800-fault-fields'), fullPage: true });
    await ctl.clearFaults();
  }, 60_000);

  it('the account form hints valid capabilities; "Show" fills the editor', async () => {
    await page.click('#tabs [data-tab=accounts]');
    const placeholder = JSON.parse((await page.locator('#account-settings').getAttribute('placeholder'))!);
    for (const c of placeholder.capabilities) expect(CAPABILITIES).toContain(c);
    for (const c of CAPABILITIES) expect(await page.locator('#tab-accounts .hint').textContent()).toContain(c);
    await ctl.putAccount('shown-key-123', { balance_micro: 7_000_000, capabilities: ['tts', 'upload'] });
    await page.fill('#account-form [name=key]', 'shown-key-123');
    await page.click('#account-form button[value=get]');
    await page.locator('#account-view', { hasText: '7 units' }).waitFor();
    const edited = JSON.parse(await page.locator('#account-settings').inputValue());
    expect(edited).toMatchObject({ balance_micro: 7_000_000, capabilities: ['tts', 'upload'], disabled: false });
    await page.screenshot({ path: screenshotPath('inspector-800-accounts'), fullPage: true });
    // What Show put in the editor saves back as it is.
    await page.click('#account-form button[value=put]');
    await page.locator('#account-view', { hasText: '7 units' }).waitFor();
    expect(await page.locator('#account-error').textContent()).toBe('');
    await page.fill('#account-settings', '{"capabilities": ["voice_clone"]}');
    await page.click('#account-form button[value=put]');
    await page.locator('#account-error', { hasText: 'capabilities' }).waitFor();
  }, 60_000);

  it('resets the emulator only after a confirmation', async () => {
    await page.click('#tabs [data-tab=state]');
    const before = (await ctl.journal()).body.entries.length;
    expect(before).toBeGreaterThan(0);
    await page.click('#reset');
    await page.locator('#reset-confirm').waitFor();
    await page.click('#reset-cancel');
    await page.locator('#reset-confirm').waitFor({ state: 'hidden' });
    expect((await ctl.journal()).body.entries.length).toBe(before);
    await page.click('#reset');
    await page.locator('#reset-confirm', { hasText: 'whole emulator' }).waitFor();
    await page.screenshot({ path: screenshotPath('inspector-800-reset') });
    await page.click('#reset-yes');
    await page.locator('#reset-result', { hasText: 'reset' }).waitFor();
    expect((await ctl.journal()).body.entries).toEqual([]);
    await page.click('#tabs [data-tab=journal]');
    // No request rows: only the empty journal's hint.
    expect(await page.locator('#journal tbody tr[data-id]').count()).toBe(0);
    expect(await page.locator('#journal tbody tr.empty').count()).toBe(1);
    await page.locator('#tabs [data-tab=journal]').evaluate((el: HTMLElement) => el.blur());
  }, 60_000);
});
