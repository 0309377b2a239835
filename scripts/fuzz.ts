import fc from 'fast-check';
import { createServer } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Agent, setGlobalDispatcher } from 'undici';
import { startEmulator } from '../src/index.js';
import { ENDPOINTS, nameOf, type Endpoint } from '../test/properties/endpoints.js';
import { caseOf } from '../test/properties/inputs.js';
import { check, describeCase, KNOWN_DEFECTS } from '../test/properties/runner.js';
import { runWsCase, speechWsCase, wsCase } from '../test/properties/ws.js';
import { BOUND_FAMILIES, FAMILIES, type Attack, type Target } from './fuzz-families.js';
import { WIRE_FAMILIES } from './fuzz-wire.js';

/**
 * `npm run fuzz`: the property tests' generators at scale. Every HTTP endpoint of both services and
 * the control plane gets --runs generated requests (default 10,000), every WebSocket --ws-runs
 * sequences; prints a table of inputs, statuses and failures. Known defects are fuzzed too unless
 * --skip-known is given. Then the input families of scripts/fuzz-families.ts and fuzz-wire.ts (deep
 * and huge JSON, odd content types, multipart edges, audio near the decode caps, archive bombs, URLs at
 * private addresses, clock and control-plane bodies, raw HTTP framing, socket sequences) get
 * --family-runs attacks each (default 100). Same seed, same inputs. Loopback only: the emulator is
 * started in this process, with a body timeout of twice --timeout so stalled bodies are answered.
 *
 *   npm run fuzz -- [--runs 10000] [--ws-runs 10000] [--family-runs 100] [--seed 1] [--timeout 3000] [--concurrency 8] [--only text] [--skip-known]
 */
function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}
const RUNS = Number(flag('runs', '10000'));
const WS_RUNS = Number(flag('ws-runs', String(RUNS)));
const SEED = Number(flag('seed', '1'));
const TIMEOUT_MS = Number(flag('timeout', '3000'));
const CONCURRENCY = Number(flag('concurrency', '8'));
/** The listener's body timeout in the fuzz: long enough for a loaded machine to read big bodies, short enough for stalled ones. */
const BODY_TIMEOUT_MS = 2 * TIMEOUT_MS;
const FAMILY_RUNS = Number(flag('family-runs', '100'));
const ONLY = flag('only', '');
const SKIP_KNOWN = process.argv.includes('--skip-known');

interface Row {
  endpoint: string;
  inputs: number;
  statuses: Map<string, number>;
  failures: number;
  example: string;
}

async function pool<T>(items: T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
}

// Idle connections are reused for 10 s at most, far inside the listeners' 72 s keep-alive: on a loaded
// machine a reuse at the edge races the server's close and reads as a reset (HTTP keep-alive, not the emulator).
setGlobalDispatcher(new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 10_000 }));
const emu = await startEmulator({
  logLevel: (process.env.FUZZ_LOG ?? 'silent') as 'silent',
  seed: 'fuzz',
  host: '127.0.0.1',
  bodyTimeoutMs: BODY_TIMEOUT_MS,
  socketStallMs: 2000,
});
// A listener no input may make the emulator reach (URLs at loopback and private addresses point here).
let sentinelConnections = 0;
const sentinel = createServer((s) => (sentinelConnections++, s.destroy()));
await new Promise<void>((r) => sentinel.listen(0, '127.0.0.1', r));
const target: Target = {
  speechUrl: emu.speechUrl,
  platformUrl: emu.platformUrl,
  timeoutMs: TIMEOUT_MS,
  bodyTimeoutMs: BODY_TIMEOUT_MS,
  sentinel: { url: `http://127.0.0.1:${(sentinel.address() as { port: number }).port}`, connections: () => sentinelConnections },
};
const base = (e: Endpoint) => (e.service === 'speech' ? emu.speechUrl : emu.platformUrl);
const health = async () => (await fetch(`${emu.platformUrl}/_emulator/health`, { signal: AbortSignal.timeout(TIMEOUT_MS) })).status === 200;
const rows: Row[] = [];
const started = performance.now();

for (const e of ENDPOINTS.filter((x) => nameOf(x).includes(ONLY))) {
  const row: Row = { endpoint: nameOf(e), inputs: 0, statuses: new Map(), failures: 0, example: '' };
  const count = (status: string, problem: string | null, what: () => string) => {
    row.inputs += 1;
    row.statuses.set(status, (row.statuses.get(status) ?? 0) + 1);
    if (problem) {
      row.failures += 1;
      row.example ||= `${problem} <- ${what()}`.slice(0, 300);
    }
  };
  if (e.websocket) {
    await pool(fc.sample(e.service === 'speech' ? speechWsCase : wsCase, { numRuns: WS_RUNS, seed: SEED }), async (c) => {
      const out = await runWsCase(base(e), e.url, c, TIMEOUT_MS, 150, e.service);
      count(out.end, out.problem, () => JSON.stringify(c).slice(0, 200));
    });
  }
  const exclude = SKIP_KNOWN ? (KNOWN_DEFECTS[nameOf(e)] ?? []) : [];
  await pool(fc.sample(caseOf(e, exclude), { numRuns: RUNS, seed: SEED }), async (c) => {
    const r = await check(base(e), e, c, TIMEOUT_MS);
    count(String(r.status), r.problem, () => describeCase(c));
    // Control calls may install faults or freeze the clock: undo them so they disturb nothing else.
    if (e.url.startsWith('/_emulator/')) {
      await fetch(`${emu.platformUrl}/_emulator/faults`, { method: 'DELETE' }).catch(() => undefined);
      await fetch(`${emu.platformUrl}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"freeze":false}' }).catch(
        () => undefined,
      );
    }
  });
  if (!(await health().catch(() => false))) {
    row.failures += 1;
    row.example ||= 'health check failed after this endpoint';
  }
  rows.push(row);
  const statuses = [...row.statuses]
    .sort()
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
  console.log(`${row.endpoint.padEnd(58)} ${String(row.inputs).padStart(6)}  ${String(row.failures).padStart(5)}  ${statuses}`);
}

const family = async (name: string, arb: fc.Arbitrary<Attack>) => {
  const row: Row = { endpoint: `family: ${name}`, inputs: 0, statuses: new Map(), failures: 0, example: '' };
  // The emulator runs in this process: the longest event-loop stall of the family is the server's.
  const stalls = monitorEventLoopDelay({ resolution: 10 });
  stalls.enable();
  await pool(fc.sample(arb, { numRuns: FAMILY_RUNS, seed: SEED }), async (attack) => {
    const out = await attack.run(target).catch((err: Error) => ({ status: 'threw', problem: `the attack threw: ${err.message}` }));
    row.inputs += 1;
    if (process.env.FUZZ_VERBOSE === '2') console.log(`    ${out.status} <- ${attack.what}`.slice(0, 300));
    row.statuses.set(out.status, (row.statuses.get(out.status) ?? 0) + 1);
    if (out.problem) {
      row.failures += 1;
      row.example ||= `${out.problem} <- ${attack.what}`.slice(0, 400);
      if (process.env.FUZZ_VERBOSE) console.log(`  ${out.problem} <- ${attack.what}`.slice(0, 600));
    }
  });
  stalls.disable();
  row.statuses.set(`longest stall ${Math.round(stalls.max / 1e6)} ms`, 1);
  // Clock moves, fixtures and accounts the family made must not disturb the next one.
  await fetch(`${emu.platformUrl}/_emulator/reset?fixtures=true`, { method: 'POST' }).catch(() => undefined);
  await fetch(`${emu.platformUrl}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"freeze":false}' }).catch(
    () => undefined,
  );
  if (!(await health().catch(() => false))) {
    row.failures += 1;
    row.example ||= 'health check failed after this family';
  }
  rows.push(row);
  console.log(
    `${row.endpoint.padEnd(58)} ${String(row.inputs).padStart(6)}  ${String(row.failures).padStart(5)}  ${[...row.statuses]
      .sort()
      .map(([s, n]) => `${s}×${n}`)
      .join(' ')}`,
  );
};
for (const [name, arb] of Object.entries({ ...FAMILIES, ...WIRE_FAMILIES, ...BOUND_FAMILIES })) if (`family: ${name}`.includes(ONLY)) await family(name, arb);

console.log('\n| endpoint | inputs | statuses | failures |\n|---|---:|---|---:|');
for (const r of rows)
  console.log(
    `| ${r.endpoint} | ${r.inputs} | ${[...r.statuses]
      .sort()
      .map(([s, n]) => `${s}×${n}`)
      .join(' ')} | ${r.failures} |`,
  );
const failed = rows.filter((r) => r.failures > 0);
console.log(
  `\n${rows.reduce((n, r) => n + r.inputs, 0)} inputs over ${rows.length} endpoints in ${Math.round((performance.now() - started) / 1000)} s (seed ${SEED}); ${failed.length} endpoints with failures`,
);
for (const r of failed) console.log(`- ${r.endpoint}: ${r.failures} failures, e.g. ${r.example}`);
sentinel.close();
await emu.close();
process.exit(failed.length ? 1 : 0);
