/**
 * A long socket on tape: its timeline goes to disk as the frames come, so recording it holds a bounded number of
 * steps in memory whatever its length; the tape is still assembled whole and atomically at the end, in format v1, with
 * the same text as a tape written from memory, and replays frame for frame.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { parseTape, tapeText } from '../../src/tapes/format.js';
import { LineSpill } from '../../src/tapes/spill.js';
import { startRecorder, startReplayer, startUpstream, tapeDir } from './helpers.js';
import { audioOf, nameOf, talk, wsBase, type Got } from './socket-helpers.js';

const HEADERS = { 'x-api-key': 'long-socket-key' };
/** Many more frames than a timeline may hold in memory. */
const FRAMES = 12 * LineSpill.HOLD_LINES;
/** 10 ms of 16 kHz PCM16 per frame: a 30-second stream of many small frames. */
const FRAME_BYTES = 320;

const dir = tapeDir();
let upstream: Awaited<ReturnType<typeof startUpstream>>;
let recorder: RunningEmulator;

function frame(i: number): Buffer {
  const b = Buffer.alloc(FRAME_BYTES);
  // A quiet tone: every frame's bytes differ, so the replay's match reads the audio, not a run of zeros.
  for (let s = 0; s < FRAME_BYTES / 2; s++) b.writeInt16LE(Math.round(300 * Math.sin(((i * FRAME_BYTES) / 2 + s) / 7)), s * 2);
  return b;
}

const spills = () => readdirSync(dir).filter((n) => n.startsWith('.tmp-') && n.endsWith('.timeline'));
const linesOf = (name: string) => {
  try {
    return readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
};
const tapes = () => readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  upstream = await startUpstream();
  recorder = await startRecorder(dir, upstream.emu);
}, 30_000);

afterAll(async () => {
  await recorder?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('recording a long socket', () => {
  let got: Got[] = [];

  it('holds a bounded number of steps in memory: the timeline is on disk while the socket is still open', async () => {
    const ws = new WebSocket(`${wsBase(recorder.platformUrl)}/v1/speech-to-text/stream`, { headers: HEADERS });
    const closed = new Promise<void>((resolve) => ws.on('close', () => resolve()));
    ws.on('message', (data, binary) => got.push(binary ? { binary: data as Buffer } : { json: JSON.parse(String(data)) }));
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    ws.send(JSON.stringify({ meta: { audio_format: 'pcm16', language: 'en' } }));
    for (let i = 0; i < FRAMES; i++) {
      ws.send(frame(i), { binary: true });
      if (i % 200 === 199) await new Promise((r) => setImmediate(r));
    }
    // Every step but the last few is in the spill's file before the socket ends: at most HOLD_LINES wait in memory.
    await until(() => spills().length === 1 && linesOf(spills()[0]!) >= FRAMES + 1 - LineSpill.HOLD_LINES);
    expect(tapes()).toEqual([]);
    ws.send(JSON.stringify({ is_final: true }));
    await closed;
    expect(got.map(nameOf)).toContain('done');
  }, 30_000);

  it('the tape is written whole at the end, in format v1, as a tape written from memory would read; its spill is gone', async () => {
    await until(() => tapes().length === 1);
    expect(spills()).toEqual([]);
    const name = tapes()[0]!;
    const text = readFileSync(join(dir, name), 'utf8');
    const tape = parseTape(name, text);
    expect(tapeText(tape)).toBe(text);
    const steps = tape.answer.stream!.steps;
    const frames = steps.filter((s) => s.dir === 'in' && 'frame' in s);
    expect(frames).toHaveLength(FRAMES);
    expect(frames.at(-1)).toMatchObject({ frame: { offset: (FRAMES - 1) * FRAME_BYTES, bytes: FRAME_BYTES } });
    expect(steps.at(-1)).toMatchObject({ dir: 'out', close: { code: 1000 } });
    expect(text).not.toContain(HEADERS['x-api-key']);
  });

  it('replays with the upstream gone: the same results for the same audio', async () => {
    await recorder.close();
    await upstream.close();
    const replayer = await startReplayer(dir, { replayStrict: true });
    try {
      const script = [{ meta: { audio_format: 'pcm16', language: 'en' } }, ...Array.from({ length: FRAMES }, (_, i) => frame(i)), { is_final: true }];
      const replayed = await talk(`${wsBase(replayer.platformUrl)}/v1/speech-to-text/stream`, script, { headers: HEADERS, timeoutMs: 30_000 });
      const results = (g: Got[]) =>
        g.filter((x) => 'json' in x && x.json.type !== 'asr_partial').map((x) => ('json' in x ? { ...x.json, session_id: undefined } : x));
      expect(results(replayed.got)).toEqual(results(got));
      expect(replayed.close.code).toBe(1000);
    } finally {
      await replayer.close();
    }
  }, 40_000);
});

describe('a socket whose tape cannot be written', () => {
  it('(as on a full disk) leaves no tape and no spill: never half a tape', async () => {
    const broken = tapeDir();
    const source = await startUpstream();
    const emu = await startRecorder(broken, source.emu);
    try {
      // Once recording: `files` becomes a plain file, so the audio's files cannot be written, as on a full disk.
      rmSync(join(broken, 'files'), { recursive: true, force: true });
      writeFileSync(join(broken, 'files'), 'not a folder');
      const script = [{ meta: { audio_format: 'pcm16', language: 'en' } }, ...Array.from({ length: 300 }, (_, i) => frame(i)), { is_final: true }];
      const r = await talk(`${wsBase(emu.platformUrl)}/v1/speech-to-text/stream`, script, { headers: HEADERS });
      expect(r.got.map(nameOf)).toContain('done');
      await until(async () => (await emu.control.journal.list({ path: '/v1/speech-to-text/stream', limit: 1 }))[0]?.tape?.recorded === false);
      const [entry] = await emu.control.journal.list({ path: '/v1/speech-to-text/stream', limit: 1 });
      expect(entry!.tape).toMatchObject({ mode: 'forwarded', recorded: false, problem: expect.stringMatching(/^the tape could not be written/) });
      expect(readdirSync(broken).filter((n) => n !== 'files')).toEqual([]);
    } finally {
      await emu.close();
      await source.close();
      rmSync(broken, { recursive: true, force: true });
    }
  });
});

describe('replaying a long speech socket', () => {
  it('its audio (one file over 4 MB, read a slice at a time) comes back byte for byte', async () => {
    const folder = tapeDir();
    const source = await startUpstream();
    const emu = await startRecorder(folder, source.emu);
    const start = {
      event: 'task_start',
      model: 'speech-2.8-turbo',
      voice_setting: { voice_id: 'male-qn-qingse' },
      audio_setting: { format: 'pcm', sample_rate: 32000 },
    };
    const text = 'A long answer on tape, read back a slice at a time. '.repeat(24);
    const script = [start, { event: 'task_continue', text }, { event: 'task_finish' }];
    const headers = { authorization: 'Bearer long-speech-key' };
    try {
      const recorded = await talk(`${wsBase(emu.speechUrl)}/ws/v1/t2a_v2`, script, { headers, timeoutMs: 60_000 });
      await until(() => readdirSync(folder).some((n) => n.endsWith('.json') && !n.startsWith('.')));
      const big = readdirSync(join(folder, 'files')).filter((n) => n.endsWith('.pcm'));
      expect(big.map((n) => readFileSync(join(folder, 'files', n)).length).some((size) => size > 4 << 20)).toBe(true);
      await emu.close();
      await source.close();
      const replayer = await startReplayer(folder, { replayStrict: true });
      try {
        const replayed = await talk(`${wsBase(replayer.speechUrl)}/ws/v1/t2a_v2`, script, { headers, timeoutMs: 60_000 });
        expect(audioOf(replayed.got).equals(audioOf(recorded.got))).toBe(true);
        expect(audioOf(replayed.got).length).toBeGreaterThan(4 << 20);
      } finally {
        await replayer.close();
      }
    } finally {
      await emu.close();
      await source.close();
      rmSync(folder, { recursive: true, force: true });
    }
  }, 90_000);
});
