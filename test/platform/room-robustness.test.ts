/**
 * The room server under bad input, over the real `/rtc` WebSocket: many joins at once (valid tokens and bad
 * ones), malformed signalling messages, a client that falls silent with its socket open, and what is left
 * when the room ends or a participant goes (sockets, peer connections and their UDP sockets, timers: none).
 */
import { DisconnectReason, LeaveRequest, Ping, SessionDescription, SignalRequest, SignalTarget, TrickleRequest } from '@livekit/protocol';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { setPingTiming } from '../../src/services/platform/room/registry.js';
import { call } from '../helpers/emulator.js';
import { nonce, sessionsForFile } from './calls/calls-helpers.js';
import { openSignal, rtcUrl, type SignalClient } from './room-signal-helpers.js';

const { c, emu } = sessionsForFile();

async function start(key: string) {
  const r = await c.post('/v1/audio/assistant/start', { client_nonce: nonce(), timbre: 'english_tutor', language: 'en' }, key);
  expect(r.body.error_code).toBe(0);
  return r.body.data as { session_id: string; rtc_url: string; room_name: string; identity: string; token: string; bot_identity: string };
}

/** A token of the emulator's API key for `identity` in `room` (what a backend mints for a second participant). */
async function tokenFor(identity: string, room: string, secret = 'secret'): Promise<string> {
  const now = Math.floor(((await c.ctl.clock()).body.now_ms as number) / 1000);
  return new SignJWT({ video: { room, roomJoin: true } })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('devkey')
    .setSubject(identity)
    .setNotBefore(now)
    .setExpirationTime(now + 600)
    .sign(new TextEncoder().encode(secret));
}

/** UDP sockets open in this process (the emulator runs in it): werift's, one per gathered host candidate. */
const udpSockets = () => process.getActiveResourcesInfo().filter((r) => r === 'UDPWrap').length;

/** Resolves once `ok()` holds, polled every 50 ms; fails naming `what`. */
async function eventually(ok: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!(await ok())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Nothing of the account is left: no room, no open socket, no timer. */
async function nothingLeft(key: string): Promise<void> {
  const state = (await c.stateOf(key)) as Awaited<ReturnType<typeof c.stateOf>> & { open_websockets: unknown[] };
  expect(state.resources.rooms).toBeUndefined();
  expect(state.open_websockets).toEqual([]);
  expect(state.pending_timers).toEqual([]);
}

describe('many joins at once', () => {
  it(
    '30 joins with valid tokens and 30 with bad ones, all at once: each gets its answer, nothing hangs, nothing is left after the room ends',
    { timeout: 60_000 },
    async () => {
      const key = 'room-many';
      const d = await start(key);
      const udpBefore = udpSockets();
      const valid = await Promise.all(Array.from({ length: 30 }, (_, i) => tokenFor(`user-${i}`, d.room_name)));
      const bad = await Promise.all(Array.from({ length: 30 }, (_, i) => tokenFor(`intruder-${i}`, d.room_name, 'not-the-secret')));

      const joins = valid.map(async (tok) => {
        const cl = await openSignal(rtcUrl(d.rtc_url, tok));
        await cl.next('join', 20_000);
        await cl.next('offer', 20_000);
        return cl;
      });
      const refusals = bad.map((tok) =>
        openSignal(rtcUrl(d.rtc_url, tok)).then(
          (cl) => (cl.ws.close(), { status: 101, body: '' }),
          (e: { status: number; body: string }) => ({ status: e.status, body: e.body }),
        ),
      );
      const [clients, refused] = await Promise.all([Promise.all(joins), Promise.all(refusals)]);
      for (const r of refused) expect(r).toEqual({ status: 401, body: 'invalid authorization token: go-jose/go-jose: error in cryptographic primitive' });

      const state = (await c.stateOf(key)) as Awaited<ReturnType<typeof c.stateOf>> & { open_websockets: unknown[] };
      expect(state.resources.rooms[0].participants).toHaveLength(31); // the bot and 30 users
      expect(state.open_websockets).toHaveLength(30);
      expect(udpSockets()).toBeGreaterThan(udpBefore);

      await c.post('/v1/audio/assistant/stop', { session_id: d.session_id }, key);
      for (const cl of clients) expect(((await cl.next('leave')).message.value as { reason: number }).reason).toBe(DisconnectReason.ROOM_DELETED);
      await Promise.all(clients.map((cl) => cl.closed));
      await nothingLeft(key);
      // Every peer connection closed its sockets.
      await eventually(() => udpSockets() <= udpBefore, `the UDP sockets to close (${udpSockets()} open, ${udpBefore} before)`);
    },
  );
});

describe('malformed signalling messages', () => {
  const join = async (key: string): Promise<{ d: Awaited<ReturnType<typeof start>>; cl: SignalClient }> => {
    const d = await start(key);
    const cl = await openSignal(rtcUrl(d.rtc_url, d.token));
    await cl.next('join');
    return { d, cl };
  };
  const pong = async (cl: SignalClient, n: bigint) => {
    cl.send(new SignalRequest({ message: { case: 'ping', value: n } }));
    const got = await cl.next('pong');
    expect(cl.messages.filter((m) => m.message.case === 'pong').map((m) => m.message.value)).toContain(n);
    return got;
  };

  it('a text frame that is not a signal request closes the connection with 1007, as a binary one does', async () => {
    const { cl } = await join('room-bad-json');
    cl.ws.send('{"offer": 12');
    expect((await cl.closed).code).toBe(1007);
  });

  it('a frame over the 1 MiB signalling limit closes the connection with 1009', async () => {
    const { cl } = await join('room-oversize');
    cl.ws.send(Buffer.alloc((1 << 20) + 1, 0x0a));
    expect((await cl.closed).code).toBe(1009);
  });

  it('a trickle whose candidate does not decode, or names an mDNS host, is ignored as LiveKit ignores it: the connection goes on', async () => {
    const { cl } = await join('room-bad-trickle');
    await cl.next('offer');
    const trickle = (candidateInit: string) =>
      cl.send(new SignalRequest({ message: { case: 'trickle', value: new TrickleRequest({ candidateInit, target: SignalTarget.SUBSCRIBER }) } }));
    trickle('{not json');
    trickle('{"candidate": 42}');
    trickle(JSON.stringify({ candidate: 'candidate:garbage', sdpMid: '0', sdpMLineIndex: 0 }));
    trickle(
      JSON.stringify({ candidate: 'candidate:1 1 udp 2122260223 0b4c4a2e-7f1e-4b8e-9e1c-3c7d0a1f2b3c.local 54321 typ host', sdpMid: '0', sdpMLineIndex: 0 }),
    );
    await pong(cl, 7n);
    expect(cl.messages.some((m) => m.message.case === 'leave')).toBe(false);
    cl.ws.close();
    await cl.closed;
  });

  it('an offer whose SDP does not parse ends the connection with a leave, and the room takes the next join', async () => {
    const key = 'room-bad-offer';
    const { d, cl } = await join(key);
    cl.send(new SignalRequest({ message: { case: 'offer', value: new SessionDescription({ type: 'offer', sdp: 'v=0\r\nthis is not sdp\r\n', id: 1 }) } }));
    expect(((await cl.next('leave')).message.value as { reason: number }).reason).toBe(DisconnectReason.STATE_MISMATCH);
    await cl.closed;
    const again = await openSignal(rtcUrl(d.rtc_url, d.token));
    await again.next('join');
    await pong(again, 8n);
    again.ws.close();
    await again.closed;
    await c.post('/v1/audio/assistant/stop', { session_id: d.session_id }, key);
    await nothingLeft(key);
    expect((await call(`${emu.platformUrl}/_emulator/health`, { method: 'GET' })).status).toBe(200);
  });
});

describe('a silent client (the ping timeout)', () => {
  // LiveKit's 15 s would slow the suite: these joins are told (and held to) a 2 s timeout, pings every 1 s.
  const PING = { intervalSec: 1, timeoutSec: 2 };
  const withShortPing = async (run: () => Promise<void>) => {
    setPingTiming(emu.emulator, PING);
    try {
      await run();
    } finally {
      setPingTiming(emu.emulator);
    }
  };
  const participants = async (key: string) => ((await c.stateOf(key)).resources.rooms[0].participants as { identity: string }[]).map((p) => p.identity);

  it('a client that sends nothing for the ping timeout, its socket open, is removed: leave CONNECTION_TIMEOUT, socket closed, peer connection released', async () => {
    await withShortPing(async () => {
      const key = 'room-silent';
      const d = await start(key);
      const udpBefore = udpSockets();
      const cl = await openSignal(rtcUrl(d.rtc_url, d.token));
      const joinedAt = Date.now();
      const join = (await cl.next('join')).message.value as { pingInterval: number; pingTimeout: number; otherParticipants: { identity: string }[] };
      expect([join.pingInterval, join.pingTimeout]).toEqual([PING.intervalSec, PING.timeoutSec]);
      await cl.next('offer'); // the server's subscriber peer connection exists
      expect(udpSockets()).toBeGreaterThan(udpBefore);
      expect(await participants(key)).toEqual([join.otherParticipants[0]!.identity, d.identity]);

      // From here the client says nothing (no ping), its socket stays open.
      const leave = (await cl.next('leave', 10_000)).message.value as { reason: number };
      expect(Date.now() - joinedAt).toBeGreaterThanOrEqual(PING.timeoutSec * 1000 - 100);
      expect(leave.reason).toBe(DisconnectReason.CONNECTION_TIMEOUT);
      expect((await cl.closed).code).toBe(1000);

      // The room goes on with the bot alone; the participant's socket, peer connection and timers are gone.
      expect(await participants(key)).toEqual([d.bot_identity]);
      const state = (await c.stateOf(key)) as Awaited<ReturnType<typeof c.stateOf>> & { open_websockets: unknown[] };
      expect(state.open_websockets).toEqual([]);
      await eventually(() => udpSockets() <= udpBefore, `the UDP sockets to close (${udpSockets()} open, ${udpBefore} before)`);
      const entry = (await c.ctl.journal({ path: '/rtc', limit: 1 })).body.entries[0];
      expect(entry.room).toMatchObject({ room_name: d.room_name, identity: d.identity, disconnect_reason: 'CONNECTION_TIMEOUT' });
      // The client said nothing; the server's last words: the leave, then the close.
      expect(entry.ws_frames.filter((f: { dir: string }) => f.dir === 'in')).toEqual([]);
      expect(entry.ws_frames.slice(-2).map((f: { type: string; event: string }) => [f.type, f.event])).toEqual([
        ['binary', 'leave'],
        ['close', '1000'],
      ]);
      expect(entry.note).toContain('ping timeout');

      // The session still runs: the user may join again.
      const again = await openSignal(rtcUrl(d.rtc_url, d.token));
      await again.next('join');
      again.send(new SignalRequest({ message: { case: 'leave', value: new LeaveRequest() } }));
      await again.closed;
      await c.post('/v1/audio/assistant/stop', { session_id: d.session_id }, key);
      await nothingLeft(key);
    });
  });

  it('a client that keeps pinging keeps its place past the timeout; its own leave is CLIENT_INITIATED', async () => {
    await withShortPing(async () => {
      const key = 'room-pinging';
      const d = await start(key);
      const cl = await openSignal(rtcUrl(d.rtc_url, d.token));
      await cl.next('join');
      // Pings every 500 ms for twice the timeout, both of LiveKit's forms.
      for (let i = 1; i <= 8; i++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        cl.send(
          i % 2
            ? new SignalRequest({ message: { case: 'ping', value: BigInt(i) } })
            : new SignalRequest({ message: { case: 'pingReq', value: new Ping({ timestamp: BigInt(i) }) } }),
        );
      }
      await cl.next('pongResp');
      expect(cl.messages.some((m) => m.message.case === 'leave')).toBe(false);
      expect(await participants(key)).toEqual([d.bot_identity, d.identity]);
      cl.send(new SignalRequest({ message: { case: 'leave', value: new LeaveRequest() } }));
      await cl.closed;
      const entry = (await c.ctl.journal({ path: '/rtc', limit: 1 })).body.entries[0];
      expect(entry.room.disconnect_reason).toBe('CLIENT_INITIATED');
      await c.post('/v1/audio/assistant/stop', { session_id: d.session_id }, key);
      await nothingLeft(key);
    });
  });
});
