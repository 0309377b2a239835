import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { launchChromium, screenshotPath } from './chromium.js';

/** The inspector page in a real browser, with a control token set (the page asks for it once). */
const TOKEN = 'inspector-token';
/* Browser globals used inside page.evaluate (the project compiles without the DOM library). */
declare const sessionStorage: any;
type HTMLAudioElement = any;
const { emu, ctl } = emulatorForFile({ plane: 'speech', start: { controlToken: TOKEN } });
let browser: Browser;
let page: Page;

const t2a = (key: string, extra: Record<string, unknown> = {}) =>
  call(`${emu.speechUrl}/v1/t2a_v2`, {
    headers: { authorization: `Bearer ${key}` },
    json: { model: 'speech-02-turbo', text: 'The inspector plays what was synthesized.', voice_setting: { voice_id: 'male-qn-qingse' }, ...extra },
  });

beforeAll(async () => {
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
  page.on('pageerror', (err) => {
    throw err;
  });
});
afterAll(async () => {
  await browser?.close();
});

describe('the inspector at /_emulator/', () => {
  it('a browser at / is sent there; it asks for the control token once and then shows the journal', async () => {
    await t2a('early-key');
    await page.goto(`${emu.speechUrl}/`);
    expect(new URL(page.url()).pathname).toBe('/_emulator/');
    // The browser's `GET /` that was sent on to the inspector is not journaled.
    expect((await ctl.journal({ path: '/' })).body.entries).toEqual([]);
    await page.locator('#token-form').waitFor({ state: 'visible' });
    await page.fill('#token-input', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.locator('#feed', { hasText: 'live' }).waitFor();
    await page.locator('#journal tbody tr', { hasText: '/v1/t2a_v2' }).first().waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);
    // The key never appears in full: only its label.
    expect(await page.content()).not.toContain('early-key');
  }, 60_000);

  it('a request made now appears live; its synthesized audio plays in the page', async () => {
    const r = await t2a('listener-key-0123456789', { output_format: 'url', audio_setting: { format: 'mp3', sample_rate: 32000 } });
    expect(r.body.base_resp.status_code).toBe(0);
    const [entry] = (await ctl.journal({ limit: 1 })).body.entries;
    const row = page.locator(`#journal tbody tr[data-id="${entry.id}"]`);
    await row.waitFor();
    await row.locator('td', { hasText: '200' }).waitFor();
    await row.click();
    const audio = page.locator('#detail audio');
    await audio.waitFor();
    expect(await page.locator('#detail').textContent()).not.toContain('listener-key-0123456789');
    const played = await audio.evaluate(async (el: HTMLAudioElement) => {
      if (el.readyState < 1)
        await new Promise((resolve, reject) => ((el.onloadedmetadata = resolve), (el.onerror = () => reject(new Error('audio failed to load')))));
      await el.play();
      await new Promise((resolve) =>
        el.addEventListener('timeupdate', function tick() {
          if (el.currentTime > 0) resolve(el.removeEventListener('timeupdate', tick));
        }),
      );
      el.pause();
      // The player plays the file the page fetched itself (marked, so not journaled): its source is the answer's link.
      return { duration: el.duration, currentTime: el.currentTime, src: el.dataset.source };
    });
    expect(played.duration).toBeGreaterThan(1);
    expect(Math.abs(played.duration * 1000 - r.body.extra_info.audio_length)).toBeLessThan(150);
    expect(played.currentTime).toBeGreaterThan(0);
    expect(played.src).toMatch(/^\/download\/.+\.mp3\?/);
    await page.screenshot({ path: screenshotPath('inspector-journal') });
  }, 60_000);

  it('filters the journal by account, path, status and code', async () => {
    await t2a('filter-key', { text: '' });
    await page.locator('#journal tbody tr td', { hasText: '2013' }).first().waitFor();
    await page.fill('#filters [name=code]', '2013');
    const rows = page.locator('#journal tbody tr');
    expect(await rows.count()).toBe(1);
    await page.fill('#filters [name=code]', '');
    await page.fill('#filters [name=account]', 'filter-key');
    await page
      .locator('#journal tbody tr', { hasText: '400' })
      .or(page.locator('#journal tbody tr', { hasText: '200' }))
      .first()
      .waitFor();
    await expect.poll(() => rows.count()).toBe(1);
    await page.fill('#filters [name=account]', '');
    await page.fill('#filters [name=status]', '200');
    await page.fill('#filters [name=path]', '/v1/t2a');
    expect(await rows.count()).toBeGreaterThanOrEqual(3);
    await page.fill('#filters [name=status]', '');
    await page.fill('#filters [name=path]', '');
  }, 60_000);

  it('the code filter matches what verify and the journal API match: not a success that carries no code', async () => {
    const made = await t2a('code-filter-key', { output_format: 'url' });
    const audio = await fetch(made.body.data.audio as string);
    expect(audio.status).toBe(200);
    await audio.arrayBuffer();
    const download = new URL(made.body.data.audio as string).pathname;
    // The download is journaled as a success with no spec code of its own (the list shows a muted 0)…
    const journaled = (await ctl.journal({ path: download })).body.entries;
    expect(journaled).toHaveLength(1);
    expect(journaled[0].response.code).toBeUndefined();
    expect((await ctl.journal({ path: download, code: 0 })).body.entries).toEqual([]);
    const rows = page.locator('#journal tbody tr');
    await page.fill('#filters [name=path]', download);
    await expect.poll(() => rows.count()).toBe(1);
    // …so a code filter of 0 leaves it out, as the journal API does, and keeps the synthesis that answered 0.
    await page.fill('#filters [name=code]', '0');
    await expect.poll(() => rows.count()).toBe(0);
    await page.fill('#filters [name=path]', '/v1/t2a_v2');
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(1);
    await page.fill('#filters [name=code]', '');
    await page.fill('#filters [name=path]', '');
  }, 60_000);

  it('the clock buttons freeze and move the emulator clock', async () => {
    const freeze = page.locator('#clock-freeze');
    if ((await freeze.textContent()) === 'Freeze') await freeze.click();
    await page.locator('#clock-state', { hasText: 'frozen' }).waitFor();
    const before = (await ctl.clock()).body.now_ms as number;
    await page.click('.clock-advance[data-ms="60000"]');
    await page.locator(`#clock-now[data-ms="${before + 60_000}"]`).waitFor();
    expect((await ctl.clock()).body).toEqual({ now_ms: before + 60_000, frozen: true });
  }, 60_000);

  it('a fault rule added in the page is applied to the next request, then listed and deleted there', async () => {
    await page.click('#tabs [data-tab=faults]');
    await page.fill('#fault-form [name=path]', '/v1/t2a_v2');
    await page.fill('#fault-form [name=code]', '1002');
    await page.fill('#fault-form [name=times]', 'always');
    await page.click('#fault-form button[type=submit]');
    await page.locator('#faults tbody tr', { hasText: 'code=1002' }).waitFor();
    const faulted = await t2a('fault-key');
    expect(faulted.body.base_resp.status_code).toBe(1002);
    await page.screenshot({ path: screenshotPath('inspector-faults') });
    await page.locator('#faults tbody tr', { hasText: 'code=1002' }).locator('button').click();
    await page.locator('#faults tbody tr').waitFor({ state: 'detached' });
    expect((await ctl.faults()).body.rules).toEqual([]);
    expect((await t2a('fault-key')).body.base_resp.status_code).toBe(0);
  }, 60_000);

  it('shows sessions, sockets and timers, account settings and the API documents', async () => {
    await page.click('#tabs [data-tab=state]');
    await page.locator('#state .card').first().waitFor();
    expect(await page.locator('#state-totals').textContent()).toMatch(/open sockets/);
    await page.screenshot({ path: screenshotPath('inspector-state') });

    await page.click('#tabs [data-tab=accounts]');
    await page.fill('#account-form [name=key]', 'settings-key-abcdef');
    await page.fill('#account-settings', '{"balance_micro": 4242, "disabled": false}');
    await page.click('#account-form button[value=put]');
    await page.locator('#account-view', { hasText: '4242' }).waitFor();
    expect(await page.locator('#account-view').textContent()).not.toContain('settings-key-abcdef');
    expect((await ctl.account('settings-key-abcdef')).body.balance_micro).toBe(4242);

    await page.click('#tabs [data-tab=documents]');
    expect(await page.locator('#documents a').count()).toBe(4);
    await page.click('#tabs [data-tab=journal]');
  }, 60_000);

  it('shows the frames of a WebSocket conversation', async () => {
    const ws = new WebSocket(`${emu.platformUrl.replace(/^http/, 'ws')}/api/v1/audio/conversation/stream-text?api_key=socket-key`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ voice_id: 'english_tutor', text_input: 'bye' }));
    await new Promise((resolve) => ws.once('close', resolve));
    const [entry] = (await ctl.journal({ limit: 1, path: '/api/v1/audio/conversation/stream-text' })).body.entries;
    const row = page.locator(`#journal tbody tr[data-id="${entry.id}"]`);
    await row.locator('td', { hasText: '101' }).waitFor();
    await row.click();
    await page.locator('#detail h3', { hasText: 'WebSocket frames' }).waitFor();
    expect(await page.locator('#detail .frames tr', { hasText: 'done' }).count()).toBe(1);
    expect(await page.locator('#detail .frames tr', { hasText: 'binary' }).count()).toBeGreaterThan(0);
  }, 60_000);

  it('plays the audio a client streamed on the recognition socket', async () => {
    const ws = new WebSocket(`${emu.platformUrl.replace(/^http/, 'ws')}/v1/speech-to-text/stream?api_key=mic-key`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ meta: { audio_format: 'pcm16', language: 'en' } }));
    // One second of a quiet 440 Hz tone, PCM16 mono at 16 kHz, in four frames.
    const pcm = Buffer.alloc(32_000);
    for (let i = 0; i < 16_000; i++) pcm.writeInt16LE(Math.round(2000 * Math.sin((2 * Math.PI * 440 * i) / 16_000)), i * 2);
    for (let i = 0; i < 4; i++) ws.send(pcm.subarray(i * 8000, (i + 1) * 8000));
    ws.send(JSON.stringify({ is_final: true }));
    await new Promise((resolve) => ws.once('close', resolve));
    const [entry] = (await ctl.journal({ limit: 1, path: '/v1/speech-to-text/stream' })).body.entries;
    expect(entry.client_audio.bytes).toBe(32_000);
    await page.locator(`#journal tbody tr[data-id="${entry.id}"]`).click();
    const player = page.locator('#detail audio.client-audio');
    await player.waitFor();
    const duration = await player.evaluate((el: HTMLAudioElement) =>
      el.readyState >= 1 ? el.duration : new Promise<number>((resolve) => (el.onloadedmetadata = () => resolve(el.duration))),
    );
    expect(duration).toBeCloseTo(1, 2);
  }, 60_000);

  it('keeps a picture of a busy journal (test-output/screenshots/inspector.png)', async () => {
    await call(`${emu.platformUrl}/v1/text-to-speech`, {
      headers: { 'x-api-key': 'platform-key-01' },
      json: { voice_id: 'female_bright', generate_text: 'Hello there, friend.' },
    });
    await call(`${emu.platformUrl}/v1/voice/list`, { headers: { 'x-api-key': 'platform-key-01' } });
    const r = await t2a('speech-key-02', { output_format: 'url', audio_setting: { format: 'mp3', sample_rate: 32000 } });
    expect(r.body.base_resp.status_code).toBe(0);
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.locator('#journal tbody tr', { hasText: '/v1/voice/list' }).waitFor();
    const [entry] = (await ctl.journal({ limit: 1, path: '/v1/t2a_v2' })).body.entries;
    await page.locator(`#journal tbody tr[data-id="${entry.id}"]`).click();
    await page.locator('#detail audio').evaluate((el: HTMLAudioElement) => el.readyState >= 1 || new Promise((resolve) => (el.onloadedmetadata = resolve)));
    await page.screenshot({ path: screenshotPath('inspector') });
  }, 60_000);
});
