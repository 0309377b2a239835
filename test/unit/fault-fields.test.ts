import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parseFaultHeader, streamFaultsSchema } from '../../src/core/faults/faults.js';
import { FAULT_FIELD_NAMES, FAULT_FIELDS, fieldsCarried, streamFields } from '../../src/core/faults/fields.js';
import { DOC, INSPECTOR_MODULE, inspectorModule, withTable } from '../../scripts/fault-fields.js';

/** The one registry of fault fields and what reads it (the client's types: test/client/types.test.ts; the form: test/browser/inspector-views.test.ts). */
describe('the fault fields registry', () => {
  test("the inspector's module is the registry's (npx tsx scripts/fault-fields.ts rewrites it)", async () => {
    expect(readFileSync(INSPECTOR_MODULE, 'utf8')).toBe(await inspectorModule());
  });

  test("docs/control-plane.md's table is the registry's (npx tsx scripts/fault-fields.ts rewrites it)", () => {
    const page = readFileSync(DOC, 'utf8');
    expect(page).toBe(withTable(page));
    for (const name of FAULT_FIELD_NAMES) expect(page).toContain(`| \`${name}\` |`);
  });

  test('the header takes every field at its bounds and refuses each just outside them, naming the field', () => {
    const problems = (v: string) => parseFaultHeader(v).problems;
    for (const name of FAULT_FIELD_NAMES) {
      const f: { min?: number; minExclusive?: boolean; max?: number; type: string } = FAULT_FIELDS[name];
      const inside = f.minExclusive ? f.min! + 0.5 : (f.min ?? f.max ?? 7);
      expect(parseFaultHeader(`${name}=${inside}`)).toEqual({ directive: { [name]: inside }, problems: [] });
      if (f.max !== undefined) expect(problems(`${name}=${f.max + 1}`)[0]).toMatch(new RegExp(`^X-Emulator-Fault: ${name}: `));
      if (f.min !== undefined) expect(problems(`${name}=${f.min - 1}`)[0]).toMatch(new RegExp(`^X-Emulator-Fault: ${name}: `));
      if (f.type === 'integer') expect(problems(`${name}=1.5`)[0]).toMatch(/cannot read/);
    }
    expect(parseFaultHeader('rtf=1.5').directive).toEqual({ rtf: 1.5 });
    expect(problems('rtf=0')[0]).toMatch(/^X-Emulator-Fault: rtf: /);
  });

  test("an account's stream faults take the stream fields and only them", () => {
    const stream = FAULT_FIELD_NAMES.filter((n) => FAULT_FIELDS[n].stage === 'stream');
    expect(Object.keys(streamFaultsSchema.shape)).toEqual(stream);
    expect([...streamFields('pace'), ...streamFields('audio')].sort()).toEqual([...stream].sort());
    expect(streamFaultsSchema.safeParse({ code: 1002 }).success).toBe(false);
  });

  test('a raw audio body takes every stream field but those only hex transports carry', () => {
    expect(fieldsCarried('hex')).toEqual(FAULT_FIELD_NAMES.filter((n) => FAULT_FIELDS[n].stage === 'stream'));
    expect(fieldsCarried('binary')).not.toContain('hex_odd');
    expect(fieldsCarried('binary')).not.toContain('drop_final');
    expect(fieldsCarried('binary')).not.toContain('extra_info_mismatch');
    expect(fieldsCarried('binary')).toContain('corrupt_bytes');
  });
});
