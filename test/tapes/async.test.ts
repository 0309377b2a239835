/**
 * The async T2A task on tape: create → query (Processing, then Success) → file retrieve → download, recorded through
 * the emulator from an upstream emulator (a voice only it knows), then replayed with the upstream stopped, strictly:
 * the ids are fresh and mapped back when the client names them, the queries answer in their recorded order, and the
 * download link points at the replaying emulator, which serves the recorded archive byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { control } from '../helpers/emulator.js';
import { madeTask } from '../speech/async/async-helpers.js';
import { speechApi } from '../speech/beyond.js';
import { REAL_KEY, startRecorder, startReplayer, startUpstream, tapeDir, UPSTREAM_VOICE } from './helpers.js';

const CREATE = {
  model: 'speech-02-hd',
  text: 'An async task, recorded once. Replayed offline.',
  voice_setting: { voice_id: UPSTREAM_VOICE },
  audio_setting: { audio_sample_rate: 24000, format: 'mp3', channel: 1 },
};

interface Run {
  created: any;
  queries: any[];
  retrieved: any;
  /** What the download link served, and what retrieve_content answered. */
  linked: Buffer;
  content: Buffer;
}

/** The client's side of the task: create, query, (the upstream finishes it), query, retrieve, download. */
async function runTask(base: string, key: string, finish: (taskId: number) => Promise<void>): Promise<Run> {
  const api = speechApi(base, key);
  const created = (await api.post('/v1/t2a_async_v2', CREATE)).body;
  expect(created.base_resp.status_code).toBe(0);
  const query = async () => (await api.get(`/v1/query/t2a_async_query_v2?task_id=${created.task_id}`)).body;
  const queries = [await query()];
  await finish(created.task_id);
  queries.push(await query());
  const retrieved = (await api.get(`/v1/files/retrieve?file_id=${queries[1].file_id}`)).body;
  const linked = Buffer.from(await (await fetch(retrieved.file.download_url)).arrayBuffer());
  const content = (await api.getBytes(`/v1/files/retrieve_content?file_id=${queries[1].file_id}`)).bytes as Buffer;
  return { created, queries, retrieved, linked, content };
}

describe('tapes: an async T2A task recorded, then replayed offline', () => {
  const dir = tapeDir();
  let recorded: Run;
  let upstreamUrl: string;
  let replayer: RunningEmulator;

  beforeAll(async () => {
    const upstream = await startUpstream();
    upstreamUrl = upstream.emu.speechUrl;
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      recorded = await runTask(recorder.speechUrl, REAL_KEY, async (taskId) => {
        // The real service finishes the task in its own time: here its clock is moved to the task's ready time.
        const task = await madeTask(upstream.emu.speechUrl, taskId);
        const ctl = control(upstream.emu.speechUrl);
        const now = (await ctl.clock()).body.now_ms as number;
        if (task.ready_at_ms > now) await ctl.advance(task.ready_at_ms - now);
      });
    } finally {
      await recorder.close();
      await upstream.close();
    }
    replayer = await startReplayer(dir, { replayStrict: true });
  }, 90_000);

  afterAll(async () => {
    await replayer?.close();
  });

  it("the recording is the upstream's task: Processing, then Success, and a link on the upstream to its archive", () => {
    expect(recorded.queries.map((q) => q.status)).toEqual(['Processing', 'Success']);
    expect(recorded.retrieved.file.download_url.startsWith(upstreamUrl)).toBe(true);
    expect(recorded.content.length).toBeGreaterThan(1000);
    expect(recorded.linked.equals(recorded.content)).toBe(true);
  });

  it('replayed with the upstream gone: fresh ids mapped back, the queries in order, the archive byte for byte from the emulator', async () => {
    let finished = false;
    const replayed = await runTask(replayer.speechUrl, 'ci-key', async () => void (finished = true));
    expect(finished).toBe(true);
    // Fresh ids, the same shape, used consistently by every later answer.
    expect(replayed.created.task_id).not.toBe(recorded.created.task_id);
    expect(replayed.created.file_id).not.toBe(recorded.created.file_id);
    expect(typeof replayed.created.task_id).toBe('number');
    expect(replayed.created.trace_id).not.toBe(recorded.created.trace_id);
    expect(replayed.queries.map((q) => q.status)).toEqual(['Processing', 'Success']);
    for (const q of replayed.queries) expect([q.task_id, q.file_id]).toEqual([replayed.created.task_id, replayed.created.file_id]);
    expect(replayed.retrieved.file.file_id).toBe(replayed.created.file_id);
    // The link is the replaying emulator's, and serves the recorded archive.
    expect(replayed.retrieved.file.download_url.startsWith(replayer.speechUrl)).toBe(true);
    expect(replayed.linked.equals(recorded.content)).toBe(true);
    expect(replayed.content.equals(recorded.content)).toBe(true);
    // Every request was answered by a tape (strict replay: a miss would have been a 404).
    const entries = (await replayer.control.journal.list({ limit: 20 })).filter((e) => e.path.startsWith('/v1/'));
    expect(entries.length).toBe(5);
    for (const e of entries) expect(e.tape?.mode, e.path).toBe('replayed');
  });
});
