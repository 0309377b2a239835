/** The fixture files' calls (`/_emulator/fixtures`). */
import type { CallOptions } from '../transport.js';
import type { FixtureContent, FixtureName, FixtureView } from '../types.js';
import { seg, type Caller } from './caller.js';

const FIXTURE = 'a fixture {name, source, content}';
const isFixture = (b: any) => typeof b.name === 'string' && 'content' in b;

export function fixturesCalls(caller: Caller) {
  return {
    list: async (options?: CallOptions): Promise<FixtureView[]> =>
      (
        await caller.json<{ fixtures: FixtureView[] }>(
          { method: 'GET', path: '/fixtures' },
          'the fixtures {fixtures: [...]}',
          (b) => Array.isArray(b.fixtures),
          options,
        )
      ).fixtures,
    get: <N extends FixtureName>(name: N, options?: CallOptions): Promise<FixtureView<N>> =>
      caller.json({ method: 'GET', path: `/fixtures/${seg(name)}` }, FIXTURE, isFixture, options),
    /** Replaces a fixture file now, checked as the start-up files are (a refused one changes nothing). */
    put: <N extends FixtureName>(name: N, content: FixtureContent<N>, options?: CallOptions): Promise<FixtureView<N>> =>
      caller.json({ method: 'PUT', path: `/fixtures/${seg(name)}`, body: content }, FIXTURE, isFixture, options),
  };
}
