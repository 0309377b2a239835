/**
 * Several emulators behind HAProxy and nginx, each run with the exact configuration docs/scaling.md
 * prints (read from the doc; only the addresses change, to loopback ports): every transport of a key
 * reaches one emulator, the same on every listener, and its download links come back to it; a third
 * emulator added the way the doc says moves keys only onto itself, the others stay put.
 *
 * The proxies are Debian's (`.ci/run` installs them). Where one is not installed its tests are skipped,
 * with the reason on one line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningEmulator } from '../../src/index.js';
import { call, control, startTestEmulator } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import {
  docConfig,
  freePorts,
  localize,
  proxyBinary,
  startProxy,
  withThirdEmulator,
  type FrontPorts,
  type ProxyKind,
  type RunningProxy,
} from '../helpers/proxies.js';
import { connect, wsUrl } from '../platform/conversation/conversation-helpers.js';

const KEYS = [
  'team-a-ci',
  'team-b-ci',
  'team-c-dev',
  'team-d-dev',
  'team-e-load',
  'team-f-load',
  'team-g-demo',
  'team-h-demo',
  'team-i.qa',
  'team_j-qa',
  'TEAM-K',
  'team-l-9',
];

const portsOf = (e: RunningEmulator) => ({
  speech: Number(new URL(e.speechUrl).port),
  speechBackup: Number(new URL(e.speechBackupUrl).port),
  platform: Number(new URL(e.platformUrl).port),
});

/** The emulator whose state holds `key` (asked on each emulator's own address); -1 for none, throws for several. */
async function holder(emus: RunningEmulator[], key: string): Promise<number> {
  const found: number[] = [];
  for (const [n, emu] of emus.entries()) if (await control(emu.platformUrl).accountState(key)) found.push(n);
  if (found.length > 1) throw new Error(`${key} has state on emulators ${found.join(' and ')}`);
  return found[0] ?? -1;
}

/** Every transport, through the proxy, for one key: two T2A calls (speech, backup) with a link, both sockets, a REST session. */
async function useEveryTransport(proxy: RunningProxy, key: string): Promise<{ link: string; sessionId: string }> {
  const t2a = await call(`${proxy.speechUrl}/v1/t2a_v2`, {
    headers: { authorization: `Bearer ${key}` },
    json: { model: 'speech-02-hd', text: 'Hello there.', voice_setting: { voice_id: 'male-qn-qingse' }, output_format: 'url' },
  });
  expect(t2a.body?.base_resp?.status_code, `${proxy.kind} ${key}: ${t2a.text}`).toBe(0);
  const backup = await call(`${proxy.speechBackupUrl}/v1/t2a_v2`, {
    headers: { authorization: `  bearer ${key} ` },
    json: { model: 'speech-02-turbo', text: 'Hello again.', voice_setting: { voice_id: 'male-qn-qingse' } },
  });
  expect(backup.body?.base_resp?.status_code, `${proxy.kind} ${key} backup: ${backup.text}`).toBe(0);
  const session = await call(`${proxy.platformUrl}/api/v1/audio/sessions`, { headers: { 'x-api-key': key }, json: { voice_id: 'storyteller' } });
  expect(session.body?.succeed, `${proxy.kind} ${key}: ${session.text}`).toBe(true);
  const conversation = await connect(wsUrl(proxy.platformUrl, '/api/v1/audio/conversation/stream-text', key));
  conversation.sendJson({ voice_id: 'storyteller', audio_format: 'pcm16', text_input: 'Hello?' });
  expect((await conversation.closed).code).toBe(1000);
  expect(conversation.events().at(-1).type).toBe('done');
  const ws = new WebSocket(`${proxy.speechUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`, { headers: { authorization: `Bearer ${key}` } });
  const first = await new Promise<string>((resolve, reject) => {
    ws.once('message', (data) => resolve(String(data)));
    ws.once('error', reject);
  });
  expect(JSON.parse(first).event).toBe('connected_success');
  ws.close();
  await new Promise((resolve) => ws.once('close', resolve));
  return { link: t2a.body.data.audio as string, sessionId: session.body.data.session_id as string };
}

const JOURNALED = [
  'platform /api/v1/audio/conversation/stream-text',
  'platform /api/v1/audio/sessions',
  'speech /v1/t2a_v2',
  'speech /v1/t2a_v2',
  'speech /ws/v1/t2a_v2',
];

/** The suite for one proxy (scaling-haproxy.test.ts, scaling-nginx.test.ts: two files, so the two run side by side). */
export function scalingSuite(kind: ProxyKind): void {
  const binary = proxyBinary(kind);
  if (binary.missing) console.warn(`scaling behind ${kind} skipped: ${binary.missing}`);

  describe(`three emulators behind ${kind}, configured as docs/scaling.md prints it`, { timeout: 180_000 }, () => {
    const emus: RunningEmulator[] = [];
    let front: FrontPorts;
    let proxy: RunningProxy | undefined;
    const home = new Map<string, number>();

    const start = async (count: 2 | 3) => {
      const doc = docConfig(kind);
      const config = localize(kind, count === 3 ? withThirdEmulator(doc) : doc, front, emus.slice(0, count).map(portsOf));
      proxy = await startProxy(kind, binary.path!, config, front);
      return proxy;
    };

    beforeAll(async () => {
      if (!binary.path) return;
      const [speech, speechBackup, platform, ...hops] = await freePorts(6);
      front = { speech: speech!, speechBackup: speechBackup!, platform: platform!, hops };
      // Each emulator's links come back through the proxy's platform port, under its own /emu-N/.
      for (let n = 0; n < 3; n++) emus.push(await startTestEmulator({ publicUrl: `http://127.0.0.1:${front.platform}/emu-${n}` }));
      await start(2);
    }, 60_000);

    afterAll(async () => {
      await proxy?.stop();
      await Promise.all(emus.map((e) => e.close()));
    });

    it('two emulators: every transport of a key reaches one emulator, the same on all three listeners; the keys spread over both', async (ctx) => {
      ctx.skip(!binary.path, binary.missing);
      // The keys at once, as many test jobs would use one proxy.
      await Promise.all(
        KEYS.map(async (key) => {
          const { link } = await useEveryTransport(proxy!, key);
          const n = await holder(emus, key);
          expect(n, key).toBeGreaterThanOrEqual(0);
          home.set(key, n);
          // The link names the emulator that made it, through the proxy, and comes back to it.
          expect(link.startsWith(`${proxy!.platformUrl}/emu-${n}/`), `${key}: ${link}`).toBe(true);
          const audio = await fetch(link);
          expect(audio.status, `${key}: ${link}`).toBe(200);
          const probe = await ffprobe(Buffer.from(await audio.arrayBuffer()));
          expect(probe.codec).toBe('mp3');
          expect(probe.durationMs).toBeGreaterThan(300);
          // Its control plane, reached by name through the proxy, saw every request of the key; the other saw none.
          const own = await control(`${proxy!.platformUrl}/emu-${n}`).journal({ account: key });
          expect(own.status).toBe(200);
          expect(own.body.entries.map((e: { service: string; path: string }) => `${e.service} ${e.path}`).sort(), key).toEqual(JOURNALED);
          const other = await control(`${proxy!.platformUrl}/emu-${1 - n}`).journal({ account: key });
          expect(other.body.entries, key).toEqual([]);
        }),
      );
      expect(new Set(home.values())).toEqual(new Set([0, 1]));
      expect((await control(emus[2]!.platformUrl).state()).body.totals.accounts).toBe(0);
    });

    it('the hashed listeners answer /_emulator/ with a 404 that says where the control plane is', async (ctx) => {
      ctx.skip(!binary.path, binary.missing);
      for (const url of [proxy!.speechUrl, proxy!.speechBackupUrl, proxy!.platformUrl]) {
        const r = await call(`${url}/_emulator/state`);
        expect(r.status, url).toBe(404);
        expect(r.body.error.message).toContain('/emu-N/_emulator/');
      }
    });

    it('a third emulator added as the doc says: keys move only onto it, every other key stays with its resources', async (ctx) => {
      ctx.skip(!binary.path || home.size < KEYS.length, binary.missing ?? 'the two-emulator test did not finish');
      const session = (key: string) =>
        call(`${proxy!.platformUrl}/api/v1/audio/sessions`, { headers: { 'x-api-key': key }, json: { voice_id: 'storyteller' } });
      // More keys, each with one session on its emulator, so that some move and some stay whatever the ring.
      const keys = [...KEYS, ...Array.from({ length: 24 }, (_, i) => `extra-key-${i}`)];
      await Promise.all(
        keys.slice(KEYS.length).map(async (key) => {
          expect((await session(key)).body?.succeed).toBe(true);
          home.set(key, await holder(emus, key));
        }),
      );
      await proxy!.stop();
      proxy = undefined;
      await start(3);
      const moved: string[] = [];
      await Promise.all(
        keys.map(async (key) => {
          const before = home.get(key)!;
          const again = await session(key);
          expect(again.body?.succeed, again.text).toBe(true);
          const t2a = await call(`${proxy!.speechUrl}/v1/t2a_v2`, {
            headers: { authorization: `Bearer ${key}` },
            json: { model: 'speech-02-turbo', text: 'Still here?', voice_setting: { voice_id: 'male-qn-qingse' } },
          });
          expect(t2a.body?.base_resp?.status_code, t2a.text).toBe(0);
          const sessionsOn = async (n: number) => (await control(emus[n]!.platformUrl).accountState(key))?.resources.conversation_sessions.length ?? 0;
          if ((await sessionsOn(2)) > 0) {
            // Moved: its new requests start empty on the new emulator; the old one keeps what it had.
            moved.push(key);
            expect(await sessionsOn(2), key).toBe(1);
            expect(await sessionsOn(before), key).toBe(1);
          } else {
            // Stayed: its new session sits beside the old one, and nothing of it is anywhere else.
            expect(await sessionsOn(before), key).toBe(2);
            expect(await sessionsOn(1 - before), key).toBe(0);
          }
        }),
      );
      // Some keys move (onto the new emulator only, checked above); the others stay put.
      expect(moved.length, `moved: ${moved.join(', ')}`).toBeGreaterThan(0);
      expect(moved.length, `moved: ${moved.join(', ')}`).toBeLessThan(keys.length);
    });
  });
}
