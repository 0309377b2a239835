import { describe, expect, test } from 'vitest';
import { FaultHeaderError, parseFaultHeader } from '../../src/core/faults/faults.js';

describe('X-Emulator-Fault header', () => {
  test('reads key=integer pairs separated by ; or , with spaces around', () => {
    expect(parseFaultHeader('code=1002')).toEqual({ code: 1002 });
    expect(parseFaultHeader(' status = 429 ; delay_ms=50, cut_after_chunks=3 ')).toEqual({ status: 429, delay_ms: 50, cut_after_chunks: 3 });
    expect(parseFaultHeader('close_ws=4003;')).toEqual({ close_ws: 4003 });
    expect(parseFaultHeader('code=-1')).toEqual({ code: -1 });
  });

  test('a part that is not key=integer is named in the error', () => {
    expect(() => parseFaultHeader('code=abc')).toThrow(new FaultHeaderError('X-Emulator-Fault: cannot read "code=abc" (expected key=integer)'));
    expect(() => parseFaultHeader('code')).toThrow(FaultHeaderError);
    expect(() => parseFaultHeader('code=1.5')).toThrow(/cannot read "code=1.5"/);
  });

  test('unknown fields and out-of-range values name the field', () => {
    expect(() => parseFaultHeader('bogus=1')).toThrow(/^X-Emulator-Fault: bogus: /);
    expect(() => parseFaultHeader('status=99')).toThrow(/^X-Emulator-Fault: status: /);
    expect(() => parseFaultHeader('status=600')).toThrow(/^X-Emulator-Fault: status: /);
    expect(() => parseFaultHeader('delay_ms=600001')).toThrow(/^X-Emulator-Fault: delay_ms: /);
    expect(() => parseFaultHeader('close_ws=999')).toThrow(/^X-Emulator-Fault: close_ws: /);
  });
});
