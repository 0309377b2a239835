/**
 * Writes the fault fields' table of docs/control-plane.md from the registry (src/core/faults/fields.ts),
 * between its markers: `npx tsx scripts/fault-fields-table.ts`. test/unit/fault-fields.test.ts fails
 * while the page and the registry differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { faultFieldsTable } from '../src/core/faults/fields.js';

export const DOC = new URL('../docs/control-plane.md', import.meta.url);
export const START = '<!-- fault fields: made from src/core/faults/fields.ts by scripts/fault-fields-table.ts -->';
export const END = '<!-- end of fault fields -->';

/** The page with its table made from the registry. */
export function withTable(page: string): string {
  const from = page.indexOf(START);
  const to = page.indexOf(END);
  if (from < 0 || to < from) throw new Error(`docs/control-plane.md has no fault fields markers (${START} … ${END})`);
  return `${page.slice(0, from + START.length)}\n${faultFieldsTable()}\n${page.slice(to)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) writeFileSync(DOC, withTable(readFileSync(DOC, 'utf8')));
