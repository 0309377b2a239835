/**
 * A conversation reply's delivery figures count from the end of the user's input (here a text message),
 * not from the reply's synthesis: the language model's time is part of the turn's latency.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/app.js';
import { REALISTIC_PACE } from '../../src/core/stream/shaping.js';
import { control, startTestEmulator } from '../helpers/emulator.js';
import { connect } from './conversation/conversation-helpers.js';

const TEXT = '/api/v1/audio/conversation/stream-text';
let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator({ latency: 'realistic' });
});
afterAll(() => emu.close());

describe('the turn latency of a conversation reply', () => {
  it("is the journal's first audio of the turn, counted from the user's input as the done event counts it", async () => {
    const ctl = control(emu.platformUrl);
    await ctl.putAccount('conv-figures', { balance_micro: 1_000_000 });
    const c = await connect(`${emu.platformUrl.replace(/^http/, 'ws')}${TEXT}?api_key=conv-figures`);
    c.sendJson({ voice_id: 'english_tutor', text_input: 'Tell me a story about the sea.' });
    await c.closed;
    const done = c.events().at(-1);
    let entry: any;
    for (let i = 0; i < 100 && !(entry?.status && entry.delivery); i++) {
      entry = (await ctl.journal({ path: TEXT, limit: 1 })).body.entries[0];
      await new Promise((r) => setTimeout(r, 20));
    }
    const d = entry.delivery;
    // The language model's first token (600 ms in the realistic profile) comes before the pace's ttfa.
    expect(d.first_audio_ms).toBeGreaterThanOrEqual(600 + REALISTIC_PACE.ttfa_ms!);
    // The done event's first_audio_ms counts from the same moment, once the frame was handed on.
    expect(Math.abs(d.first_audio_ms - done.first_audio_ms)).toBeLessThanOrEqual(60);
    // The pace itself counts from the synthesis: its note's first audio is the later part only.
    const paced = Number(/first audio after (\d+) ms/.exec(entry.note)![1]);
    expect(d.first_audio_ms - paced).toBeGreaterThanOrEqual(550);
    expect(d.audio_ms).toBeGreaterThan(0);
    expect(d.overrun_ms).toBeUndefined();
    const report = await ctl.client.report({ path: TEXT });
    expect(report.operations[0]!.figures.turn_latency_ms.max).toBe(d.first_audio_ms);
  });
});
