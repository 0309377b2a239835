import fc from 'fast-check';
import { startEmulator } from '../src/index.js';
import { ENDPOINTS, nameOf, type Endpoint } from '../test/properties/endpoints.js';
import { caseOf } from '../test/properties/inputs.js';
import { check, describeCase, KNOWN_DEFECTS } from '../test/properties/runner.js';
import { runWsCase, speechWsCase, wsCase } from '../test/properties/ws.js';

/**
 * `npm run fuzz`: the property tests' generators at scale. Every HTTP endpoint of both services and
 * the control plane gets --runs generated requests (default 10,000), every WebSocket --ws-runs
 * sequences; prints a table of inputs, statuses and failures. Known defects are fuzzed too unless
 * --skip-known is given. Loopback only: the emulator is started in this process.
 *
 *   npm run fuzz -- [--runs 10000] [--ws-runs 10000] [--seed 1] [--timeout 3000] [--concurrency 8] [--only text] [--skip-known]
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

const emu = await startEmulator({ logLevel: 'silent', seed: 'fuzz', host: '127.0.0.1' });
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
await emu.close();
process.exit(failed.length ? 1 : 0);
