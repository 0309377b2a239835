/**
 * The room server's signalling rules, with a client that speaks LiveKit's protocol on the socket (no
 * media): the token checks and LiveKit's refusals (upgrade and /rtc/validate), /rtc/v1 absent, the
 * join answer, a second join of the same identity, a malformed message, a track without the publish
 * grant, join after the session ended, a socket dropped without a leave, the journal entry and the state view.
 */
import { AddTrackRequest, DisconnectReason, RequestResponse_Reason, SignalRequest, TrackType } from '@livekit/protocol';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/emulator.js';
import { nonce, sessionsForFile } from './calls/calls-helpers.js';
import { openSignal, rtcUrl } from './room-signal-helpers.js';

const { c, emu } = sessionsForFile();

async function start(key: string) {
  const r = await c.post('/v1/audio/assistant/start', { client_nonce: nonce(), timbre: 'english_tutor', language: 'en' }, key);
  expect(r.body.error_code).toBe(0);
  return r.body.data as { session_id: string; rtc_url: string; room_name: string; identity: string; token: string; bot_identity: string; expire_at: number };
}

async function token(claims: Record<string, unknown>, secret = 'secret'): Promise<string> {
  const now = Math.floor(((await c.ctl.clock()).body.now_ms as number) / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer((claims.iss as string) ?? 'devkey')
    .setNotBefore(now)
    .setExpirationTime(now + 600)
    .sign(new TextEncoder().encode(secret));
}

async function refused(url: string): Promise<{ status: number; body: string }> {
  const err = (await openSignal(url).then(
    (cl) => (cl.ws.close(), null),
    (e: unknown) => e,
  )) as { status: number; body: string } | null;
  expect(err, 'the upgrade should be refused').not.toBeNull();
  return { status: err!.status, body: err!.body };
}

const validate = async (base: string, tok: string) => {
  const r = await call(`${base}/rtc/validate?access_token=${encodeURIComponent(tok)}`, { method: 'GET' });
  return { status: r.status, body: r.text };
};

describe('tokens (LiveKit refusals before the upgrade, and /rtc/validate)', () => {
  it('refuses a wrong signature, another API key, a missing roomJoin, an unknown room, no token; validate says the same', async () => {
    const d = await start('room-tokens');
    const room = d.room_name;
    const cases: [string, string, number, string][] = [
      [
        'wrong signature',
        d.token.slice(0, -3) + (d.token.endsWith('AAA') ? 'BBB' : 'AAA'),
        401,
        'invalid authorization token: go-jose/go-jose: error in cryptographic primitive',
      ],
      ['other API key', await token({ iss: 'otherkey', sub: 'u', video: { room, roomJoin: true } }), 401, 'invalid API key'],
      ['no roomJoin', await token({ sub: 'u', video: { room } }), 401, 'permissions denied'],
      ['another room', await token({ sub: 'u', video: { room: 'room_nope', roomJoin: true } }), 404, 'requested room does not exist'],
      ['not a JWT', 'abc', 401, 'invalid authorization token'],
    ];
    for (const [what, tok, status, text] of cases) {
      expect(await refused(rtcUrl(d.rtc_url, tok)), what).toEqual({ status, body: text });
      expect(await validate(emu.platformUrl, tok), what).toEqual({ status, body: text });
    }
    expect(await refused(`${d.rtc_url}/rtc`)).toEqual({ status: 401, body: 'no permissions to access the room' });
    expect(await validate(emu.platformUrl, d.token)).toEqual({ status: 200, body: 'success' });
  });

  it('expiry is read on the emulator clock, with LiveKit one-minute leeway', async () => {
    const d = await start('room-expiry');
    const tok = await token({ sub: 'u', video: { room: d.room_name, roomJoin: true } }); // exp = now + 600 s
    await c.ctl.advance(600_000 + 59_000);
    // Within the leeway the token passes; the room is gone by now (the call timed out without heartbeats).
    expect(await validate(emu.platformUrl, tok)).toEqual({ status: 404, body: 'requested room does not exist' });
    await c.ctl.advance(2_000);
    expect(await validate(emu.platformUrl, tok)).toEqual({
      status: 401,
      body: 'invalid authorization token: go-jose/go-jose/jwt: validation failed, token is expired (exp)',
    });
  });

  it('/rtc/v1 answers 404 (the single peer-connection protocol is not served; clients use /rtc)', async () => {
    const d = await start('room-v1');
    expect((await refused(`${d.rtc_url}/rtc/v1?access_token=${d.token}`)).status).toBe(404);
    expect((await call(`${emu.platformUrl}/rtc/v1/validate?access_token=${d.token}`, { method: 'GET' })).status).toBe(404);
  });
});

describe('joins', () => {
  it('answers the join: the room, the user, the bot with its audio track and lk.agent.state; journal and state view', async () => {
    const key = 'room-join';
    const d = await start(key);
    const cl = await openSignal(rtcUrl(d.rtc_url, d.token));
    const join = (await cl.next('join')).message.value as any;
    expect(join.room.name).toBe(d.room_name);
    expect(join.participant.identity).toBe(d.identity);
    expect(join.subscriberPrimary).toBe(true);
    const bot = join.otherParticipants[0];
    expect(bot.identity).toBe(d.bot_identity);
    expect(bot.attributes['lk.agent.state']).toBe('listening');
    expect(bot.tracks.map((t: any) => [t.type, t.mimeType])).toEqual([[TrackType.AUDIO, 'audio/opus']]);
    const offer = (await cl.next('offer')).message.value as any;
    expect(offer.sdp).toContain(`a=msid:${bot.sid}|${bot.tracks[0].sid} ${bot.tracks[0].sid}`);
    expect(offer.sdp).toContain('m=application');

    const state = await c.stateOf(key);
    expect(state.resources.rooms[0]).toMatchObject({ room_name: d.room_name, session_id: d.session_id });
    expect(state.resources.rooms[0].participants.map((p: any) => p.identity)).toEqual([d.bot_identity, d.identity]);

    // The socket closes without a leave: LiveKit's reason for a lost signal connection.
    cl.ws.close();
    await cl.closed;
    const entry = (await c.ctl.journal({ path: '/rtc', limit: 1 })).body.entries[0];
    expect(entry.room).toMatchObject({ room_name: d.room_name, identity: d.identity, disconnect_reason: 'SIGNAL_CLOSE' });
    expect(entry.ws_frames.map((f: any) => f.event).slice(0, 2)).toEqual(['join', 'offer']);
    expect(entry.ws_frames[0].content.join.participant.identity).toBe(d.identity);
    // The room token is a credential: the journal never shows it.
    expect(JSON.stringify(entry)).not.toContain(d.token);
    expect(entry.request.query.access_token).not.toBe(d.token);
    const verify = await call(`${emu.platformUrl}/_emulator/verify`, { json: { request: { path: '/rtc', status: 101 } } });
    expect(verify.body.ok, verify.text).toBe(true);
  });

  it('a second join of the same identity: the first gets DUPLICATE_IDENTITY and is closed', async () => {
    const d = await start('room-dup');
    const first = await openSignal(rtcUrl(d.rtc_url, d.token));
    await first.next('join');
    const second = await openSignal(rtcUrl(d.rtc_url, d.token));
    await second.next('join');
    const leave = (await first.next('leave')).message.value as any;
    expect(leave.reason).toBe(DisconnectReason.DUPLICATE_IDENTITY);
    await first.closed;
    second.ws.close();
  });

  it('stop ends the room: leave ROOM_DELETED, then a join is refused (the room no longer exists)', async () => {
    const key = 'room-stop';
    const d = await start(key);
    const cl = await openSignal(rtcUrl(d.rtc_url, d.token));
    await cl.next('join');
    await c.post('/v1/audio/assistant/stop', { session_id: d.session_id }, key);
    expect(((await cl.next('leave')).message.value as any).reason).toBe(DisconnectReason.ROOM_DELETED);
    await cl.closed;
    expect(await refused(rtcUrl(d.rtc_url, d.token))).toEqual({ status: 404, body: 'requested room does not exist' });
    const state = await c.stateOf(key);
    expect(state.resources.rooms).toBeUndefined();
    expect(state.pending_timers).toEqual([]);
  });

  it('a track without the publish grant gets NOT_ALLOWED; a malformed message closes the connection', async () => {
    const d = await start('room-grant');
    const tok = await token({ sub: 'listener', video: { room: d.room_name, roomJoin: true, canPublish: false } });
    const cl = await openSignal(rtcUrl(d.rtc_url, tok));
    await cl.next('join');
    cl.send(new SignalRequest({ message: { case: 'addTrack', value: new AddTrackRequest({ cid: 'mic', name: 'mic', type: TrackType.AUDIO }) } }));
    const answer = (await cl.next('requestResponse')).message.value as any;
    expect(answer.reason).toBe(RequestResponse_Reason.NOT_ALLOWED);
    cl.ws.send(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    expect((await cl.closed).code).toBe(1007);
  });

  it('a socket dropped without a leave (no close frame) is recorded SIGNAL_CLOSE and the participant goes at once', async () => {
    const key = 'room-drop';
    const d = await start(key);
    const cl = await openSignal(rtcUrl(d.rtc_url, d.token));
    await cl.next('join');
    await cl.next('offer');
    cl.ws.terminate();
    await cl.closed;
    let entry: any;
    for (let i = 0; i < 100 && !entry?.room?.disconnect_reason; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      entry = (await c.ctl.journal({ path: '/rtc', limit: 1 })).body.entries[0];
    }
    expect(entry.room).toMatchObject({ identity: d.identity, disconnect_reason: 'SIGNAL_CLOSE' });
    const state = await c.stateOf(key);
    expect(state.resources.rooms[0].participants.map((p: any) => p.identity)).toEqual([d.bot_identity]);
    await c.post('/v1/audio/assistant/stop', { session_id: d.session_id }, key);
  });

  it('ping / pong', async () => {
    const d = await start('room-ping');
    const cl = await openSignal(rtcUrl(d.rtc_url, d.token));
    await cl.next('join');
    cl.send(new SignalRequest({ message: { case: 'ping', value: 1234n } }));
    expect((await cl.next('pong')).message.value).toBe(1234n);
    cl.ws.close();
  });
});
