/** The tapes' calls (`/_emulator/tapes`). */
import type { CallOptions } from '../transport.js';
import type { TapesCheckReport } from '../types.js';
import type { Caller } from './caller.js';

/** `POST /_emulator/tapes/check` of a folder on the emulator's machine. */
export function checkTapes(caller: Caller, dir: string, options?: CallOptions): Promise<TapesCheckReport> {
  return caller.json(
    { method: 'POST', path: '/tapes/check', body: { dir } },
    'the tapes check report {summary, tapes, differing, results}',
    (b) => typeof b.summary === 'string' && typeof b.differing === 'number' && Array.isArray(b.results),
    options,
  );
}
