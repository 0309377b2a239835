import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { codeOf, msgOf, speechApi } from './beyond.js';
import { req, t2a } from './helpers.js';
import { session, START } from './ws/ws-helpers.js';

/** The message text of every documented code (speech-beyond.md 7.1, speech-current.md 9.1), as faults answer it. */
const { emu, ctl } = emulatorForFile({ plane: 'speech' });

const TEXTS: [number, string][] = [
  [1000, 'unknown error'],
  [1001, 'request timeout'],
  [1002, 'rate limit exceeded(RPM)'],
  [1004, "login fail: Please carry the API secret key in the 'Authorization' field of the request header"],
  [1008, 'insufficient balance'],
  [1013, 'internal service error'],
  [1024, 'internal error'],
  [1026, 'input new_sensitive'],
  [1027, 'output new_sensitive'],
  [1033, 'system error'],
  [1039, 'token limit'],
  [1041, 'conn limit'],
  [1042, 'invisible character ratio limit'],
  [1043, 'The asr similarity check failed'],
  [1044, 'clone prompt similarity check failed'],
  [2013, 'invalid params'],
  [20132, 'invalid samples or voice_id'],
  [2037, 'voice duration too short'],
  [2038, 'user voice clone forbidden, should complete real-name verification'],
  [2039, 'voice clone voice id duplicate'],
  [2042, "You don't have access to this voice_id"],
  [2045, 'rate growth limit'],
  [2048, 'prompt audio too long'],
  [2049, 'invalid api key'],
  [2054, 'voice id not exist'],
  [2056, 'usage limit exceeded'],
  [2201, 'timeout disconnect'],
  [2202, 'illegal event'],
  [2203, 'empty text, skipped'],
  [2204, 'character limit exceeded, skipped'],
  [2205, 'request limit exceeded'],
  [2206, 'illegal event order'],
];

describe('message texts of the documented codes', () => {
  it('X-Emulator-Fault: code=N on /v1/t2a_v2 answers each documented code with its own text, HTTP 200', async () => {
    for (const [code, text] of TEXTS) {
      const r = await t2a(emu.speechUrl, req(), { key: 'messages-key', headers: { 'x-emulator-fault': `code=${code}` } });
      expect([r.status, r.body.base_resp], String(code)).toEqual([200, { status_code: code, status_msg: text }]);
    }
    // A code nobody documents keeps the generic text.
    const other = await t2a(emu.speechUrl, req(), { key: 'messages-key', headers: { 'x-emulator-fault': 'code=1999' } });
    expect(other.body.base_resp).toEqual({ status_code: 1999, status_msg: 'unknown error' });
  });

  it('the same texts on the other operations, on a queued fault, and on the WebSocket upgrade', async () => {
    const api = speechApi(emu.speechUrl, 'messages-key');
    for (const code of [1026, 1027, 2056]) {
      const r = await api.post('/v1/get_voice', { voice_type: 'system' }, { 'x-emulator-fault': `code=${code}` });
      expect([codeOf(r), msgOf(r)]).toEqual([code, TEXTS.find(([c]) => c === code)![1]]);
    }
    await ctl.addFault({ service: 'speech', path: '/v1/voice_design', times: 1, fault: { code: 1033 } });
    const queued = await api.post('/v1/voice_design', { prompt: 'A calm voice', preview_text: 'Hi.' });
    expect([codeOf(queued), msgOf(queued)]).toEqual([1033, 'system error']);
    for (const [code, text] of [
      [1041, 'conn limit'],
      [2045, 'rate growth limit'],
      [1024, 'internal error'],
    ] as const) {
      const ws = await session(emu.speechUrl, [START], { key: 'messages-key', headers: { 'x-emulator-fault': `code=${code}` } });
      const failed = ws.messages.find((m) => m.event === 'task_failed');
      expect(failed.base_resp, String(code)).toEqual({ status_code: code, status_msg: text });
    }
  });
});
