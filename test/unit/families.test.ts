import { describe, expect, it } from 'vitest';
import { codeOfHttpStatus, FAMILIES, httpStatusOfCode } from '../../src/services/platform/families.js';

/** The platform's error families as a table: statuses of codes, and codes of `status=N` faults. */
describe('httpStatusOfCode', () => {
  it.each([
    [10001, 400],
    [20014, 400],
    [10003, 401],
    [20003, 402],
    [10014, 429],
    [10005, 429],
    [10000, 500],
    [10006, 500],
    [99999, 500],
  ])('%i → HTTP %i', (code, status) => {
    expect(httpStatusOfCode(code)).toBe(status);
  });
});

describe('codeOfHttpStatus', () => {
  it('synthesis and recognition: 400 → 10001, 401 → 10003, 402 → 20003, 429 → 10014, else 10000', () => {
    for (const family of [FAMILIES.tts, FAMILIES.recognition]) {
      expect([400, 401, 402, 429, 500, 503].map((status) => codeOfHttpStatus(family, status))).toEqual([10001, 10003, 20003, 10014, 10000, 10000]);
    }
  });

  it('a family without forbidden, notFound or timeout codes falls back to auth, param and internal', () => {
    expect(codeOfHttpStatus(FAMILIES.voice, 403)).toBe(10003);
    expect(codeOfHttpStatus(FAMILIES.voice, 404)).toBe(10001);
    expect(codeOfHttpStatus(FAMILIES.voice, 408)).toBe(10000);
    expect(codeOfHttpStatus(FAMILIES.voice, 504)).toBe(10000);
  });

  it('each family its own codes: upload rate 10005, podcast timeout 10006, agent 10004 / 10002', () => {
    expect(codeOfHttpStatus(FAMILIES.upload, 429)).toBe(10005);
    expect(codeOfHttpStatus(FAMILIES.podcast, 504)).toBe(10006);
    expect(codeOfHttpStatus(FAMILIES.podcast, 408)).toBe(10006);
    expect(codeOfHttpStatus(FAMILIES.agent, 403)).toBe(10004);
    expect(codeOfHttpStatus(FAMILIES.agent, 404)).toBe(10002);
  });

  it('calls have their own table: 20003 params, 20001 key, 40011 balance, 50000 otherwise', () => {
    expect([400, 401, 403, 402, 429, 500].map((status) => codeOfHttpStatus(FAMILIES.call, status))).toEqual([20003, 20001, 20001, 40011, 50000, 50000]);
  });

  it('in the families that use statuses, a status fault answers that same status', () => {
    for (const status of [400, 401, 402, 429, 500]) expect(httpStatusOfCode(codeOfHttpStatus(FAMILIES.tts, status))).toBe(status);
  });
});

describe('FAMILIES', () => {
  it('only synthesis and recognition carry HTTP statuses; the others always answer HTTP 200', () => {
    const withStatuses = Object.entries(FAMILIES)
      .filter(([, family]) => family.httpStatuses)
      .map(([name]) => name);
    expect(withStatuses.sort()).toEqual(['recognition', 'tts']);
  });
});
