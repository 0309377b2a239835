/**
 * Fixtures at run time: `GET /_emulator/fixtures[/{name}]` and `PUT /_emulator/fixtures/{name}`,
 * checked exactly as the start-up files are (core/state/fixtures.ts), applied at once (services read
 * `emu.fixtures.data` on each use; accounts take the new file now). A refused file changes nothing.
 * Files set here survive resets unless `?fixtures=true`, and are saved with the state in a data dir.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import * as z from 'zod';
import { redactKey } from '../core/state/accounts.js';
import { areaOf, checkWith, type StateArea } from '../core/state/areas.js';
import type { Emulator } from '../core/emulator.js';
import { isFixtureName, validateFixture, type FixtureName, type Fixtures } from '../core/state/fixtures.js';
import { ControlError, input } from './common.js';

interface FixtureArea extends StateArea {
  /** The files read at start-up, restored by `reset?fixtures=true`. */
  startup: Fixtures;
  /** Names replaced at run time. */
  replaced: Set<FixtureName>;
}

function apply(emu: Emulator, name: FixtureName, data: unknown, reapply = true): void {
  (emu.fixtures.data as Record<FixtureName, unknown>)[name] = data;
  if (name === 'accounts.json' || name === 'billing.json') {
    emu.accounts.useFixture(emu.fixtures.data['accounts.json'], emu.fixtures.data['billing.json'].free_call_seconds, reapply);
  }
}

/** The fixtures part of the state, registered once per emulator (both listeners mount the plane). */
function fixtureArea(emu: Emulator): FixtureArea {
  return areaOf(emu, 'fixtures', () => {
    const area: FixtureArea = {
      name: 'fixtures',
      startup: structuredClone(emu.fixtures.data),
      replaced: new Set(),
      // A reset keeps the fixtures; only `?fixtures=true` restores them (restoreFixtures).
      reset: () => undefined,
      save: () => Object.fromEntries([...area.replaced].map((n) => [n, emu.fixtures.data[n]])),
      // Files by name; each file's content is checked as a start-up file when it loads (a stale one stays out, said in the log).
      check: checkWith(z.record(z.string(), z.unknown())),
      load(data) {
        for (const [name, content] of Object.entries((data ?? {}) as Record<string, unknown>)) {
          if (!isFixtureName(emu.fixtures.declarations, name)) continue;
          const checked = validateFixture(emu.fixtures.declarations, name, content);
          if (!checked.ok) {
            emu.logger.warn(`saved fixture ${name} no longer valid (${checked.message}); the start-up file stays`);
            continue;
          }
          // The saved accounts already hold what this file gave them.
          apply(emu, name, checked.data, false);
          area.replaced.add(name);
        }
      },
    };
    return area;
  });
}

/** Puts back the start-up files; answers the names that had been replaced. */
export function restoreFixtures(emu: Emulator): FixtureName[] {
  const area = fixtureArea(emu);
  const names = [...area.replaced];
  for (const name of names) apply(emu, name, structuredClone(area.startup[name]));
  area.replaced.clear();
  emu.markDirty('fixtures');
  return names;
}

/** What GET shows: the content, with the keys of the accounts file redacted. */
function shown(name: FixtureName, content: unknown): unknown {
  if (name !== 'accounts.json') return content;
  return (content as { key: string }[]).map((a) => ({ ...a, key: redactKey(a.key) }));
}

const nameParams = z.object({ name: z.string() });
type NameRequest = FastifyRequest<{ Params: { name: string } }>;

export function fixtureRoutes(app: FastifyInstance, emu: Emulator): void {
  const area = fixtureArea(emu);
  const declarations = emu.fixtures.declarations;
  const NAMES = Object.keys(declarations) as FixtureName[];
  const nameOf = (name: string): FixtureName => {
    if (!isFixtureName(declarations, name)) throw new ControlError(404, `no fixture ${name} (fixtures: ${NAMES.join(', ')})`);
    return name;
  };
  const view = (name: FixtureName) => ({
    name,
    source: area.replaced.has(name) ? 'run time' : emu.fixtures.sources[name],
    content: shown(name, emu.fixtures.data[name]),
  });

  app.get('/fixtures', input({}), async () => ({ fixtures: NAMES.map(view) }));
  app.get('/fixtures/:name', { ...input({}), schema: { params: nameParams } }, async (req: NameRequest) => view(nameOf(req.params.name)));
  app.put('/fixtures/:name', { ...input({ body: true }), schema: { params: nameParams, body: z.unknown() } }, async (req: NameRequest) => {
    const name = nameOf(req.params.name);
    const checked = validateFixture(declarations, name, req.body);
    if (!checked.ok) throw new ControlError(400, `fixture ${name}: ${checked.message} (the current file stays)`);
    apply(emu, name, checked.data);
    area.replaced.add(name);
    emu.markDirty('fixtures');
    return view(name);
  });
}
