/** The pace and audio fault fields through the existing fault parsing: the header, queued rules, what is ignored. */
import { describe, expect, it } from 'vitest';
import { parseFaultHeader } from '../../src/core/faults/faults.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { req } from './helpers.js';
import { streamT2a } from './pacing-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech', resetEach: true });

describe('reading the fields', () => {
  it('rtf alone may be a decimal; every other field stays an integer, in the same words as before', () => {
    const problem = (v: string) => parseFaultHeader(v).problems[0];
    expect(parseFaultHeader('rtf=1.5;ttfa_ms=200').directive).toEqual({ rtf: 1.5, ttfa_ms: 200 });
    expect(problem('code=1.5')).toBe('X-Emulator-Fault: cannot read "code=1.5" (expected key=integer)');
    expect(problem('ttfa_ms=2.5')).toBe('X-Emulator-Fault: cannot read "ttfa_ms=2.5" (expected key=integer)');
    expect(problem('rtf=0')).toMatch(/^X-Emulator-Fault: rtf: /);
    expect(problem('drop_final=2')).toMatch(/^X-Emulator-Fault: drop_final: /);
    expect(problem('hex_odd=0')).toMatch(/^X-Emulator-Fault: hex_odd: /);
  });
});

describe('over the wire', () => {
  it('a queued rule carries the fields to the next stream of its path', async () => {
    expect((await ctl.addFault({ path: '/v1/t2a_v2', fault: { drop_final: 1, rtf: 20 } })).status).toBe(201);
    const s = await streamT2a(emu.speechUrl, { text: 'Queued faults reach the audio.' });
    expect(s.broken).toBe(false);
    expect(s.events.some((e) => e.body.data?.status === 2)).toBe(false);
    const next = await streamT2a(emu.speechUrl, { text: 'Queued faults reach the audio.' });
    expect(next.events.at(-1)!.body.data.status).toBe(2);
  });

  it('a whole (non-streamed) answer has no stream to shape: the fields are reported ignored', async () => {
    const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer pacing-key', 'x-emulator-fault': 'ttfa_ms=100;hex_odd=1' },
      body: JSON.stringify(req()),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-emulator-fault-ignored')).toBe('ttfa_ms, hex_odd');
  });

  it('a bad field in the header is named in X-Emulator-Fault-Ignored and the stream is left alone', async () => {
    const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer pacing-key', 'x-emulator-fault': 'rtf=-1' },
      body: JSON.stringify(req({ stream: true })),
    });
    expect(res.headers.get('x-emulator-fault-ignored')).toMatch(/^X-Emulator-Fault: cannot read "rtf=-1"|^X-Emulator-Fault: rtf: /);
    expect(await res.text()).toContain('"status":2');
  });
});
