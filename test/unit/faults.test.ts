import { describe, expect, test } from 'vitest';
import { parseFaultHeader } from '../../src/core/faults/faults.js';

const directive = (v: string) => parseFaultHeader(v).directive;
const problems = (v: string) => parseFaultHeader(v).problems;

describe('X-Emulator-Fault header', () => {
  test('reads key=integer pairs separated by ; or , with spaces around', () => {
    expect(parseFaultHeader('code=1002')).toEqual({ directive: { code: 1002 }, problems: [] });
    expect(directive(' status = 429 ; delay_ms=50, cut_after_chunks=3 ')).toEqual({ status: 429, delay_ms: 50, cut_after_chunks: 3 });
    expect(directive('close_ws=4003;')).toEqual({ close_ws: 4003 });
    expect(directive('code=-1')).toEqual({ code: -1 });
  });

  test('a part that is not key=integer is named as a problem', () => {
    expect(parseFaultHeader('code=abc')).toEqual({ directive: undefined, problems: ['X-Emulator-Fault: cannot read "code=abc" (expected key=integer)'] });
    expect(problems('code')).toEqual(['X-Emulator-Fault: cannot read "code" (expected key=integer)']);
    expect(problems('code=1.5')).toEqual(['X-Emulator-Fault: cannot read "code=1.5" (expected key=integer)']);
  });

  test('unknown fields and out-of-range values name the field', () => {
    expect(problems('bogus=1')).toEqual(['X-Emulator-Fault: "bogus" is not a fault field']);
    expect(problems('status=99')[0]).toMatch(/^X-Emulator-Fault: status: /);
    expect(problems('status=600')[0]).toMatch(/^X-Emulator-Fault: status: /);
    expect(problems('delay_ms=600001')[0]).toMatch(/^X-Emulator-Fault: delay_ms: /);
    expect(problems('close_ws=999')[0]).toMatch(/^X-Emulator-Fault: close_ws: /);
  });

  test('one rule for a bad part: the valid fields apply and every part left out is named', () => {
    expect(parseFaultHeader('code=1002;delay_ms=10;typo_ms=5')).toEqual({
      directive: { code: 1002, delay_ms: 10 },
      problems: ['X-Emulator-Fault: "typo_ms" is not a fault field'],
    });
    expect(parseFaultHeader('status=429;close_ws=5;zzz')).toEqual({
      directive: { status: 429 },
      problems: [expect.stringMatching(/^X-Emulator-Fault: close_ws: /), 'X-Emulator-Fault: cannot read "zzz" (expected key=integer)'],
    });
  });

  test('what is quoted back is bounded: a long part is cut, and at most five problems are named', () => {
    const long = parseFaultHeader(`code=${'x'.repeat(12_000)}`).problems;
    expect(long).toEqual([`X-Emulator-Fault: cannot read "code=${'x'.repeat(55)}..." (expected key=integer)`]);
    const many = parseFaultHeader(Array.from({ length: 40 }, (_, i) => `f${'a'.repeat(i)}=1`).join(';')).problems;
    expect(many).toHaveLength(6);
    expect(many.at(-1)).toBe('and 35 more');
  });
});
