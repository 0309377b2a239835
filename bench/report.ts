/**
 * The cost of `GET /_emulator/report` over a journal of 10,000 entries of audio streams (a third of
 * them sockets of three answers, one in ten cut by its client), against its anchor in the same run:
 * `GET /_emulator/journal` answering the same entries (selection, entry views, JSON). The first report
 * (each entry's figures made) and the median of 9 more (a finished stream's figures are kept).
 * Runnable alone: npx tsx bench/report.ts
 */
import { performance } from 'node:perf_hooks';
import { DeliveryRecord } from '../src/core/journal/delivery.js';
import { Journal } from '../src/core/journal/journal.js';
import { latencyReport } from '../src/control/report.js';
import { differences } from '../src/control/journal-match.js';
import { entryView } from '../src/control/journal.js';

const ENTRIES = 10_000;
const ROUNDS = 9;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A journal of audio streams with delivery figures fed as the stream guard feeds them (20 frames of 100 ms per answer). */
function filledJournal(): Journal {
  const journal = new Journal(ENTRIES);
  for (let i = 0; i < ENTRIES; i++) {
    const socket = i % 3 === 0;
    const path = socket ? '/ws/v1/t2a_v2' : '/v1/t2a_v2';
    const entry = journal.start({
      at_ms: i,
      service: 'speech',
      method: socket ? 'GET' : 'POST',
      path,
      account: 'bench',
      request: { headers: {} },
    });
    let t = 0;
    const record = new DeliveryRecord(t);
    for (let turn = 0; turn < (socket ? 3 : 1); turn++) {
      if (turn) record.begin((t += 50));
      t += 100 + ((i * 37 + turn * 11) % 700);
      for (let frame = 0; frame < 20; frame++) {
        if (i % 10 === 5 && frame === 12) record.cut(t);
        record.sent(100, (t += 60 + ((i + frame) % 7) * 10));
      }
      record.done();
    }
    entry.noteDelivery(record);
    entry.finish(200, t);
  }
  return journal;
}

export async function benchReport(): Promise<Record<string, unknown>> {
  const journal = filledJournal();
  const matcher = { service: 'speech' as const };
  const select = () => journal.list({ match: (e) => differences(matcher, undefined, e).length === 0 });
  const selectMs: number[] = [];
  const journalMs: number[] = [];
  const reportMs: number[] = [];
  let operations = 0;
  let firstMs = 0;
  for (let round = 0; round <= ROUNDS; round++) {
    const a = performance.now();
    const entries = select();
    const b = performance.now();
    const report = latencyReport(entries);
    const c = performance.now();
    JSON.stringify(report);
    selectMs.push(b - a);
    if (round === 0) firstMs = performance.now() - b;
    else reportMs.push(performance.now() - b);
    // The anchor: the journal query answering the same entries.
    const d = performance.now();
    JSON.stringify({ entries: select().map(entryView) });
    journalMs.push(performance.now() - d);
    operations = report.operations.length;
    if (report.all.count !== ENTRIES) throw new Error(`the report counted ${report.all.count} entries, not ${ENTRIES}`);
  }
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return {
    entries: ENTRIES,
    operations,
    select_ms_median: r1(median(selectMs)),
    journal_answer_ms_median: r1(median(journalMs)),
    report_ms_first: r1(firstMs),
    report_ms_median: r1(median(reportMs)),
    report_ms_worst: r1(Math.max(...reportMs)),
    report_over_journal_answer: Math.round((median(reportMs) / median(journalMs)) * 100) / 100,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await benchReport(), null, 2));
