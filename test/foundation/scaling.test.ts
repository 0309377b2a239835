// Several emulators behind a proxy that routes by API key (docs/scaling.md): a key's resources stay on one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningEmulator } from '../../src/index.js';
import { call, control, startTestEmulator } from '../helpers/emulator.js';
import { HashRing, platformRouteKey, speechRouteKey, startRoutingProxy, type RoutingProxy } from '../helpers/routing-proxy.js';
import { connect, wsUrl } from '../platform/conversation/conversation-helpers.js';

const KEYS = ['team-a-ci', 'team-b-ci', 'team-c-dev', 'team-d-dev', 'team-e-load', 'team-f-load', 'team-g-demo', 'team-h-demo'];
// One ring over the emulators' names serves both listeners: a key lands on the same emulator on each.
const ring = new HashRing(['emulator-0', 'emulator-1']);
const home = (key: string) => ring.pick(key);

const emus: RunningEmulator[] = [];
let speech: RoutingProxy;
let platform: RoutingProxy;

beforeAll(async () => {
  emus.push(await startTestEmulator(), await startTestEmulator());
  speech = await startRoutingProxy(
    ring,
    emus.map((e) => e.speechUrl),
    speechRouteKey,
  );
  platform = await startRoutingProxy(
    ring,
    emus.map((e) => e.platformUrl),
    platformRouteKey,
  );
  for (const key of KEYS) {
    // A REST conversation session (X-API-Key), a T2A call (Bearer), a conversation socket (?api_key=) and a speech socket (Bearer).
    const session = await call(`${platform.url}/api/v1/audio/sessions`, { headers: { 'x-api-key': key }, json: { voice_id: 'storyteller' } });
    expect(session.body.succeed, session.text).toBe(true);
    const t2a = await call(`${speech.url}/v1/t2a_v2`, {
      headers: { authorization: `Bearer ${key}` },
      json: { model: 'speech-02-hd', text: 'Hello there.', voice_setting: { voice_id: 'male-qn-qingse' } },
    });
    expect(t2a.body.base_resp.status_code, t2a.text).toBe(0);
    const socket = await connect(wsUrl(platform.url, '/api/v1/audio/conversation/stream-text', key));
    socket.sendJson({ voice_id: 'storyteller', audio_format: 'pcm16', text_input: 'Hello?' });
    expect((await socket.closed).code).toBe(1000);
    expect(socket.events().at(-1).type).toBe('done');
    const ws = new WebSocket(`${speech.url.replace(/^http/, 'ws')}/ws/v1/t2a_v2`, { headers: { authorization: `Bearer ${key}` } });
    const first = await new Promise<string>((resolve, reject) => {
      ws.once('message', (data) => resolve(String(data)));
      ws.once('error', reject);
    });
    expect(JSON.parse(first).event).toBe('connected_success');
    ws.close();
    await new Promise((resolve) => ws.once('close', resolve));
  }
}, 60_000);

afterAll(async () => {
  await Promise.all([speech?.close(), platform?.close()]);
  await Promise.all(emus.map((e) => e.close()));
});

describe('two emulators behind a proxy that hashes the API key', () => {
  it('the keys spread over both emulators', () => {
    expect(new Set(KEYS.map(home))).toEqual(new Set([0, 1]));
  });

  it("each key's requests on both services and its socket reached its own emulator only", async () => {
    for (const key of KEYS) {
      const [own, other] = [control(emus[home(key)]!.platformUrl), control(emus[1 - home(key)]!.platformUrl)];
      const paths = (await own.journal({ account: key })).body.entries.map((e: { service: string; path: string }) => `${e.service} ${e.path}`);
      expect(paths.sort(), key).toEqual(
        ['platform /api/v1/audio/conversation/stream-text', 'platform /api/v1/audio/sessions', 'speech /v1/t2a_v2', 'speech /ws/v1/t2a_v2'].sort(),
      );
      expect((await other.journal({ account: key })).body.entries, key).toEqual([]);
    }
  });

  it("each emulator's control plane shows its own keys' resources and nobody else's", async () => {
    for (const [index, emu] of emus.entries()) {
      const mine = KEYS.filter((k) => home(k) === index);
      // The control plane is reached directly, on either listener of that emulator.
      for (const plane of [control(emu.speechUrl), control(emu.platformUrl)]) {
        for (const key of KEYS) {
          const account = await plane.accountState(key);
          if (mine.includes(key)) expect(account?.resources.conversation_sessions, key).toHaveLength(1);
          else expect(account, key).toBeUndefined();
        }
        expect((await plane.state()).body.totals.accounts).toBe(mine.length);
      }
    }
  });
});
