import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { launchChromium, screenshotPath } from './chromium.js';

/**
 * Looking does not change what is looked at: the inspector's own fetches (its page, its calls, the
 * files behind its players) leave no journal entry, no verify count and no metric; the list holds
 * still under the cursor while new requests arrive.
 */
/* Browser globals used inside page.evaluate (the project compiles without the DOM library). */
type HTMLAudioElement = any;
type HTMLElement = any;
const { emu, ctl } = emulatorForFile({ plane: 'speech' });
let browser: Browser;
let page: Page;

const t2a = (key: string, extra: Record<string, unknown> = {}, base = emu.speechUrl) =>
  call(`${base}/v1/t2a_v2`, {
    headers: { authorization: `Bearer ${key}` },
    json: { model: 'speech-02-turbo', text: 'Looking changes nothing.', voice_setting: { voice_id: 'male-qn-qingse' }, ...extra },
  });

/** How many requests the journal holds for GET (the inspector's fetches would be GETs), by verify. */
const gets = async () => (await ctl.call('POST', '/verify', { request: { method: 'GET' }, at_least: 0 })).body.count as number;
/** The requests to `/download/*` the metrics counted. */
const downloadsCounted = async () =>
  (await ctl.call('GET', '/metrics')).text
    .split('\n')
    .filter((l) => l.startsWith('emulator_requests_total{') && l.includes('route="/download/*"'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);

const loaded = (el: HTMLAudioElement) =>
  el.readyState >= 1 || new Promise((resolve, reject) => ((el.onloadedmetadata = resolve), (el.onerror = () => reject(new Error('audio failed to load')))));

beforeAll(async () => {
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  page.on('pageerror', (err) => {
    throw err;
  });
});
afterAll(async () => {
  await browser?.close();
});

describe('the inspector does not record itself', () => {
  it('a download marked with X-Emulator-Inspector: 1 is served and not journaled; unmarked it is', async () => {
    const r = await t2a('mark-key', { output_format: 'url' });
    const link = new URL(r.body.data.audio);
    const before = (await ctl.journal()).body.entries.length;
    const marked = await call(`${emu.platformUrl}${link.pathname}${link.search}`, { headers: { 'x-emulator-inspector': '1' } });
    expect(marked.status).toBe(200);
    expect(marked.headers.get('content-type')).toBe('audio/mpeg');
    expect((await ctl.journal()).body.entries.length).toBe(before);
    expect(await downloadsCounted()).toBe(0);
    const plain = await call(`${emu.platformUrl}${link.pathname}${link.search}`);
    expect(plain.status).toBe(200);
    const [entry] = (await ctl.journal({ limit: 1 })).body.entries;
    expect(entry).toMatchObject({ method: 'GET', path: link.pathname, service: 'platform' });
    // Counted when the answer has left (onResponse): give the count the moment it takes.
    let counted = await downloadsCounted();
    for (let i = 0; i < 50 && counted < 1; i++) counted = (await new Promise((r) => setTimeout(r, 20)), await downloadsCounted());
    expect(counted).toBe(1);
    // The mark only spares downloads: an API call that carries it is journaled as usual.
    await call(`${emu.speechUrl}/v1/t2a_v2`, { headers: { 'x-emulator-inspector': '1', authorization: 'Bearer mark-key' }, json: {} });
    expect((await ctl.journal({ limit: 1 })).body.entries[0].path).toBe('/v1/t2a_v2');
    await ctl.clearJournal();
  });

  it('opening requests with players (a stored file, answer audio) adds no entry, no verify count, no metric', async () => {
    const url = await t2a('viewer-key', { output_format: 'url', audio_setting: { format: 'mp3', sample_rate: 32000 } });
    expect(url.body.base_resp.status_code).toBe(0);
    const hex = await t2a('viewer-key', { text: 'Looking.' });
    expect(hex.body.base_resp.status_code).toBe(0);
    const counted = await downloadsCounted();
    await page.goto(`${emu.speechUrl}/`);
    expect(new URL(page.url()).pathname).toBe('/_emulator/');
    const [withHex, withLink] = (await ctl.journal({ limit: 2 })).body.entries;
    await page.locator(`#journal tbody tr[data-id="${withLink.id}"]`).click();
    const player = page.locator('#detail audio.download-audio');
    await player.evaluate(loaded);
    expect(await player.evaluate((el: HTMLAudioElement) => el.duration)).toBeGreaterThan(1);
    // The download is labelled with the listener that handed out its link.
    expect(await page.locator('#detail .file .pill').textContent()).toBe('speech');
    await page.locator(`#journal tbody tr[data-id="${withHex.id}"]`).click();
    const answer = page.locator('#detail audio.answer-audio');
    await answer.evaluate(loaded);
    expect(await answer.evaluate((el: HTMLAudioElement) => el.duration)).toBeGreaterThan(1);
    expect(await page.locator('#detail').textContent()).toMatch(/‹audio: [\d,]+ bytes›/);
    await page.screenshot({ path: screenshotPath('inspector-players') });

    // Page, files, control calls, players: nothing of it is in the journal, verify or the metrics.
    expect((await ctl.journal()).body.entries.map((e: { id: string }) => e.id)).toEqual([withHex.id, withLink.id]);
    expect(await gets()).toBe(0);
    expect((await ctl.call('POST', '/verify', { request: { method: 'GET', path: '/' }, exactly: 0 })).status).toBe(200);
    expect(await downloadsCounted()).toBe(counted);
  }, 60_000);

  it('labels a request by the listener that served it (the backup too)', async () => {
    await t2a('backup-key', {}, emu.speechBackupUrl);
    const [entry] = (await ctl.journal({ limit: 1 })).body.entries;
    await page.locator(`#journal tbody tr[data-id="${entry.id}"] td`, { hasText: 'speech-backup' }).waitFor();
  }, 60_000);

  it('the list holds still under the cursor; new rows are counted in a badge until the user scrolls back up', async () => {
    for (let i = 0; i < 3; i++) await t2a(`still-key-${i}`);
    const [newest] = (await ctl.journal({ limit: 1 })).body.entries;
    const row = page.locator(`#journal tbody tr[data-id="${newest.id}"]`);
    await row.waitFor();
    await row.hover();
    const y = (await row.boundingBox())!.y;
    for (let i = 0; i < 3; i++) await t2a(`still-key-${i}`);
    const [latest] = (await ctl.journal({ limit: 1 })).body.entries;
    await page.locator(`#journal tbody tr[data-id="${latest.id}"]`).waitFor({ state: 'attached' });
    await page.locator('#journal-new', { hasText: '3 new' }).waitFor();
    expect(Math.abs((await row.boundingBox())!.y - y)).toBeLessThan(1.5);
    await page.screenshot({ path: screenshotPath('inspector-held') });
    // Scrolling back up shows the new rows and the badge goes.
    await page.mouse.move(5, 5);
    await page.locator('#journal-wrap').evaluate((el: HTMLElement) => el.scrollTo({ top: 0 }));
    await page.locator('#journal-new').waitFor({ state: 'hidden' });
    const first = page.locator('#journal tbody tr').first();
    expect(await first.getAttribute('data-id')).toBe(latest.id);
    expect((await row.boundingBox())!.y).toBeGreaterThan(y);
  }, 60_000);

  it('a list scrolled down holds still too, with no row under the cursor or open', async () => {
    await page.click('#journal-clear');
    // The page clears the journal on the server, then its list: wait for both, so every request below is counted.
    await page.locator('#journal-count', { hasText: /^0 of 0 requests$/ }).waitFor();
    expect((await ctl.journal()).body.entries).toEqual([]);
    await page.mouse.move(5, 5);
    for (let i = 0; i < 24; i++) await call(`${emu.platformUrl}/v1/voice/list`, { headers: { 'x-api-key': `scroll-key-${i}` } });
    await page.locator('#journal-count', { hasText: '24 of 24' }).waitFor();
    const wrap = page.locator('#journal-wrap');
    await wrap.evaluate((el: HTMLElement) => el.scrollTo({ top: 160 }));
    const inView = await wrap.evaluate((el: HTMLElement) => {
      const top = el.getBoundingClientRect().top + 30;
      const tr = [...el.querySelectorAll('tbody tr')].find((r: HTMLElement) => r.getBoundingClientRect().bottom > top);
      return { id: tr.dataset.id as string, y: tr.getBoundingClientRect().top as number };
    });
    for (let i = 0; i < 2; i++) await call(`${emu.platformUrl}/v1/voice/list`, { headers: { 'x-api-key': 'scroll-key-late' } });
    await page.locator('#journal-count', { hasText: '26 of 26' }).waitFor();
    await page.locator('#journal-new', { hasText: '2 new' }).waitFor();
    // Still, to the pixel (scroll offsets are whole pixels, rows are not).
    expect(Math.abs((await page.locator(`#journal tbody tr[data-id="${inView.id}"]`).boundingBox())!.y - inView.y)).toBeLessThan(1.5);
    await page.click('#journal-new');
    await page.locator('#journal-new').waitFor({ state: 'hidden' });
    expect(await wrap.evaluate((el: HTMLElement) => el.scrollTop)).toBe(0);
  }, 60_000);
});
