/**
 * Tapes loaded and unloaded at run time through the control plane (`PUT|GET|DELETE /_emulator/tapes/replay`, the
 * control client's tapesReplay/tapesLoaded/tapesStopReplay): recorded from an upstream emulator (its own voice, which
 * the replaying emulator's rules refuse), then replayed by an emulator started without tapes, with the upstream gone,
 * over HTTP and on the speech socket; unloaded, the emulator answers by its own rules again.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlClientError } from '../../src/client/index.js';
import type { RunningEmulator } from '../../src/index.js';
import { control, startTestEmulator } from '../helpers/emulator.js';
import { t2a } from '../speech/helpers.js';
import { REAL_KEY, startRecorder, startUpstream, tapeDir, UPSTREAM_VOICE } from './helpers.js';
import { audioOf, nameOf, talk, until, wsBase, type Talk } from './socket-helpers.js';

const T2A = { model: 'speech-02-turbo', text: 'Loaded at run time.', voice_setting: { voice_id: UPSTREAM_VOICE }, audio_setting: { format: 'mp3' } };
const START = { event: 'task_start', model: 'speech-2.8-turbo', voice_setting: { voice_id: UPSTREAM_VOICE }, audio_setting: { format: 'mp3' } };
const SCRIPT = [START, { event: 'task_continue', text: 'A socket replayed after a control call.' }, until('task_continued'), { event: 'task_finish' }];

const speechSocket = (url: string): Promise<Talk> => talk(`${wsBase(url)}/ws/v1/t2a_v2`, SCRIPT, { headers: { authorization: `Bearer ${REAL_KEY}` } });

/** The control client's failure, as status and message. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; message: string }> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ControlClientError);
  const e = err as ControlClientError;
  return { status: e.status, message: (e.body as { error: { message: string } }).error.message };
}

describe('tapes: a folder replayed from the control plane, at run time', () => {
  const dir = tapeDir();
  const others: string[] = [];
  let recordedAudio: string;
  let recordedSocketAudio: Buffer;
  let emu: RunningEmulator;

  beforeAll(async () => {
    const upstream = await startUpstream();
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      const r = await t2a(recorder.speechUrl, T2A, { key: REAL_KEY });
      expect(r.body.base_resp.status_code).toBe(0);
      recordedAudio = r.body.data.audio;
      const s = await speechSocket(recorder.speechUrl);
      expect(s.got.map(nameOf)).toContain('task_finished');
      recordedSocketAudio = audioOf(s.got);
      expect(recordedSocketAudio.length).toBeGreaterThan(1000);
    } finally {
      await recorder.close();
      await upstream.close();
    }
    emu = await startTestEmulator();
  }, 60_000);

  afterAll(async () => {
    await emu?.close();
    for (const d of [dir, ...others]) rmSync(d, { recursive: true, force: true });
  });

  it('loads the folder: HTTP and socket requests that follow get the recorded answers; unloaded, the emulator answers by its own rules', async () => {
    // Before: the emulator's own rules (the upstream's voice is unknown here).
    expect(await emu.control.tapesLoaded()).toEqual({ mode: null, dir: null, strict: false, speed: null, tapes: 0 });
    expect((await t2a(emu.speechUrl, T2A, { key: REAL_KEY })).body.base_resp.status_code).toBe(2054);

    expect(await emu.control.tapesReplay({ dir, speed: 0 })).toEqual({ mode: 'replay', dir, strict: false, speed: 0, tapes: 2 });
    expect(await emu.control.tapesLoaded()).toMatchObject({ mode: 'replay', dir, tapes: 2 });

    const replayed = await t2a(emu.speechUrl, T2A, { key: 'ci-key' });
    expect(replayed.body.base_resp.status_code).toBe(0);
    expect(replayed.body.data.audio).toBe(recordedAudio);
    expect((await control(emu.speechUrl).lastEntry({ path: '/v1/t2a_v2' })).tape.mode).toBe('replayed');
    // Every listener: the backup's request is answered from the same tapes.
    expect((await t2a(emu.speechBackupUrl, T2A, { key: 'ci-key' })).body.data.audio).toBe(recordedAudio);
    // A socket opened after the call is replayed, frame for frame.
    const socket = await speechSocket(emu.speechUrl);
    expect(socket.got.map(nameOf)).toContain('task_finished');
    expect(audioOf(socket.got).equals(recordedSocketAudio)).toBe(true);

    expect(await emu.control.tapesStopReplay()).toEqual({ mode: null, dir: null, strict: false, speed: null, tapes: 0 });
    expect((await t2a(emu.speechUrl, T2A, { key: REAL_KEY })).body.base_resp.status_code).toBe(2054);
    const own = await speechSocket(emu.speechUrl);
    expect(own.got.map(nameOf)).not.toContain('task_finished');
    expect(own.got.map(nameOf)).toContain('task_failed');
    // The run's used tapes are written for `tapes prune`, as at the close of a --replay run.
    const used = JSON.parse(readFileSync(join(dir, '.used.json'), 'utf8')).used as string[];
    expect(used).toHaveLength(2);
  });

  it('strict and speed are those of --replay-strict and --replay-speed; a second load replaces the first', async () => {
    await emu.control.tapesReplay({ dir, speed: 0 });
    const strict = await emu.control.tapesReplay({ dir, strict: true, speed: 0 });
    expect(strict).toMatchObject({ mode: 'replay', strict: true });
    const miss = await t2a(emu.speechUrl, { ...T2A, text: 'Never recorded.' }, { key: 'ci-key' });
    expect(miss.status).toBe(404);
    expect(miss.body.base_resp.status_msg).toMatch(/^replay: no tape matches POST \/v1\/t2a_v2; nearest: speech-post-v1-t2a-v2-\S+ \(differs in body\.text\)$/);
    await emu.control.tapesStopReplay();
    // Unloaded: the same request is the emulator's own (it knows the default voice).
    const own = await t2a(emu.speechUrl, { ...T2A, voice_setting: { voice_id: 'male-qn-qingse' } }, { key: 'ci-key' });
    expect(own.body.base_resp.status_code).toBe(0);
  });

  it('a folder loaded again goes on with the fresh values of the run: no trace id is handed out twice', async () => {
    const fresh = await startTestEmulator();
    try {
      const traces: string[] = [];
      for (let load = 0; load < 2; load++) {
        await fresh.control.tapesReplay({ dir, speed: 0 });
        const r = await t2a(fresh.speechUrl, T2A, { key: REAL_KEY });
        expect(r.body.data.audio).toBe(recordedAudio);
        traces.push(r.body.trace_id);
        await fresh.control.tapesStopReplay();
      }
      expect(new Set(traces).size).toBe(2);
    } finally {
      await fresh.close();
    }
  });

  it('a folder loaded again goes on with its used-list: .used.json names every tape the run used, not only those since the last load', async () => {
    const fresh = await startTestEmulator();
    try {
      await fresh.control.tapesReplay({ dir, speed: 0 });
      expect((await t2a(fresh.speechUrl, T2A, { key: 'ci-key' })).body.data.audio).toBe(recordedAudio);
      // Loaded again (a setting changed, or a suite putting its run's tapes back), then stopped.
      await fresh.control.tapesReplay({ dir, strict: true, speed: 0 });
      await fresh.control.tapesStopReplay();
      const used = JSON.parse(readFileSync(join(dir, '.used.json'), 'utf8')).used as string[];
      // The T2A tape was used by this run: `tapes prune` must keep it.
      expect(used).toHaveLength(1);
      expect(used[0]).toMatch(/^speech-post-v1-t2a-v2-/);
    } finally {
      await fresh.close();
    }
  });

  it('refuses what is not a folder of tapes or holds a damaged tape, naming the file and what is wrong, and keeps what was in effect', async () => {
    await emu.control.tapesReplay({ dir, speed: 0 });
    const secret = mkdtempSync(join(tmpdir(), 'tapes-not-'));
    others.push(secret);
    writeFileSync(join(secret, 'settings.json'), JSON.stringify({ password: 'SECRET-VALUE-1234' }));
    const notTapes = await refusal(emu.control.tapesReplay({ dir: secret }));
    expect(notTapes.status).toBe(400);
    expect(notTapes.message).toBe("tapes replay field dir: the folder is not a folder of tapes: it holds a .json file without the tape format's version field");
    expect(notTapes.message).not.toContain('SECRET');

    const missing = await refusal(emu.control.tapesReplay({ dir: join(secret, 'nowhere') }));
    expect(missing).toMatchObject({ status: 400 });
    expect(missing.message).toMatch(/^tapes replay field dir: tape .*nowhere: the tape folder cannot be read \(ENOENT\)$/);

    const damaged = mkdtempSync(join(tmpdir(), 'tapes-damaged-'));
    others.push(damaged);
    cpSync(dir, damaged, { recursive: true });
    const name = readdirSync(damaged).find((f) => f.startsWith('speech-post-v1-t2a-v2-'))!;
    const tape = JSON.parse(readFileSync(join(damaged, name), 'utf8'));
    tape.answer.status = 999;
    writeFileSync(join(damaged, name), JSON.stringify(tape));
    expect(await refusal(emu.control.tapesReplay({ dir: damaged }))).toEqual({
      status: 400,
      message: `tapes replay field dir: tape ${name}: answer.status: Too big: expected number to be <=599`,
    });

    // A folder without tapes loads as no tapes, and is left as it was (no used-list written into it).
    const plain = mkdtempSync(join(tmpdir(), 'tapes-plain-'));
    others.push(plain);
    writeFileSync(join(plain, 'notes.txt'), 'not a tape');
    expect(await emu.control.tapesReplay({ dir: plain })).toMatchObject({ mode: 'replay', dir: plain, tapes: 0 });
    await emu.control.tapesStopReplay();
    expect(readdirSync(plain)).toEqual(['notes.txt']);
    await emu.control.tapesReplay({ dir, speed: 0 });

    const badSpeed = await refusal(emu.control.tapesReplay({ dir, speed: -1 }));
    expect(badSpeed.status).toBe(400);
    expect(badSpeed.message).toMatch(/speed/);
    // Nothing of the refused calls took effect: the first folder still answers.
    expect(await emu.control.tapesLoaded()).toMatchObject({ mode: 'replay', dir, speed: 0 });
    expect((await t2a(emu.speechUrl, T2A, { key: 'ci-key' })).body.data.audio).toBe(recordedAudio);
    await emu.control.tapesStopReplay();
  });

  it('a tapes check that is running refuses a load (409): its requests are answered by the rules, and then tapes load again', async () => {
    // The check's T2A request waits 1.5 s (a queued fault), so the load below arrives while the check runs.
    await emu.control.faults.add({ path: '/v1/t2a_v2', times: 1, fault: { delay_ms: 1500 } });
    const t2aSeen = async () => ((await control(emu.speechUrl).call('GET', '/journal?path=/v1/t2a_v2')).body as { entries: unknown[] }).entries.length;
    const before = await t2aSeen();
    const check = control(emu.speechUrl).call('POST', '/tapes/check', { dir });
    // The check's own T2A request has arrived (and waits): the check is running.
    for (let i = 0; i < 100 && (await t2aSeen()) === before; i++) await new Promise((r) => setTimeout(r, 20));
    const put = await control(emu.speechUrl).call('PUT', '/tapes/replay', { dir });
    expect(put.status).toBe(409);
    expect((put.body as { error: { message: string } }).error.message).toMatch(/^tapes replay: a tapes check is running/);
    const checked = await check;
    expect(checked.status).toBe(200);
    expect((checked.body as { tapes: number }).tapes).toBe(2);
    // Once the check has answered, a load is taken.
    expect((await emu.control.tapesReplay({ dir })).tapes).toBe(2);
    await emu.control.tapesStopReplay();
  });

  it('an emulator that is recording refuses to replay or stop (409, the control plane shape), and tells what it records', async () => {
    const upstream = await startUpstream();
    const recording = tapeDir();
    others.push(recording);
    const recorder = await startRecorder(recording, upstream.emu, { recordMode: 'record-missing' });
    try {
      expect(await recorder.control.tapesLoaded()).toEqual({ mode: 'record-missing', dir: recording, strict: false, speed: 1, tapes: 0 });
      const put = await control(recorder.speechUrl).call('PUT', '/tapes/replay', { dir });
      expect(put.status).toBe(409);
      expect(put.body).toEqual({
        error: {
          message: `tapes replay: the emulator is recording (--record-mode record-missing) into ${recording}; start one without --record to replay tapes`,
        },
      });
      expect((await control(recorder.speechUrl).call('DELETE', '/tapes/replay')).status).toBe(409);
      // Still recording.
      expect((await t2a(recorder.speechUrl, T2A, { key: REAL_KEY })).body.base_resp.status_code).toBe(0);
      expect(readdirSync(recording).some((f) => f.startsWith('speech-post-v1-t2a-v2-'))).toBe(true);
    } finally {
      await recorder.close();
      await upstream.close();
    }
    expect(existsSync(join(recording, '.used.json'))).toBe(true);
  });
});
