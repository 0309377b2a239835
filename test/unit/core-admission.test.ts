import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { admit, type AdmissionFaultField } from '../../src/core/http/admission.js';
import type { Account } from '../../src/core/state/accounts.js';
import { classifyBodyError } from '../../src/core/http/body-errors.js';
import type { Emulator } from '../../src/core/emulator.js';
import { bracketPath, dottedPath, firstProblemOf } from '../../src/core/http/validation.js';

const account = { id: 'a1', label: 'k…1' } as unknown as Account;
/** Only what admit reads of the emulator: whether the account carries a capability. */
const emu = (caps: string[]) => ({ accounts: { has: (_a: Account, c: string) => caps.includes(c) } }) as unknown as Emulator;
const faults = (f: Partial<Record<AdmissionFaultField, number>>) => (field: AdmissionFaultField) => f[field];

describe('admission order: close_ws (sockets), code, status, key, capability', () => {
  test('each refusal wins over everything after it', () => {
    const all = faults({ close_ws: 4003, code: 1002, status: 429 });
    const bad = { ok: false as const, problem: 'missing' as const };
    expect(admit(emu([]), { fault: all, key: bad, capability: 'tts', socket: true })).toEqual({ ok: false, refusal: { kind: 'close_ws', closeCode: 4003 } });
    // HTTP operations never take close_ws.
    expect(admit(emu([]), { fault: all, key: bad, capability: 'tts' })).toEqual({ ok: false, refusal: { kind: 'fault_code', code: 1002 } });
    expect(admit(emu([]), { fault: faults({ status: 429 }), key: bad })).toEqual({ ok: false, refusal: { kind: 'fault_status', status: 429 } });
    expect(admit(emu([]), { fault: faults({}), key: { ok: false, problem: 'disabled' }, capability: 'tts' })).toEqual({
      ok: false,
      refusal: { kind: 'key', problem: 'disabled' },
    });
    expect(admit(emu([]), { fault: faults({}), key: { ok: true, account }, capability: 'tts' })).toEqual({
      ok: false,
      refusal: { kind: 'capability', capability: 'tts' },
    });
    expect(admit(emu(['tts']), { fault: faults({}), key: { ok: true, account }, capability: 'tts' })).toEqual({ ok: true, account });
  });

  test('a key given as a function is read only when the faults let the request pass', () => {
    let reads = 0;
    const key = () => {
      reads++;
      return { ok: true as const, account };
    };
    admit(emu([]), { fault: faults({ code: 1 }), key });
    expect(reads).toBe(0);
    expect(admit(emu([]), { fault: faults({}), key })).toEqual({ ok: true, account });
    expect(reads).toBe(1);
  });
});

describe('unreadable bodies', () => {
  test('framework errors are classified; anything else is not a body error', () => {
    const err = (props: Record<string, unknown>) => Object.assign(new Error('Unexpected token'), props);
    expect(classifyBodyError(err({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }))).toEqual({ kind: 'too_large' });
    expect(classifyBodyError(err({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }))).toEqual({ kind: 'media_type' });
    expect(classifyBodyError(err({ code: 'FST_ERR_CTP_EMPTY_JSON_BODY', statusCode: 400 }))).toEqual({ kind: 'empty' });
    expect(classifyBodyError(err({ statusCode: 400 }))).toEqual({ kind: 'bad_json', detail: 'Unexpected token' });
    expect(classifyBodyError(err({ statusCode: 500 }))).toBeNull();
  });
});

describe('zod issue reader', () => {
  const schema = z.object({ a: z.object({ list: z.array(z.object({ n: z.number() })) }), s: z.string() }).strict();
  test('path, rule and the facts a wording needs', () => {
    const missing = firstProblemOf(schema.safeParse({ a: { list: [] } }, { reportInput: true }).error!);
    expect(missing).toMatchObject({ path: ['s'], code: 'invalid_type', missing: true, expected: 'string' });
    const nested = firstProblemOf(schema.safeParse({ a: { list: [{ n: 'x' }] }, s: '' }, { reportInput: true }).error!);
    expect(nested).toMatchObject({ path: ['a', 'list', 0, 'n'], missing: false, expected: 'number' });
    expect(dottedPath(nested!.path)).toBe('a.list.0.n');
    expect(bracketPath(nested!.path)).toBe('a.list[0].n');
    const keys = firstProblemOf(schema.safeParse({ a: { list: [] }, s: '', extra: 1 }).error!);
    expect(keys).toMatchObject({ path: [], code: 'unrecognized_keys', keys: ['extra'] });
  });
});
