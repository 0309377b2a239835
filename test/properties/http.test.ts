import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { ENDPOINTS, entryOf, nameOf } from './endpoints.js';
import { endpointProperty } from './runner.js';

/**
 * Property-based tests of every HTTP endpoint of both services and the control plane: generated bad
 * bodies, queries, headers and multipart shapes always get an answer, in bounded time, in the
 * endpoint's own shape, with a status its spec lists; the emulator stays healthy after each endpoint.
 * PROPERTY_RUNS sets the cases per endpoint (small here; `npm run fuzz` runs thousands).
 */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 80);
const SEED = Number(process.env.PROPERTY_SEED ?? 1414);
const TIMEOUT_MS = Number(process.env.PROPERTY_TIMEOUT_MS ?? 10_000);

const { emu, ctl } = emulatorForFile();
const baseOf = (service: 'speech' | 'platform') => (service === 'speech' ? emu.speechUrl : emu.platformUrl);

describe('the endpoint table', () => {
  it('has an entry for every registered route, and every entry is registered', () => {
    const routes = emu.emulator.routes;
    expect(routes.filter((r) => !entryOf(r)).map((r) => `${r.service} ${r.method} ${r.url}`)).toEqual([]);
    const registered = new Set(routes.map((r) => `${r.service} ${r.method} ${r.url}`));
    expect(ENDPOINTS.filter((e) => !registered.has(nameOf(e))).map(nameOf)).toEqual([]);
    expect(routes.filter((r) => r.websocket).length).toBeGreaterThan(0);
  });
});

describe('every endpoint answers generated requests in its shape', () => {
  for (const e of ENDPOINTS) {
    it(`${nameOf(e)}`, async () => {
      // Rules installed by generated control calls must not disturb the cases that follow.
      const after =
        e.url.startsWith('/_emulator/faults') || e.url === '/_emulator/clock'
          ? async () => void (await ctl.call('DELETE', '/faults'), await ctl.setClock({ freeze: false }))
          : e.url.startsWith('/_emulator/fixtures')
            ? async () => void (await ctl.call('POST', '/reset?fixtures=true'))
            : e.url === '/_emulator/tapes/replay'
              ? async () => void (await ctl.call('DELETE', '/tapes/replay'))
              : undefined;
      await fc.assert(endpointProperty(baseOf(e.service), e, TIMEOUT_MS, after), { seed: SEED, numRuns: RUNS, endOnFailure: true });
      expect((await ctl.health()).status).toBe(200);
    }, 120_000);
  }
});
