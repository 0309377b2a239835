import { describe, expect, test } from 'vitest';
import { faultCodeString, faultStatusString, socketRefusal } from '../../src/services/platform/conversation/schema.js';

describe('conversation sockets: string codes of injected faults and refusals', () => {
  test('fault code=N: call codes keep their digits, service codes map to gRPC names', () => {
    expect([20001, 20003, 40011, 40012, 40013].map(faultCodeString)).toEqual(['20001', '20003', '40011', '40012', '40013']);
    expect([50000, 10000, 1000].map(faultCodeString)).toEqual(['INTERNAL', 'INTERNAL', 'INTERNAL']);
    expect([10006, 1001].map(faultCodeString)).toEqual(['DEADLINE_EXCEEDED', 'DEADLINE_EXCEEDED']);
    expect([10014, 10005, 1002].map(faultCodeString)).toEqual(['RESOURCE_EXHAUSTED', 'RESOURCE_EXHAUSTED', 'RESOURCE_EXHAUSTED']);
    expect([3, 14, 16].map(faultCodeString)).toEqual(['INVALID_ARGUMENT', 'UNAVAILABLE', 'UNAUTHENTICATED']);
    expect(faultCodeString(12345)).toBe('12345');
  });

  test('fault status=N', () => {
    expect([400, 401, 403, 402, 408, 504, 429, 503, 500, 418].map(faultStatusString)).toEqual([
      '20003',
      '20001',
      '20001',
      '40011',
      'DEADLINE_EXCEEDED',
      'DEADLINE_EXCEEDED',
      'RESOURCE_EXHAUSTED',
      'UNAVAILABLE',
      'INTERNAL',
      'INTERNAL',
    ]);
  });

  test('refusals: close_ws closes without an event; faults close 1011; key and capability close 1008', () => {
    expect(socketRefusal({ kind: 'close_ws', closeCode: 4001 })).toEqual({ closeCode: 4001, reason: 'injected fault: close_ws' });
    expect(socketRefusal({ kind: 'fault_code', code: 1002 })).toMatchObject({
      event: { code: 'RESOURCE_EXHAUSTED', message: 'injected fault: error 1002' },
      closeCode: 1011,
    });
    expect(socketRefusal({ kind: 'fault_status', status: 402 })).toMatchObject({
      event: { code: '40011', message: 'injected fault: HTTP 402' },
      closeCode: 1011,
    });
    expect(socketRefusal({ kind: 'key', problem: 'missing' })).toMatchObject({
      event: { code: '20001', message: 'api_key query parameter is missing' },
      closeCode: 1008,
    });
    expect(socketRefusal({ kind: 'capability', capability: 'calls' })).toMatchObject({
      event: { code: '20001', message: 'this API key lacks the calls capability' },
      closeCode: 1008,
    });
  });
});
