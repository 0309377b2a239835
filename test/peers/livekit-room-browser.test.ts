/**
 * `livekit-client` (LiveKit's browser SDK), unmodified, in Debian's Chromium, in the rooms of calls and
 * agent sessions: a page of another origin loads the published bundle, connects with the start/create
 * answer's URL and token, records the bot's greeting through WebAudio, publishes the emulator's own
 * speech as its microphone (a WebAudio source), hears the reply, sees `lk.agent.state` and the
 * transcriptions, and is disconnected with LiveKit's ROOM_DELETED when the session ends.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, otherOrigin } from '../browser/chromium.js';
import { pcm16Wav } from '../helpers/audio.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { agentOp, createAgentSession, hear, keepAlive, micOf, RATE, startCall, stopCall, until, voicedMs } from './livekit-room-helpers.js';
import { clientState, installClient, LIVEKIT_CLIENT_VERSION, receiverStats, recording, type PageClientState } from './livekit-room-page.js';

/* The page's global (the project compiles without the DOM library). */
declare const window: any;

const { emu, ctl } = emulatorForFile();
let browser: Browser;
let site: Awaited<ReturnType<typeof otherOrigin>>;

beforeAll(async () => {
  expect(Number(LIVEKIT_CLIENT_VERSION.split('.')[0])).toBeGreaterThanOrEqual(2);
  browser = await launchChromium({ media: true });
  site = await otherOrigin('<!doctype html><title>call app</title><h1>call app</h1>');
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

async function openApp(): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (err) => console.error('page error:', err.message));
  await page.goto(site.url);
  await installClient(page);
  return page;
}

/** UDP sockets open in this process (the emulator runs in it): the room's peer connections'. */
const udpSockets = () => process.getActiveResourcesInfo().filter((r) => r === 'UDPWrap').length;

/** Polls the page's client until `ok` holds for its state. */
async function pageUntil(page: Page, ok: (s: PageClientState) => boolean, what: string, timeoutMs = 20_000): Promise<PageClientState> {
  let last: PageClientState | null = null;
  let pending = false;
  await until(
    () => {
      if (!pending) {
        pending = true;
        void clientState(page).then(
          (s) => ((last = s), (pending = false)),
          () => (pending = false),
        );
      }
      return last !== null && ok(last);
    },
    what,
    timeoutMs,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; page state: ${JSON.stringify({ ...last, transcripts: last?.transcripts.filter((t) => t.final).map((t) => t.text) })}`);
  });
  return last!;
}

const finals = (s: PageClientState, track: string) => s.transcripts.filter((t) => t.final && t.track === track).map((t) => t.text);

describe('livekit-client in Chromium, in a call room', () => {
  it(
    'hears the greeting, is answered, sees the agent state and the transcriptions, and is disconnected with ROOM_DELETED at stop',
    { timeout: 120_000 },
    async () => {
      const key = 'room-browser-call';
      const d = await startCall(emu, key, { timbre: 'english_tutor', language: 'en' });
      expect(d.rtc_url).toBe(emu.platformUrl.replace('http', 'ws'));
      const page = await openApp();
      const stopBeats = keepAlive(emu, key, { call: d.session_id });
      try {
        await page.evaluate(({ url, token, bot }) => window.app.connect(url, token, bot), { url: d.rtc_url, token: d.token, bot: d.bot_identity });
        let s = await clientState(page);
        expect(s.connected).toBe(true);
        expect(s.roomName).toBe(d.room_name);
        expect(s.identity).toBe(d.identity);
        expect(s.remoteIdentities).toContain(d.bot_identity);

        // The greeting: its transcription, then its audio as the page recorded it from the bot's track.
        const greeting = "Hi! I'm your English tutor. What would you like to talk about today?";
        s = await pageUntil(page, (x) => x.botTrackSid !== '' && finals(x, x.botTrackSid).includes(greeting), 'the greeting transcription');
        const botTrack = s.botTrackSid;
        s = await pageUntil(page, (x) => x.states.at(-1) === 'listening' && x.states.includes('speaking'), 'listening after the greeting');
        const greetingAudio = await recording(page);
        const probe = await ffprobe(Buffer.concat([pcm16Wav(greetingAudio.length, RATE), greetingAudio]), { ext: 'wav' });
        expect(probe).toMatchObject({ codec: 'pcm_s16le', sampleRate: RATE, channels: 1 });
        expect(probe.durationMs).toBeGreaterThan(3000);
        expect(voicedMs(greetingAudio)).toBeGreaterThan(2000);
        const heard = await hear(emu, greetingAudio);
        const heardGreeting = heard.utterances.find((u: any) => u.full_text === greeting) as any;
        expect(heardGreeting, `${JSON.stringify(heard)}; ${await receiverStats(page)}`).toBeDefined();
        expect(heardGreeting.signature_id).toMatch(/.+/);

        // An utterance of the emulator's own speech, played into a published microphone track.
        const said = 'What is the weather like today?';
        const mark = s.recordedSamples;
        const mic = Buffer.from((await micOf(emu, said)).buffer);
        await page.evaluate(({ pcm }) => window.app.speak(pcm, 1000, 1500), { pcm: mic.toString('base64') });
        await pageUntil(page, (x) => x.transcripts.some((t) => t.final && t.track !== botTrack && t.text === said), 'the user transcription');
        const replies = (x: PageClientState) => finals(x, botTrack).filter((t) => t !== '' && t !== greeting);
        s = await pageUntil(page, (x) => replies(x).length > 0 && x.states.at(-1) === 'listening', 'the reply', 30_000);
        expect(s.states).toEqual(expect.arrayContaining(['thinking', 'speaking', 'listening']));
        const reply = await hear(emu, await recording(page, mark));
        expect(
          reply.utterances.map((u) => u.full_text),
          await receiverStats(page),
        ).toContain(replies(s)[0]);

        // The room saw the page's microphone published.
        const state = await ctl.accountState(key);
        const user = state.resources.rooms[0].participants.find((p: any) => p.identity === d.identity);
        expect(user.tracks).toHaveLength(1);

        // Stop: LiveKit's leave for a deleted room (ROOM_DELETED = 5).
        await stopCall(emu, key, d.session_id);
        s = await pageUntil(page, (x) => x.disconnected !== null, 'the disconnect');
        expect(s.disconnected).toBe(5);
        expect(s.errors).toEqual([]);
        expect((await ctl.accountState(key)).resources.rooms ?? []).toEqual([]);
        // The journal: the client asked for LiveKit's single peer-connection path first (404), then joined at /rtc.
        const entries = (await ctl.journal({ limit: 100 })).body.entries as any[];
        expect(entries.some((e) => e.path === '/rtc/v1' && e.status === 404)).toBe(true);
        const joined = entries.find((e) => e.path === '/rtc' && e.room?.room_name === d.room_name);
        expect(joined).toMatchObject({ status: 101, room: { identity: d.identity, disconnect_reason: 'ROOM_DELETED' } });
        expect(joined.room.tracks_published).toHaveLength(1);
      } finally {
        stopBeats();
        await page.evaluate(() => window.app.disconnect()).catch(() => {});
        await page.close();
      }
    },
  );
});

describe('livekit-client in Chromium, in an agent session room', () => {
  it('joins with wsUrl and userToken: the session goes in_call, the agent greets, end disconnects', { timeout: 60_000 }, async () => {
    const key = 'room-browser-agent';
    const item = await createAgentSession(emu, key);
    expect((await agentOp(emu, key, 'check', item.sessionId)).status).toBe('connecting');
    const page = await openApp();
    const stopBeats = keepAlive(emu, key, { agent: item.sessionId });
    try {
      await page.evaluate(({ url, token }) => window.app.connect(url, token, 'agent-agent_demo'), { url: item.wsUrl, token: item.userToken });
      expect((await clientState(page)).remoteIdentities).toContain('agent-agent_demo');
      expect((await agentOp(emu, key, 'check', item.sessionId)).status).toBe('in_call');
      await pageUntil(page, (x) => x.states.includes('speaking') && x.states.at(-1) === 'listening', 'the greeting');
      const heard = await hear(emu, await recording(page));
      expect(heard.utterances.length, await receiverStats(page)).toBeGreaterThan(0);
      expect(heard.utterances[0]!.complete).toBe(true);
      await agentOp(emu, key, 'end', item.sessionId);
      const s = await pageUntil(page, (x) => x.disconnected !== null, 'the disconnect');
      expect(s.disconnected).toBe(5);
    } finally {
      stopBeats();
      await page.evaluate(() => window.app.disconnect()).catch(() => {});
      await page.close();
    }
  });
});

describe('a browser that vanishes while the bot speaks', () => {
  it('its tab crashes mid-greeting: the room lets its connection go, keeps serving, and leaves nothing once it ends', { timeout: 90_000 }, async () => {
    const key = 'room-browser-vanish';
    const d = await startCall(emu, key, { timbre: 'english_tutor', language: 'en' });
    const stopBeats = keepAlive(emu, key, { call: d.session_id });
    const udpBefore = udpSockets();
    const page = await openApp();
    let second: Page | null = null;
    try {
      await page.evaluate(({ url, token, bot }) => window.app.connect(url, token, bot), { url: d.rtc_url, token: d.token, bot: d.bot_identity });
      await pageUntil(page, (x) => x.states.includes('speaking'), 'the bot speaking');
      // The renderer dies: its socket and peer connections go without a word.
      const cdp = await page.context().newCDPSession(page);
      void cdp.send('Page.crash').catch(() => {});
      const participants = async () => ((await ctl.accountState(key)).resources.rooms?.[0]?.participants ?? []).map((p: any) => p.identity);
      let left: string[] = [];
      await until(() => (void participants().then((p) => (left = p)), left.length === 1), 'the crashed client to leave the room');
      expect(left).toEqual([d.bot_identity]);

      // The process and the room are well: the user joins again (another tab) and is answered.
      second = await openApp();
      await second.evaluate(({ url, token, bot }) => window.app.connect(url, token, bot), { url: d.rtc_url, token: d.token, bot: d.bot_identity });
      expect((await clientState(second)).remoteIdentities).toContain(d.bot_identity);
      await stopCall(emu, key, d.session_id);
      expect((await pageUntil(second, (x) => x.disconnected !== null, 'the disconnect')).disconnected).toBe(5);
      const state = await ctl.accountState(key);
      expect(state.resources.rooms ?? []).toEqual([]);
      expect(state.open_websockets).toEqual([]);
      expect(state.pending_timers).toEqual([]);
      // Every peer connection of both joins closed its UDP sockets.
      await until(() => udpSockets() <= udpBefore, `the UDP sockets to close (${udpSockets()} open, ${udpBefore} before)`, 10_000);
    } finally {
      stopBeats();
      await page.close().catch(() => {});
      await second?.evaluate(() => window.app.disconnect()).catch(() => {});
      await second?.close();
    }
  });
});
