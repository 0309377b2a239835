import { describe, expect, it } from 'vitest';
import { call, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';

describe('probes: health, livez, readyz', () => {
  for (const token of [undefined, 'probe-token']) {
    describe(`control token ${token ? 'on' : 'off'}`, () => {
      const { emu } = emulatorForFile({ start: token ? { controlToken: token } : {} });
      it(`answer without the control token (token ${token ? 'on' : 'off'}) on every listener, revealing only status and version`, async () => {
        for (const base of [emu.speechUrl, emu.speechBackupUrl, emu.platformUrl]) {
          const health = await call(`${base}/_emulator/health`);
          expect(health.status).toBe(200);
          expect(health.body).toMatchObject({ status: 'ok', version: expect.any(String), ready: true });
          // the service URLs only to a caller allowed on the control plane
          if (token) {
            expect(health.body.services).toBeUndefined();
            const full = await call(`${base}/_emulator/health`, { headers: { authorization: `Bearer ${token}` } });
            expect(full.body.services.platform).toBe(emu.platformUrl);
          } else expect(health.body.services.platform).toBe(emu.platformUrl);
          expect((await call(`${base}/_emulator/livez`)).body).toEqual({ status: 'ok', version: health.body.version });
          const ready = await call(`${base}/_emulator/readyz`);
          expect(ready.status).toBe(200);
          expect(ready.body).toEqual({ status: 'ready', version: health.body.version });
          // the rest of the plane still needs the token
          expect((await call(`${base}/_emulator/state`)).status).toBe(token ? 401 : 200);
        }
      });
    });
  }

  // Its own emulator: the test moves it through its phases and closes it.
  it('readyz is 503 while the emulator is starting or closing', async () => {
    const emu = await startTestEmulator();
    try {
      emu.emulator.phase = 'starting';
      const starting = await call(`${emu.platformUrl}/_emulator/readyz`);
      expect(starting.status).toBe(503);
      expect(starting.body.status).toBe('starting');
      expect((await call(`${emu.platformUrl}/_emulator/livez`)).status).toBe(200);
      expect((await call(`${emu.platformUrl}/_emulator/health`)).body.ready).toBe(false);
      emu.emulator.phase = 'ready';
      // a request held in flight keeps a connection while close() begins: readiness drops at once
      const held = call(`${emu.speechUrl}/v1/held`, { headers: { 'x-emulator-fault': 'delay_ms=300' } });
      while (emu.emulator.journal.size() < 1) await new Promise((r) => setTimeout(r, 5));
      const closed = emu.close();
      expect(emu.emulator.phase).toBe('closing');
      await held;
      await closed;
    } finally {
      await emu.close();
    }
  });
});
