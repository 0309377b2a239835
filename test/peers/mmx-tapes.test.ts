/**
 * Peer: the official MiniMax CLI (npm `mmx-cli`, see ./mmx.ts), unmodified, against an emulator that records a real
 * service (here a second emulator with its own seed and voices), then against one replaying those tapes with the
 * upstream gone: the files it saves and the stream it writes are the recorded bytes.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { control } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { REAL_KEY, startRecorder, startReplayer, startUpstream, tapeDir } from '../tapes/helpers.js';
import { mmx } from './mmx.js';

const TEXT = 'Recorded by the command line, replayed without a network.';
const WHOLE = ['speech', 'synthesize', '--text', TEXT, '--format', 'mp3', '--out', 'taped.mp3'];
const STREAM = ['speech', 'synthesize', '--text', TEXT, '--format', 'mp3', '--stream'];

describe('mmx-cli against a recording emulator, then a replaying one', () => {
  const dir = tapeDir();
  let home: string;
  let replayer: RunningEmulator;
  let recordedFile: Buffer;
  let recordedStream: Buffer;
  let recordedVoices: unknown;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'mmx-tapes-'));
    const upstream = await startUpstream();
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      const run = (args: string[], raw = false) => mmx(args, { baseUrl: recorder.speechUrl, key: REAL_KEY, home, rawOutput: raw });
      const whole = await run(WHOLE);
      expect(whole.code, whole.stderr).toBe(0);
      recordedFile = await readFile(join(home, 'taped.mp3'));
      const stream = await run(STREAM, true);
      expect(stream.code, stream.stderr).toBe(0);
      recordedStream = stream.stdout;
      const voices = await run(['speech', 'voices']);
      expect(voices.code, voices.stderr).toBe(0);
      recordedVoices = voices.json;
    } finally {
      await recorder.close();
      await upstream.close();
    }
    await rm(join(home, 'taped.mp3'));
    replayer = await startReplayer(dir, { replayStrict: true });
  }, 120_000);
  afterAll(async () => {
    await replayer?.close();
    await rm(home, { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
  });

  const run = (args: string[], raw = false) => mmx(args, { baseUrl: replayer.speechUrl, key: 'ci-key-without-network', home, rawOutput: raw });

  it('the file it saves is the recorded audio, byte for byte', async () => {
    const r = await run(WHOLE);
    expect(r.code, r.stderr).toBe(0);
    const saved = await readFile(join(home, 'taped.mp3'));
    expect(saved.equals(recordedFile)).toBe(true);
    expect((await ffprobe(saved)).codec).toBe('mp3');
  });

  it('--stream writes the recorded stream to stdout, byte for byte', async () => {
    const r = await run(STREAM, true);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.equals(recordedStream)).toBe(true);
  });

  it("the voice list is the upstream's, and every call was answered by a tape (strict replay)", async () => {
    const r = await run(['speech', 'voices']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual(recordedVoices);
    expect(JSON.stringify(r.json)).toContain('tape-upstream-voice');
    const entries = (await control(replayer.speechUrl).journal({ limit: 10 })).body.entries as any[];
    expect(entries.length).toBeGreaterThanOrEqual(3);
    for (const e of entries) expect(e.tape?.mode, e.path).toBe('replayed');
  });
});
