import { TokenVerifier } from 'livekit-server-sdk';
import { describe, expect, it } from 'vitest';
import { call, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';

// livekit-server-sdk's own verifier checks nbf/exp against the wall clock: the emulator clock stays real here.
const { emu } = emulatorForFile();

const post = (base: string, path: string, json: unknown, headers: Record<string, string>) =>
  call(`${base}${path}`, { method: 'POST', json, headers: { 'x-api-key': 'livekit-peer', ...headers } });

describe('LiveKit TokenVerifier accepts the room tokens', () => {
  it('call token: identity (sub) and room grant', async () => {
    const d = (await post(emu.platformUrl, '/v1/audio/assistant/start', { client_nonce: '5f0c6a57-2b51-4d51-9c57-0b1b1a3c1d01' }, {})).body.data;
    const claims = await new TokenVerifier('devkey', 'secret').verify(d.token);
    expect(claims.sub).toBe(d.identity);
    expect(claims.video).toMatchObject({ room: d.room_name, roomJoin: true, canPublish: true, canSubscribe: true });
    expect(claims.exp).toBe(d.expire_at);
    await expect(new TokenVerifier('devkey', 'another-secret').verify(d.token)).rejects.toThrow();
    await expect(new TokenVerifier('otherkey', 'secret').verify(d.token)).rejects.toThrow();
  });

  it('agent userToken: identity is the userIdentifier, room is roomName', async () => {
    const r = await post(
      emu.platformUrl,
      '/api/v1/agents/openapi/sessions/create',
      { agentId: 'agent_demo', userIdentifier: 'eu:peer' },
      { 'idempotency-key': 'peer-1' },
    );
    const item = r.body.data.item;
    const claims = await new TokenVerifier('devkey', 'secret').verify(item.userToken);
    expect(claims).toMatchObject({ sub: 'eu:peer', exp: item.expireAt, video: { room: item.roomName, roomJoin: true } });
  });

  it('signs with the configured key and secret', async () => {
    const other = await startTestEmulator({ livekitApiKey: 'APIkey123', livekitApiSecret: 'a-much-longer-secret-for-tests', rtcUrl: 'wss://rtc.example.test' });
    try {
      const d = (await post(other.platformUrl, '/v1/audio/assistant/start', { client_nonce: '5f0c6a57-2b51-4d51-9c57-0b1b1a3c1d02' }, {})).body.data;
      expect(d.rtc_url).toBe('wss://rtc.example.test');
      const claims = await new TokenVerifier('APIkey123', 'a-much-longer-secret-for-tests').verify(d.token);
      expect(claims.sub).toBe(d.identity);
      await expect(new TokenVerifier('devkey', 'secret').verify(d.token)).rejects.toThrow();
    } finally {
      await other.close();
    }
  });
});
