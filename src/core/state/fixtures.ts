import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FixtureDeclarations, FixtureName, Fixtures } from './fixture-schemas.js';

export type { Fixtures, FixtureName };

export class FixtureError extends Error {}

/** fixtures/ of the package, found from this file in src/ (tsx) or dist/ (compiled). */
export function defaultFixturesDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'fixtures', 'accounts.json'))) return join(dir, 'fixtures');
    dir = dirname(dir);
  }
  throw new FixtureError('cannot find the fixtures/ folder of speech-emulator');
}

export interface LoadedFixtures {
  data: Fixtures;
  /** Every registered file with its schema, in the order the fixture list shows them. */
  declarations: FixtureDeclarations;
  /** Where each file was read from (the user's folder or the package's). */
  sources: Record<FixtureName, string>;
  /** Resolves a file named by a fixture (e.g. remote audio) in the user's folder first. */
  resolveFile(rel: string): string;
}

export function isFixtureName(declarations: FixtureDeclarations, name: string): name is FixtureName {
  return Object.hasOwn(declarations, name);
}

/** The one check of a fixture's content, at start-up and at run time: `field a.b: rule` when refused. */
export function validateFixture<N extends FixtureName>(
  declarations: FixtureDeclarations,
  name: N,
  json: unknown,
): { ok: true; data: Fixtures[N] } | { ok: false; message: string } {
  const declared = declarations[name]!;
  // Each fixture is checked once (or when replaced): zod's compiled fast path would cost more to
  // build than it saves, at start-up above all. A large file, plainly valid, is read without zod.
  const read = declared.quickRead?.(json);
  if (read) return { ok: true, data: read as Fixtures[N] };
  const parsed = declared.schema.safeParse(json, { jitless: true });
  if (parsed.success) return { ok: true, data: parsed.data as Fixtures[N] };
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length ? issue.path.join('.') : '(root)';
  return { ok: false, message: `field ${field}: ${issue.message}` };
}

/** Loads and validates every registered fixture, the user's folder overriding the package's file by file. */
export async function loadFixtures(declarations: FixtureDeclarations, overrideDir?: string): Promise<LoadedFixtures> {
  const base = defaultFixturesDir();
  const user = overrideDir ? resolve(overrideDir) : undefined;
  if (user && !existsSync(user)) throw new FixtureError(`fixtures folder ${user} does not exist`);
  const data = {} as Record<string, unknown>;
  const sources = {} as Record<FixtureName, string>;
  for (const name of Object.keys(declarations) as FixtureName[]) {
    const path = user && existsSync(join(user, name)) ? join(user, name) : join(base, name);
    let json: unknown;
    try {
      json = JSON.parse(await readFile(path, 'utf8'));
    } catch (err) {
      throw new FixtureError(`fixture ${path}: ${(err as Error).message}`);
    }
    const parsed = validateFixture(declarations, name, json);
    if (!parsed.ok) throw new FixtureError(`fixture ${path}: ${parsed.message}`);
    data[name] = parsed.data;
    sources[name] = path;
  }
  const resolveFile = (rel: string) => {
    // The schema already refuses such names; this keeps any caller inside the two folders.
    if (isAbsolute(rel) || rel.split(/[/\\]/).includes('..')) throw new FixtureError(`fixture file ${rel} is outside the fixtures folder`);
    return user && existsSync(join(user, rel)) ? join(user, rel) : join(base, rel);
  };
  return { data: data as unknown as Fixtures, declarations, sources, resolveFile };
}
