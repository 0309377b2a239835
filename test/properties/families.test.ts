import fc from 'fast-check';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAMILIES } from '../../scripts/fuzz-families.js';
import type { Target } from '../../scripts/fuzz-oracle.js';
import { WIRE_FAMILIES } from '../../scripts/fuzz-wire.js';
import type { RunningEmulator } from '../../src/index.js';
import { control, startTestEmulator } from '../helpers/emulator.js';

/**
 * The input families of `npm run fuzz` (scripts/fuzz-families.ts, fuzz-wire.ts) with a small budget:
 * deep and huge JSON, odd content types and encodings, multipart edges, audio near the decode caps,
 * archive bombs and escaping names, URLs at loopback and private addresses (a listener counts any
 * connection), clock and control-plane bodies, raw HTTP framing and socket sequences. Each attack must
 * be answered in time, in its endpoint's shape, without an internal error; the emulator stays healthy.
 * FAMILY_RUNS sets the attacks per family (`npm run fuzz` runs hundreds).
 */
const RUNS = Number(process.env.FAMILY_RUNS ?? 6);
const SEED = Number(process.env.PROPERTY_SEED ?? 1414);

let emu: RunningEmulator;
let connections = 0;
const sentinel = createServer((s) => (connections++, s.destroy()));
let target: Target;
beforeAll(async () => {
  // A short body timeout: a stalled body is answered (408) within the attack's time.
  emu = await startTestEmulator({ bodyTimeoutMs: 3000 });
  await new Promise<void>((r) => sentinel.listen(0, '127.0.0.1', r));
  target = {
    speechUrl: emu.speechUrl,
    platformUrl: emu.platformUrl,
    timeoutMs: 10_000,
    bodyTimeoutMs: 3000,
    sentinel: { url: `http://127.0.0.1:${(sentinel.address() as { port: number }).port}`, connections: () => connections },
  };
});
afterAll(async () => {
  sentinel.close();
  await emu.close();
});

describe('the fuzz families, a few attacks each', () => {
  for (const [name, family] of Object.entries({ ...FAMILIES, ...WIRE_FAMILIES })) {
    it(
      name,
      async () => {
        const problems: string[] = [];
        for (const attack of fc.sample(family, { numRuns: RUNS, seed: SEED })) {
          const out = await attack.run(target);
          if (out.problem) problems.push(`${out.problem} <- ${attack.what}`);
        }
        const ctl = control(emu.platformUrl);
        await ctl.call('POST', '/reset?fixtures=true');
        await ctl.setClock({ freeze: false });
        expect(problems).toEqual([]);
        expect((await ctl.health()).status).toBe(200);
      },
      300_000,
    );
  }
});
