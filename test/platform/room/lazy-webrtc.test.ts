/**
 * An emulator that never hosts a room never loads its WebRTC stack: `werift` is loaded on the first
 * join of a room only, so start-up and memory stay what they were without rooms. Watched from inside
 * the process (werift-probe.mjs lists every module of the package the process loads), on the CLI as
 * users start it, through requests of both services that are not rooms (a call's token minted, its
 * heartbeat, `/rtc/validate`, the state view), then a join that must load it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnEmulator, type ChildEmulator } from '../../helpers/child.js';
import { call } from '../../helpers/emulator.js';
import { openSignal, rtcUrl } from '../room-signal-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'lazy-webrtc-'));
const probeFile = join(dir, 'werift-modules');
const probe = join(import.meta.dirname, 'werift-probe.mjs');
let emu: ChildEmulator | undefined;

afterAll(async () => {
  emu?.child.kill('SIGTERM');
  await emu?.exited;
  rmSync(dir, { recursive: true, force: true });
});

const loaded = () => readFileSync(probeFile, 'utf8').split('\n').filter(Boolean);

describe('the WebRTC stack loads on the first room join only', () => {
  it('stays unloaded through requests that are not rooms, and loads when a client joins', { timeout: 90_000 }, async () => {
    writeFileSync(probeFile, '');
    emu = await spawnEmulator(['--seed', 'lazy', '--log-level', 'warn'], 60_000, { flags: ['--import', probe], env: { WERIFT_PROBE_FILE: probeFile } });
    const key = { 'x-api-key': 'lazy-webrtc' };

    const t2a = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: { model: 'speech-02-turbo', text: 'Hello there.', voice_setting: { voice_id: 'male-qn-qingse' } },
      headers: { authorization: 'Bearer lazy-webrtc' },
    });
    expect(t2a.body.base_resp?.status_code, t2a.text).toBe(0);
    const start = await call(`${emu.platformUrl}/v1/audio/assistant/start`, { json: { client_nonce: crypto.randomUUID() }, headers: key });
    expect(start.body.error_code, start.text).toBe(0);
    const d = start.body.data as { session_id: string; rtc_url: string; token: string };
    const hb = await call(`${emu.platformUrl}/v1/audio/assistant/heartbeat`, { json: { session_id: d.session_id }, headers: key });
    expect(hb.body.error_code, hb.text).toBe(0);
    const validate = await fetch(`${d.rtc_url.replace('ws', 'http')}/rtc/validate?access_token=${encodeURIComponent(d.token)}`);
    expect(validate.status).toBe(200);
    const state = await call(`${emu.platformUrl}/_emulator/state`);
    expect(state.status).toBe(200);
    expect(loaded()).toEqual([]);

    // The first join: the server's subscriber offer needs werift, which is loaded now.
    const client = await openSignal(rtcUrl(d.rtc_url, d.token));
    try {
      await client.next('join');
      await client.next('offer', 30_000);
      expect(loaded().some((url) => url.includes('/node_modules/werift/lib/'))).toBe(true);
    } finally {
      client.ws.close();
    }
  });
});
