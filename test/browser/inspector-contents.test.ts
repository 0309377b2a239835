import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { session, START } from '../speech/ws/ws-helpers.js';
import { connect, flush, sendFrames, spokenPcm, wsUrl } from '../platform/conversation/conversation-helpers.js';
import { launchChromium, screenshotPath } from './chromium.js';

/**
 * What the inspector shows of a request's contents: the listener that served it, the fault and what it
 * did, a stream's first and last events, a socket's frames in order with their JSON (audio as sizes,
 * cut contents marked), the turns of a conversation; and opening all of it adds nothing to the journal.
 */
/* Browser globals used inside page.evaluate (the project compiles without the DOM library). */
type HTMLElement = any;
const { emu, ctl } = emulatorForFile({ plane: 'speech' });
let browser: Browser;
let page: Page;
/** The journal's ids before the page was opened: looking must not add any. */
let idsBefore: string[] = [];

const VOICE = 'male-qn-qingse';
const LONG = 'A longer text that makes several chunks of audio, so that a fault can cut the stream after its second one.';

const t2a = (base: string, headers: Record<string, string>, extra: Record<string, unknown> = {}) =>
  call(`${base}/v1/t2a_v2`, {
    headers: { authorization: 'Bearer contents-key', ...headers },
    json: { model: 'speech-02-turbo', text: 'Shown.', voice_setting: { voice_id: VOICE }, ...extra },
  });

const ids = async () => (await ctl.journal()).body.entries.map((e: { id: string }) => e.id) as string[];
const detail = () => page.locator('#detail');

/** Opens an entry's detail and waits until it shows that entry. */
async function open(id: string) {
  await page.locator(`#journal tbody tr[data-id="${id}"]`).click();
  await page.locator('#detail h2 + p', { hasText: id }).waitFor();
}

/** Runs a conversation on the platform's socket: spoken audio in (in small frames: more than the journal keeps), `done` out. */
async function spokenTurn(spoken: string) {
  const { pcm } = await spokenPcm(emu.emulator, spoken);
  const c = await connect(wsUrl(emu.platformUrl, '/api/v1/audio/conversation/stream', 'contents-conv'));
  c.sendJson({ meta: { voice_id: 'support_agent', audio_format: 'pcm16', language: 'en' } });
  await c.waitFor('session_created');
  await sendFrames(c.ws, pcm, 640);
  await flush(c.ws);
  c.sendJson({ is_final: true });
  const done = await c.waitFor('done');
  c.ws.close();
  await c.closed;
  return done.reply_text as string;
}

const entries: Record<string, any> = {};

beforeAll(async () => {
  // Every kind of content, made before the page opens.
  await t2a(emu.speechBackupUrl, { 'X-Emulator-Fault': 'code=1002' });
  entries.backupFault = (await ctl.journal({ limit: 1 })).body.entries[0];
  const rule = await ctl.addFault({ path: '/v1/t2a_v2', times: 1, fault: { status: 429, close_ws: 4001 } });
  await t2a(emu.speechUrl, {});
  entries.ruleFault = { ...(await ctl.journal({ limit: 1 })).body.entries[0], rule: rule.body.id };
  await t2a(emu.speechUrl, { 'X-Emulator-Fault': 'cut_after_chunks=2' }, { stream: true, text: LONG }).catch(() => null);
  entries.cut = (await ctl.journal({ limit: 1 })).body.entries[0];
  await session(emu.speechUrl, [
    START,
    { event: 'task_continue', text: 'Frames kept.' },
    // A frame whose content is over the journal's bound per frame: kept cut, and marked.
    { event: 'task_continue', text: 'Padded.', padding: Array.from({ length: 6 }, (_, i) => String.fromCharCode(103 + i).repeat(1000)) },
    { event: 'task_finish' },
  ]);
  entries.socket = (await ctl.journal({ path: '/ws/v1/t2a_v2', limit: 1 })).body.entries[0];
  entries.reply = await spokenTurn('Hello, what is the weather like tomorrow?');
  entries.conversation = (await ctl.journal({ path: '/api/v1/audio/conversation/stream', limit: 1 })).body.entries[0];
  idsBefore = await ids();

  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (err) => {
    throw err;
  });
  await page.goto(`${emu.speechUrl}/_emulator/`);
  await page.locator(`#journal tbody tr[data-id="${entries.conversation.id}"]`).waitFor();
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

describe('the inspector shows what a request carried', () => {
  it('the listener, and a header fault with its origin and what it did', async () => {
    const e = entries.backupFault;
    expect(e.fault).toEqual({ origin: 'header', code: 1002 });
    await open(e.id);
    expect(await detail().locator('.facts .listener').textContent()).toBe('speech-backup');
    const fault = detail().locator('section.fault');
    expect(await fault.locator('.fault-origin').textContent()).toBe('From the X-Emulator-Fault header');
    expect(await fault.locator('.fault-effects li').allTextContents()).toEqual(['answered with spec code 1002']);
    await page.screenshot({ path: screenshotPath('inspector-contents-fault') });
  });

  it('a rule fault: the rule that fired, what the endpoint did and what it could not express', async () => {
    const e = entries.ruleFault;
    await open(e.id);
    expect(await detail().locator('.facts .listener').textContent()).toBe('speech');
    const fault = detail().locator('section.fault');
    expect(await fault.locator('.fault-origin').textContent()).toBe(`From the fault rule ${e.rule}`);
    expect(await fault.locator('.fault-effects li').allTextContents()).toEqual([
      'answered with HTTP 429',
      'not expressed by this endpoint (named in X-Emulator-Fault-Ignored): close_ws',
    ]);
  });

  it('a stream cut by a fault: the chunk it was cut at, the first and last events with audio as a size', async () => {
    const e = entries.cut;
    expect(e.stream.first_event.data.audio).toEqual({ chars: expect.any(Number) });
    await open(e.id);
    const effects = detail().locator('section.fault .fault-effects li');
    expect(await effects.allTextContents()).toEqual(['cut the connection after chunk 2 (cut_after_chunks=2)']);
    const stream = detail().locator('section.events');
    expect(await stream.locator('h3').textContent()).toBe(`Stream (2 chunks, ${e.stream.bytes.toLocaleString('en')} bytes)`);
    expect(await stream.locator('.event h4').allTextContents()).toEqual(['First event', 'Last event sent (then cut)']);
    const first = await stream.locator('.event pre').first().textContent();
    expect(first).toContain(`"audio": ‹audio: ${(e.stream.first_event.data.audio.chars / 2).toLocaleString('en')} bytes›`);
    expect(first).toContain(`"trace_id": "${e.stream.first_event.trace_id}"`);
    expect(await stream.textContent()).not.toContain('chars');
    await detail().screenshot({ path: screenshotPath('inspector-contents-stream') });
  });

  it('a socket: every frame in order with its JSON, audio as sizes, a cut content marked', async () => {
    const e = entries.socket;
    await open(e.id);
    const rows = detail().locator('.frames tr.frame');
    // Text frames appear one per row, in the journal's order.
    const shown = await rows.evaluateAll((trs: HTMLElement[]) => trs.filter((tr) => tr.classList.contains('text')).map((tr) => tr.dataset.event));
    expect(shown).toEqual(e.ws_frames.filter((f: any) => f.type === 'text').map((f: any) => f.event));
    const content = (event: string) => rows.filter({ has: page.locator(`td:text-is("${event}")`) }).locator('td.content');
    expect(await content('task_continue').first().textContent()).toBe('{ "event": "task_continue", "text": "Frames kept." }');
    const audioFrame = e.ws_frames.find((f: any) => f.event === 'task_continued');
    expect(await content('task_continued').first().textContent()).toContain(
      `"data": { "audio": ‹audio: ${(audioFrame.content.data.audio.chars / 2).toLocaleString('en')} bytes› }`,
    );
    const cut = e.ws_frames.find((f: any) => f.truncated);
    expect(cut).toMatchObject({ dir: 'in', event: 'task_continue' });
    const marked = detail().locator('.frames tr.frame', { has: page.locator('.truncated') });
    expect(await marked.count()).toBe(e.ws_frames.filter((f: any) => f.truncated).length);
    expect(await marked.first().locator('td.content').textContent()).toContain('Padded.');
    expect(await detail().locator('.frames').textContent()).not.toMatch(/chars"|[0-9a-f]{64}/);
    await detail().screenshot({ path: screenshotPath('inspector-contents-socket') });
  });

  it('the conversation socket: what was heard (asr_final) and the reply text, binary frames as counted runs', async () => {
    const e = entries.conversation;
    await open(e.id);
    expect(await detail().locator('section.events p').textContent()).toBe(
      `The answer's audio (${e.chunks} chunks, ${e.stream.bytes.toLocaleString('en')} bytes) went out in the frames below.`,
    );
    const turn = detail().locator('section.conversation .turn');
    expect(await turn.count()).toBe(1);
    expect(await turn.locator('.heard').textContent()).toBe('heard (asr_final): Hello, what is the weather like tomorrow?');
    expect(await turn.locator('.reply').textContent()).toBe(`replied: ${entries.reply}`);
    const asrFinal = detail().locator('.frames tr.frame[data-event="asr_final"] td.content');
    expect(await asrFinal.textContent()).toBe('{ "type": "asr_final", "asr_text": "Hello, what is the weather like tomorrow?" }');
    const done = detail().locator('.frames tr.frame[data-event="done"] td.content');
    expect(await done.textContent()).toContain(`"reply_text": ${JSON.stringify(entries.reply)}`);
    // The client's audio frames, one row per run, their bytes added up.
    const sentBinary = e.ws_frames.filter((f: any) => f.dir === 'in' && f.type === 'binary');
    const runs = detail().locator('.frames tr.frame.binary[data-dir="in"]');
    const runBytes = await runs.evaluateAll((trs: HTMLElement[]) => trs.map((tr) => Number(tr.querySelector('td.num').textContent.replace(/[^\d]/g, ''))));
    expect(runBytes.reduce((a, b) => a + b, 0)).toBe(sentBinary.reduce((a: number, f: any) => a + f.size, 0));
    expect(runBytes.length).toBeLessThan(sentBinary.length);
    // The frames the journal did not keep are counted where they were: after the first 100.
    const dropped = e.ws_frames_total - e.ws_frames.length;
    expect(dropped).toBeGreaterThan(0);
    const gap = detail().locator('.frames tr.gap');
    expect(await gap.textContent()).toBe(`… ${dropped} frames not kept (the journal keeps the first and the last) …`);
    const before = await detail()
      .locator('.frames tr')
      .evaluateAll((trs: HTMLElement[]) => trs.findIndex((tr) => tr.classList.contains('gap')));
    const framesBefore = await detail()
      .locator('.frames tr')
      .evaluateAll(
        (trs: HTMLElement[], n: number) => trs.slice(0, n).reduce((sum, tr) => sum + (Number(/×(\d+)/.exec(tr.children[1].textContent)?.[1]) || 1), 0),
        before,
      );
    expect(framesBefore).toBe(100);
    await page.screenshot({ path: screenshotPath('inspector-contents-conversation'), fullPage: true });
  });

  it('the typed conversation: the text sent and the reply', async () => {
    const ws = await connect(wsUrl(emu.platformUrl, '/api/v1/audio/conversation/stream-text', 'contents-text'));
    ws.sendJson({ voice_id: 'english_tutor', text_input: 'bye' });
    const done = await ws.waitFor('done');
    await ws.closed;
    const [e] = (await ctl.journal({ path: '/api/v1/audio/conversation/stream-text', limit: 1 })).body.entries;
    await open(e.id);
    const turn = detail().locator('section.conversation .turn');
    expect(await turn.locator('.typed').textContent()).toBe('typed (text_input): bye');
    expect(await turn.locator('.reply').textContent()).toBe(`replied: ${done.reply_text}`);
    idsBefore = [e.id, ...idsBefore];
  });

  it('opening every one of them added no journal entry', async () => {
    expect(await ids()).toEqual(idsBefore);
    expect((await ctl.call('POST', '/verify', { request: { path: '/_emulator/' }, exactly: 0 })).status).toBe(200);
  });
});
