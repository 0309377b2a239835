/** The latency report's call (`/_emulator/report`). */
import type { CallOptions } from '../transport.js';
import type { JournalQuery, LatencyReport } from '../types.js';
import type { Caller } from './caller.js';
import { journalParams } from './journal.js';

/** `GET /_emulator/report` over the entries the query selects. */
export function latencyReport(caller: Caller, query: JournalQuery, options?: CallOptions): Promise<LatencyReport> {
  return caller.json(
    { method: 'GET', path: '/report', query: journalParams(query) },
    'the latency report {all, operations}',
    (b) => typeof b.all === 'object' && b.all !== null && Array.isArray(b.operations),
    options,
  );
}
