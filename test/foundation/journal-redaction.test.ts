import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile({ resetEach: true });
const SECRET = 'sup3r-s3cret-credential-0123456789';

describe('the journal redacts every credential-looking header', () => {
  it('Proxy-Authorization, X-Auth-Token, cookies and any header named token, secret, key, auth or cookie', async () => {
    const headers: Record<string, string> = {
      'x-api-key': SECRET,
      'proxy-authorization': `Basic ${SECRET}`,
      'x-auth-token': SECRET,
      'x-custom-secret': SECRET,
      'x-my-apikey': SECRET,
      'x-upstream-authz': SECRET,
      'x-session-cookie-ish': SECRET,
      'x-refresh-token': `${SECRET}, ${SECRET}2`,
      'x-plain': 'visible-value',
    };
    await call(`${emu.platformUrl}/v1/voice/list`, { headers });
    const entry = (await ctl.journal()).body.entries[0];
    const shown = JSON.stringify(entry);
    expect(shown).not.toContain(SECRET);
    expect(entry.request.headers['proxy-authorization']).toMatch(/^Basic sup3…[0-9a-f]{6}$/);
    expect(entry.request.headers['x-refresh-token']).toMatch(/^sup3…[0-9a-f]{6}, sup3…[0-9a-f]{6}$/);
    expect(entry.request.headers['x-plain']).toBe('visible-value');
  });

  it('Sec-WebSocket-Protocol (where browser clients carry a key) is redacted on a socket', async () => {
    const ws = new WebSocket(`${emu.platformUrl.replace(/^http/, 'ws')}/v1/speech-to-text/stream`, [`key.${SECRET}`], {
      headers: { 'x-api-key': SECRET },
    });
    ws.on('error', () => undefined);
    await new Promise((r) => {
      ws.on('open', r);
      ws.on('unexpected-response', r);
      ws.on('close', r);
    });
    ws.close();
    await new Promise((r) => setTimeout(r, 100));
    const entry = (await ctl.journal()).body.entries.find((e: { path: string }) => e.path.startsWith('/v1/speech-to-text/stream'));
    expect(entry).toBeDefined();
    expect(JSON.stringify(entry)).not.toContain(SECRET);
    expect(entry.request.headers['sec-websocket-protocol']).toMatch(/^key\.…[0-9a-f]{6}$|…[0-9a-f]{6}$/);
  });
});
