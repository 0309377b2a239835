/**
 * Every rule of .dependency-cruiser.cjs (`npm run lint:deps`) proven by a planted import that breaks it: a small tree
 * of files under a temporary `src/`, cruised with the project's own rules. Each planted import must be refused by the
 * rule named beside it, and each allowed one must pass, so a rule that stopped matching (a typo in a path, a room
 * renamed) fails here instead of passing unseen.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const config = createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as {
  forbidden: IForbiddenRuleType[];
};

interface Plant {
  from: string;
  to: string;
  /** The rule that must refuse it; absent for an import the rules allow. */
  rule?: string;
  /** `import type` (the circle of emulator.ts was type-only: those count too). */
  typeOnly?: boolean;
}

/** One planted import per rule, and allowed neighbours that must pass. Paths are below src/. */
const PLANTS: Plant[] = [
  // The rooms of core/, lowest first: faults, state, journal, http, stream, socket; emulator.ts on top.
  { from: 'core/faults/p1.ts', to: 'core/state/ids.ts', typeOnly: true, rule: 'core-faults-only-below' },
  { from: 'core/faults/p2.ts', to: 'core/http/validation.ts' },
  { from: 'core/state/p1.ts', to: 'core/journal/journal.ts', rule: 'core-state-only-below' },
  { from: 'core/state/p2.ts', to: 'core/stream/shaping.ts', typeOnly: true, rule: 'core-state-only-below' },
  { from: 'core/state/p3.ts', to: 'core/emulator.ts', typeOnly: true, rule: 'core-state-only-below' },
  { from: 'core/state/p4.ts', to: 'core/faults/faults.ts' },
  { from: 'core/state/p5.ts', to: 'core/http/memory.ts' },
  { from: 'core/journal/p1.ts', to: 'core/http/request-context.ts', typeOnly: true, rule: 'core-journal-only-below' },
  { from: 'core/journal/p2.ts', to: 'core/state/accounts.ts' },
  { from: 'core/http/p1.ts', to: 'core/stream/frames.ts', typeOnly: true, rule: 'core-http-only-below' },
  { from: 'core/http/p2.ts', to: 'core/emulator.ts', typeOnly: true, rule: 'core-http-only-below' },
  { from: 'core/http/p3.ts', to: 'core/journal/journal.ts' },
  { from: 'core/stream/p1.ts', to: 'core/socket/wire.ts', rule: 'core-stream-only-below' },
  { from: 'core/stream/p2.ts', to: 'core/http/request-context.ts' },
  { from: 'core/socket/p1.ts', to: 'core/emulator.ts', typeOnly: true, rule: 'core-socket-only-below' },
  { from: 'core/socket/p2.ts', to: 'core/stream/guard.ts' },
  { from: 'core/p1.ts', to: 'core/socket/wire.ts' },
  { from: 'core/http/validation.ts', to: 'core/state/ids.ts', rule: 'core-leaves-import-nothing' },
  { from: 'core/archive/tar.ts', to: 'core/faults/faults.ts', typeOnly: true, rule: 'core-leaves-import-nothing' },
  // Core knows no service, no audio engine and nothing of the entry; the client imports nothing of the server.
  { from: 'core/state/p7.ts', to: 'audio/text/tokens.ts', rule: 'core-not-to-audio' },
  { from: 'core/p2.ts', to: 'config.ts', typeOnly: true, rule: 'core-not-to-entry' },
  { from: 'core/http/p4.ts', to: 'app.ts', rule: 'core-not-to-entry' },
  { from: 'client/p1.ts', to: 'core/state/fixture-schemas.ts', typeOnly: true, rule: 'client-stands-alone' },
  { from: 'client/p2.ts', to: 'client/types.ts' },
  { from: 'config.ts', to: 'core/emulator.ts', typeOnly: true },
  // Core and audio below the services and the control plane; the services apart.
  { from: 'core/state/p6.ts', to: 'services/speech/model.ts', typeOnly: true, rule: 'core-and-audio-stay-below-services' },
  { from: 'audio/p1.ts', to: 'control/routes.ts', rule: 'core-audio-not-to-control' },
  { from: 'services/speech/p1.ts', to: 'control/routes.ts', rule: 'services-not-to-control' },
  { from: 'services/platform/p1.ts', to: 'app.ts', rule: 'services-not-to-composer' },
  // The tapes sit above core and the services; only the composer and the CLI load them.
  { from: 'core/http/p5.ts', to: 'tapes/format.ts', typeOnly: true, rule: 'tapes-above-core-and-services' },
  { from: 'services/speech/p3.ts', to: 'tapes/match.ts', rule: 'tapes-above-core-and-services' },
  { from: 'tapes/p1.ts', to: 'services/speech/errors.ts', rule: 'tapes-not-to-services' },
  { from: 'tapes/p2.ts', to: 'config.ts', typeOnly: true, rule: 'tapes-not-to-services' },
  { from: 'tapes/p3.ts', to: 'core/service.ts', typeOnly: true },
  { from: 'app.ts', to: 'tapes/format.ts' },
  { from: 'services/shared/p1.ts', to: 'services/speech/model.ts', rule: 'shared-stays-below-services' },
  { from: 'services/speech/p2.ts', to: 'services/platform/envelope.ts', rule: 'speech-and-platform-apart' },
  { from: 'services/platform/p2.ts', to: 'services/speech/errors.ts', rule: 'platform-and-speech-apart' },
  { from: 'services/platform/tts/p1.ts', to: 'services/platform/calls/model.ts', rule: 'platform-area-not-to-sibling' },
  { from: 'services/platform/tts/p2.ts', to: 'services/platform/shared/billing.ts' },
  { from: 'services/platform/shared/p1.ts', to: 'services/platform/tts/model.ts', rule: 'platform-shared-below-areas' },
  { from: 'services/platform/mcp/p1.ts', to: 'services/platform/calls/model.ts', rule: 'mcp-only-to-the-operations-it-mirrors' },
  { from: 'services/platform/mcp/p2.ts', to: 'services/platform/tts/model.ts' },
  { from: 'services/speech/stt/p1.ts', to: 'services/speech/async/model.ts', rule: 'speech-area-not-to-sibling' },
  { from: 'services/speech/stt/p2.ts', to: 'services/speech/voices/store.ts' },
  { from: 'services/speech/bidi/p1.ts', to: 'services/speech/async/model.ts', rule: 'bidi-only-to-the-socket-it-builds-on' },
  { from: 'services/speech/bidi/p2.ts', to: 'services/speech/ws/piece.ts' },
  { from: 'services/speech/clone/p1.ts', to: 'services/speech/voices/routes.ts', rule: 'speech-stores-not-their-routes' },
];

/** A type-only circle between two files of one folder: refused, although no value crosses it. */
const CIRCLE = ['services/speech/circle-a.ts', 'services/speech/circle-b.ts'];

/** An import of a file that does not exist. */
const UNRESOLVED = 'services/speech/unresolved.ts';

let root: string;
let result: ICruiseResult;

function write(path: string, text: string): void {
  const full = join(root, 'src', path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, text, { flag: 'a' });
}

function specifier(from: string, to: string): string {
  const rel = relative(dirname(from), to).replace(/\.ts$/, '.js');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'corridors-'));
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src'] }),
  );
  const targets = new Set(PLANTS.map((p) => p.to));
  for (const to of targets) write(to, 'export interface Planted { x: number }\nexport const planted = 1;\n');
  PLANTS.forEach((p, i) => {
    const name = `Planted as P${i}, planted as p${i}`;
    write(
      p.from,
      p.typeOnly
        ? `import type { Planted as P${i} } from '${specifier(p.from, p.to)}';\nexport type T${i} = P${i};\n`
        : `import { ${name} } from '${specifier(p.from, p.to)}';\nexport const v${i}: P${i} = { x: p${i} };\n`,
    );
  });
  write(CIRCLE[0]!, `import type { B } from '${specifier(CIRCLE[0]!, CIRCLE[1]!)}';\nexport interface A { b?: B }\n`);
  write(CIRCLE[1]!, `import type { A } from '${specifier(CIRCLE[1]!, CIRCLE[0]!)}';\nexport interface B { a?: A }\n`);
  write(UNRESOLVED, "import { gone } from './gone.js';\nexport const kept = gone;\n");
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const out = await cruise(['src'], {
      validate: true,
      ruleSet: { forbidden: config.forbidden },
      doNotFollow: { path: 'node_modules' },
      tsPreCompilationDeps: true,
      tsConfig: { fileName: 'tsconfig.json' },
      enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    });
    result = out.output as ICruiseResult;
  } finally {
    process.chdir(cwd);
  }
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

function violationsFrom(from: string): string[] {
  return result.summary.violations.filter((v) => v.from === `src/${from}`).map((v) => v.rule.name);
}

describe('the corridors of .dependency-cruiser.cjs, each proven by a planted import', () => {
  it('every planted import resolves (a rule cannot pass an import it never sees)', () => {
    const unresolved = result.summary.violations.filter((v) => v.rule.name === 'every-import-resolves').map((v) => v.from);
    expect(unresolved).toEqual([`src/${UNRESOLVED}`]);
  });

  it.each(PLANTS.filter((p) => p.rule))('$from -> $to is refused by $rule', (p) => {
    expect(violationsFrom(p.from)).toContain(p.rule);
  });

  it.each(PLANTS.filter((p) => !p.rule))('$from -> $to is allowed', (p) => {
    expect(violationsFrom(p.from)).toEqual([]);
  });

  it('a circle of type-only imports is refused by no-circular', () => {
    expect(violationsFrom(CIRCLE[0]!)).toContain('no-circular');
  });

  it('every rule of the configuration is proven by one planted import at least', () => {
    const proven = new Set([...PLANTS.map((p) => p.rule), 'no-circular', 'every-import-resolves']);
    expect(violationsFrom(UNRESOLVED)).toContain('every-import-resolves');
    expect(config.forbidden.map((r) => r.name).filter((name) => !proven.has(name))).toEqual([]);
  });
});
