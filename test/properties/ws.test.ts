import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { ENDPOINTS, nameOf } from './endpoints.js';
import { runWsCase, speechWsCase, wsCase } from './ws.js';

/**
 * Property-based tests of every WebSocket (conversation streams, recognition stream, speech synthesis): generated
 * message sequences always end in bounded time with JSON events and a listed close code, and leave no
 * socket open behind them. PROPERTY_WS_RUNS sets the sequences per socket.
 */
const RUNS = Number(process.env.PROPERTY_WS_RUNS ?? 40);
const SEED = Number(process.env.PROPERTY_SEED ?? 1414);
const TIMEOUT_MS = Number(process.env.PROPERTY_TIMEOUT_MS ?? 10_000);

const { emu, ctl } = emulatorForFile();
const sockets = ENDPOINTS.filter((e) => e.websocket);

async function openSockets(): Promise<number> {
  return (await ctl.state()).body.totals.open_websockets as number;
}

describe('every WebSocket answers generated message sequences', () => {
  it('the table lists every WebSocket route the services registered', () => {
    const registered = emu.emulator.routes.filter((r) => r.websocket && r.method === 'GET').map((r) => `${r.service} GET ${r.url}`);
    expect(sockets.map(nameOf).sort()).toEqual(registered.sort());
  });

  for (const e of sockets) {
    it(
      nameOf(e),
      async () => {
        await fc.assert(
          fc.asyncProperty(e.service === 'speech' ? speechWsCase : wsCase, async (c) => {
            const out = await runWsCase(
              e.service === 'speech' ? emu.speechUrl : emu.platformUrl,
              e.url,
              c,
              TIMEOUT_MS,
              150,
              e.service,
              e.shape === 'raw' ? 'raw' : 'envelope',
            );
            if (out.problem) throw new Error(`${nameOf(e)}: ${out.problem} (${out.end})\n  steps: ${JSON.stringify(c).slice(0, 400)}`);
          }),
          { seed: SEED, numRuns: RUNS, endOnFailure: true },
        );
        expect((await ctl.health()).status).toBe(200);
        // The server has let go of every socket (closing handshakes finish within a moment).
        for (let i = 0; i < 50 && (await openSockets()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
        expect(await openSockets()).toBe(0);
      },
      120_000,
    );
  }
});
