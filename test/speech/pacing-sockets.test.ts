/**
 * Pace and audio faults on the speech sockets: the same fields as the T2A stream, applied by the
 * socket's stream guard. A bidi `task_cancel` ends a paced wait at once (the barge-in recipe).
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { bidiClient, BIDI_START } from './bidi/bidi-helpers.js';
import { hear, textOf } from './pacing-helpers.js';
import { piecesOf, session, START } from './ws/ws-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });
const PCM = { audio_setting: { format: 'pcm', sample_rate: 16000 } };

describe('paced speech WebSocket', () => {
  it('ttfa_ms counts from the upgrade; rtf=2 delivers the piece at twice real time', async () => {
    const started = performance.now();
    let firstAudio = 0;
    let finalAt = 0;
    const text = textOf(14);
    const result = await session(emu.speechUrl, [{ ...START, ...PCM }, { event: 'task_continue', text }, { event: 'task_finish' }], {
      headers: { 'x-emulator-fault': 'ttfa_ms=700;rtf=2' },
      onMessage: (m) => {
        if (m.event !== 'task_continued') return;
        firstAudio ||= performance.now() - started;
        if (m.is_final) finalAt = performance.now() - started;
      },
    });
    const [piece] = piecesOf(result.messages);
    const length = piece!.extra.audio_length;
    expect(firstAudio).toBeGreaterThanOrEqual(700);
    expect(finalAt - firstAudio).toBeGreaterThanOrEqual(0.9 * (length / 2) - 250);
    const unpaced = performance.now();
    await session(emu.speechUrl, [{ ...START, ...PCM }, { event: 'task_continue', text }, { event: 'task_finish' }]);
    expect(performance.now() - unpaced).toBeLessThan(finalAt / 2);
  });

  it('hex_odd=2, duplicate_chunk=1 and drop_final=1 inside the socket audio', async () => {
    const text = textOf(10);
    const frames = [{ ...START, ...PCM }, { event: 'task_continue', text }, { event: 'task_finish' }];
    const audioOf = (ms: any[]) => ms.filter((m) => m.event === 'task_continued');
    const normal = audioOf((await session(emu.speechUrl, frames)).messages);
    const dropped = await session(emu.speechUrl, frames, { headers: { 'x-emulator-fault': 'hex_odd=2;duplicate_chunk=1;drop_final=1' } });
    // drop_final: neither the is_final message nor task_finished; the socket still closes cleanly.
    expect(dropped.messages.some((m) => m.event === 'task_finished')).toBe(false);
    expect(dropped.close.code).toBe(1000);
    const faulty = audioOf(dropped.messages);
    expect(faulty[0].data.audio).toBe(normal[0].data.audio);
    expect(faulty[1].data.audio).toBe(normal[0].data.audio);
    expect(faulty[2].data.audio).toBe(normal[1].data.audio.slice(0, -1));
    expect(faulty.some((m) => m.is_final)).toBe(false);
    expect(faulty.length).toBe(normal.length);
  });
});

describe('barge-in on the bidirectional socket', () => {
  it('task_cancel after ~1 s of paced audio stops the audio at once; the journal times the cut', async () => {
    const c = await bidiClient(emu.speechUrl, { headers: { 'x-emulator-fault': 'rtf=1' } });
    c.send({ ...BIDI_START, ...PCM });
    await c.waitFor((m) => m.event === 'task_started');
    c.send({ event: 'task_continue', text: textOf(30) });
    c.send({ event: 'task_flush' });
    let played = 0;
    const audio = () => c.messages.filter((m) => m.event === 'task_continued' && m.data?.audio);
    while (played < 1000) {
      await c.waitFor((m) => m.event === 'task_continued', audio().length + 1);
      played = audio().reduce((n, m) => n + m.data.audio.length / 64, 0);
    }
    c.send({ event: 'task_cancel' });
    await c.waitFor((m) => m.event === 'task_canceled');
    const atCancel = audio().length;
    await new Promise((r) => setTimeout(r, 600));
    // At most the message already in flight when the cancel arrived.
    expect(audio().length - atCancel).toBeLessThanOrEqual(1);
    const heardMs = audio().reduce((n, m) => n + m.data.audio.length / 64, 0);
    expect(heardMs).toBeLessThan(2500);
    c.ws.close();
    await c.closed;
    const entry = (await ctl.journal({ path: '/ws/v1/t2a_v2_bidi' })).body.entries[0];
    const m = /last audio (\d+) ms after the client left or cancelled/.exec(entry.note);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeLessThan(250);
    expect(entry.note).toMatch(/paced rtf=1: first audio after \d+ ms/);
    // What the listener heard: the sentence, cut, with the words up to the cut.
    const received = Buffer.concat(audio().map((msg) => Buffer.from(msg.data.audio, 'hex')));
    const heardNow = await hear(emu.speechUrl, received);
    expect(heardNow.utterances).toHaveLength(1);
    expect(heardNow.utterances[0].complete).toBe(false);
    expect(textOf(30).startsWith(heardNow.utterances[0].heard_text)).toBe(true);
  });
});
