import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { launchChromium, screenshotPath } from './chromium.js';

/** The inspector's list and injected faults: marked rows, a fault filter, an empty journal that says what to do, the layout at 820 px. */
/* Browser globals used inside page.evaluate (the project compiles without the DOM library). */
const { emu } = emulatorForFile({ plane: 'speech' });
let browser: Browser;
let page: Page;
const T2A = { model: 'speech-02-turbo', text: 'One sentence. And another one after it. And a third one.', voice_setting: { voice_id: 'male-qn-qingse' } };

beforeAll(async () => {
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 820, height: 900 } });
  page.on('pageerror', (err) => {
    throw err;
  });
});
afterAll(async () => {
  await browser?.close();
});

async function faultedTraffic() {
  // A stream cut after one chunk (200 / 0), a socket closed by close_ws (101 / 0), an injected 1002, and a plain success.
  const cut = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
    method: 'POST',
    headers: { authorization: 'Bearer faults-key', 'content-type': 'application/json', 'x-emulator-fault': 'cut_after_chunks=1' },
    body: JSON.stringify({ ...T2A, stream: true }),
  });
  await cut.text().catch(() => '');
  const ws = new WebSocket(`${emu.speechUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`, {
    headers: { authorization: 'Bearer faults-key', 'x-emulator-fault': 'close_ws=4001' },
  });
  await new Promise((resolve) => ws.once('close', resolve).once('error', resolve));
  await call(`${emu.speechUrl}/v1/t2a_v2`, { json: T2A, headers: { authorization: 'Bearer faults-key', 'x-emulator-fault': 'code=1002' } });
  await call(`${emu.speechUrl}/v1/t2a_v2`, { json: T2A, headers: { authorization: 'Bearer faults-key' } });
}

describe('the inspector and injected faults', () => {
  it("an empty journal says how to send a first request, with this emulator's speech URL", async () => {
    await page.goto(`${emu.speechUrl}/_emulator/`);
    const empty = page.locator('#journal tbody tr.empty');
    await empty.waitFor();
    expect(await empty.textContent()).toContain('No requests yet');
    expect(await empty.locator('pre').textContent()).toContain(`curl -s ${emu.speechUrl}/v1/t2a_v2`);
    await page.screenshot({ path: screenshotPath('inspector-820-empty') });
  }, 60_000);

  it('fault rows are marked in the live list (a cut stream, a close_ws socket, an injected 1002); the filter shows faults only or none', async () => {
    await faultedTraffic();
    const rows = page.locator('#journal tbody tr[data-id]');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#journal tbody tr[data-id]').length >= 4);
    expect(await page.locator('#journal tbody tr.empty').count()).toBe(0);
    const marked = page.locator('#journal tbody tr.faulted');
    expect(await marked.count()).toBe(3);
    expect(await marked.locator('.fault-mark').count()).toBe(3);
    const texts = await marked.allTextContents();
    expect(texts.some((t) => t.includes('/ws/v1/t2a_v2') && t.includes('101'))).toBe(true);
    expect(await page.locator('#journal tbody tr.faulted .fault-mark').first().getAttribute('title')).toMatch(/^injected fault \(header\): /);
    const titles = await page.locator('#journal tbody tr.faulted .fault-mark').evaluateAll((els: any[]) => els.map((e) => e.title));
    expect(titles.join('\n')).toMatch(/cut_after_chunks=1/);
    expect(titles.join('\n')).toMatch(/close_ws=4001/);
    expect(titles.join('\n')).toMatch(/code=1002/);
    // The plain success carries no mark.
    expect(await rows.count()).toBe(4);
    await page.screenshot({ path: screenshotPath('inspector-820-faults') });

    await page.selectOption('#filters select[name="fault"]', 'true');
    expect(await page.locator('#journal tbody tr[data-id]').count()).toBe(3);
    await page.selectOption('#filters select[name="fault"]', 'false');
    expect(await page.locator('#journal tbody tr[data-id]').count()).toBe(1);
    expect(await page.locator('#journal tbody tr.faulted').count()).toBe(0);
    await page.selectOption('#filters select[name="fault"]', '');
    expect(await page.locator('#journal tbody tr[data-id]').count()).toBe(4);
  }, 60_000);

  it('at 820 px the detail opens right under a short list, not below a blank area', async () => {
    await page.locator('#journal tbody tr.faulted').first().click();
    await page.locator('#detail h2').waitFor();
    const gap = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const lastRow = [...doc.querySelectorAll('#journal tbody tr')].at(-1).getBoundingClientRect().bottom;
      return doc.querySelector('#detail').getBoundingClientRect().top - lastRow;
    });
    expect(gap).toBeLessThan(60);
    await page.screenshot({ path: screenshotPath('inspector-820-detail'), fullPage: true });
  }, 60_000);
});
