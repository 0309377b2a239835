/**
 * Writes what is made from the fault fields' registry (src/core/faults/fields.ts): the table of
 * docs/control-plane.md (between its markers) and the inspector's module src/control/inspector/fault-fields.js.
 * Run `npx tsx scripts/fault-fields.ts` after changing the registry; test/unit/fault-fields.test.ts
 * fails while either differs from it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as prettier from 'prettier';
import { faultFieldsTable, faultFieldsView } from '../src/core/faults/fields.js';

export const DOC = new URL('../docs/control-plane.md', import.meta.url);
export const INSPECTOR_MODULE = new URL('../src/control/inspector/fault-fields.js', import.meta.url);
export const START = '<!-- fault fields: made from src/core/faults/fields.ts by scripts/fault-fields.ts -->';
export const END = '<!-- end of fault fields -->';

/** The page with its table made from the registry. */
export function withTable(page: string): string {
  const from = page.indexOf(START);
  const to = page.indexOf(END);
  if (from < 0 || to < from) throw new Error(`docs/control-plane.md has no fault fields markers (${START} … ${END})`);
  return `${page.slice(0, from + START.length)}\n${faultFieldsTable()}\n${page.slice(to)}`;
}

/** The inspector's module: the registry as the page reads it (the inspector has no build step), in the project's format. */
export async function inspectorModule(): Promise<string> {
  const text = [
    '// Made from src/core/faults/fields.ts by scripts/fault-fields.ts: the fault fields the form offers and the journal view reads.',
    `export const FAULT_FIELDS = ${JSON.stringify(faultFieldsView())};`,
    '',
  ].join('\n');
  const filepath = INSPECTOR_MODULE.pathname;
  return prettier.format(text, { ...(await prettier.resolveConfig(filepath)), filepath });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(DOC, withTable(readFileSync(DOC, 'utf8')));
  writeFileSync(INSPECTOR_MODULE, await inspectorModule());
}
