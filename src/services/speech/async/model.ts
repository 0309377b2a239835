import { encodeAudio, synthesizeStream } from '../../../audio/index.js';
import type { Account } from '../../../core/accounts.js';
import type { Emulator, StateArea } from '../../../core/emulator.js';
import { writeTar } from '../../../core/tar.js';
import { invalidParams, SpeechError } from '../errors.js';
import { addFile, ASYNC_OUTPUT_TTL_MS, blobOf, findFile, newFileId } from '../files/model.js';
import { admit, checkOutputSize, planRequest, recordSignature, subtitleSegments, type SynthesisPlan } from '../model.js';
import { numericId } from '../reply.js';
import type { AsyncBody } from './schema.js';

/**
 * Async synthesis (rule 12.12). A task is `Processing` until the emulator clock has moved
 * 1,000 ms + audio length / 10 past its creation (and the audio is made), then `Success`; 9 h later
 * `Expired` with its file gone. `Failed` when the synthesis was cut by a fault. Output: a tar with the
 * audio, a `.titles` JSON of sentence segments and a `.extra` JSON.
 */
export const MAX_TEXT = 50_000;
export const MAX_FILE_TEXT = 1_000_000;
export const QUERIES_PER_SECOND = 10;

export type TaskStatus = 'Processing' | 'Success' | 'Failed' | 'Expired';

export interface AsyncTask {
  task_id: number;
  account_id: string;
  file_id: number;
  created_at_ms: number;
  ready_at_ms: number;
  /** running: the audio is being made; done: the file exists; failed: it never will. */
  state: 'running' | 'done' | 'failed';
  usage_characters: number;
  note?: string;
}

const AREA = 'speech-async';

interface TaskArea extends StateArea {
  byId: Map<number, AsyncTask>;
}

export function taskArea(emu: Emulator): TaskArea {
  const existing = emu.areas.get(AREA) as TaskArea | undefined;
  if (existing) return existing;
  const byId = new Map<number, AsyncTask>();
  const area: TaskArea = {
    name: AREA,
    byId,
    reset(accountId) {
      if (accountId === undefined) byId.clear();
      else for (const [id, t] of byId) if (t.account_id === accountId) byId.delete(id);
    },
    view: (accountId) =>
      [...byId.values()]
        .filter((t) => t.account_id === accountId)
        .map((t) => ({
          task_id: t.task_id,
          status: statusOf(emu, t),
          file_id: t.file_id,
          created_at_ms: t.created_at_ms,
          ready_at_ms: t.ready_at_ms,
          audio_ready: t.state === 'done',
          ...(t.note ? { note: t.note } : {}),
        })),
    save: () => [...byId.values()],
    load(data) {
      byId.clear();
      for (const t of (Array.isArray(data) ? data : []) as AsyncTask[]) {
        // A task whose audio was being made when the emulator stopped will never finish.
        byId.set(t.task_id, t.state === 'running' ? { ...t, state: 'failed', note: 'interrupted by a restart' } : t);
      }
    },
  };
  emu.registerArea(area);
  return area;
}

export function statusOf(emu: Emulator, t: AsyncTask): TaskStatus {
  if (t.state === 'failed') return 'Failed';
  const now = emu.clock.now();
  if (t.state === 'running' || now < t.ready_at_ms) return 'Processing';
  return now >= t.ready_at_ms + ASYNC_OUTPUT_TTL_MS ? 'Expired' : 'Success';
}

/** The text of the task: `text`, or the text file (txt) of the account; exactly one of them. */
async function textOf(emu: Emulator, account: Account, body: AsyncBody): Promise<{ text: string; limit: number }> {
  const hasText = body.text !== undefined && body.text !== null;
  const hasFile = body.text_file_id !== undefined && body.text_file_id !== null;
  if (hasText && hasFile) throw invalidParams('give either text or text_file_id, not both');
  if (!hasText && !hasFile) throw invalidParams('text or text_file_id is required');
  if (hasText) {
    const n = [...body.text!].length;
    if (n > MAX_TEXT) throw invalidParams(`text must be at most ${MAX_TEXT} characters (got ${n}); upload longer texts as a file and send text_file_id`);
    return { text: body.text!, limit: MAX_TEXT + 1 };
  }
  const f = findFile(emu, account, body.text_file_id!, { field: 'text_file_id' });
  if (f.purpose !== 't2a_async_input') throw invalidParams(`text_file_id ${f.file_id} was uploaded with purpose ${f.purpose}, not t2a_async_input`);
  if (f.format !== 'txt') throw invalidParams(`text_file_id ${f.file_id} is a zip archive; the emulator reads txt inputs only`);
  const text = (await emu.blobs.read(f.blob)).toString('utf8');
  const n = [...text].length;
  if (n >= MAX_FILE_TEXT) throw invalidParams(`text_file_id: the file's text must be under ${MAX_FILE_TEXT} characters (got ${n})`);
  return { text, limit: MAX_FILE_TEXT };
}

/** The `/v1/t2a_v2` body the task stands for (same voices, settings and rules). */
function t2aBody(body: AsyncBody, text: string): Record<string, unknown> {
  const { audio_sample_rate, ...audio } = (body.audio_setting ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { ...body, text, output_format: 'url', stream: false };
  delete out.text_file_id;
  out.audio_setting = { ...audio, ...(audio_sample_rate != null ? { sample_rate: audio_sample_rate } : {}) };
  return out;
}

export interface Created {
  task: AsyncTask;
  plan: SynthesisPlan;
}

export async function createTask(emu: Emulator, account: Account, body: AsyncBody, opts: { fail?: boolean }): Promise<Created> {
  const { text, limit } = await textOf(emu, account, body);
  const plan = planRequest(emu, account, t2aBody(body, text), { maxTextChars: limit });
  const synth = synthesizeStream(plan.input);
  checkOutputSize(plan, synth.durationMs);
  admit(emu, account, plan);
  const area = taskArea(emu);
  let taskId = numericId(emu, `${account.id}:tasks`);
  while (area.byId.has(taskId)) taskId = numericId(emu, `${account.id}:tasks`);
  const now = emu.clock.now();
  const task: AsyncTask = {
    task_id: taskId,
    account_id: account.id,
    file_id: newFileId(emu, account),
    created_at_ms: now,
    ready_at_ms: now + 1000 + Math.round(synth.durationMs / 10),
    state: opts.fail ? 'failed' : 'running',
    usage_characters: plan.usageCharacters,
    ...(opts.fail ? { note: 'synthesis cut by a fault' } : {}),
  };
  area.byId.set(taskId, task);
  emu.markDirty();
  if (!opts.fail) {
    void produce(emu, account, task, plan, synth).catch((err) => {
      emu.logger.error({ err }, 'async synthesis failed');
      task.state = 'failed';
      task.note = 'synthesis failed';
    });
  }
  return { task, plan };
}

/** Makes the audio and the tar, then files it as the task's output (visible from `ready_at_ms`). */
async function produce(emu: Emulator, account: Account, task: AsyncTask, plan: SynthesisPlan, synth: ReturnType<typeof synthesizeStream>): Promise<void> {
  const encoded = await encodeAudio(plan.format, synth, { sampleRate: plan.sampleRate, channels: plan.channels, bitrate: plan.bitrate });
  recordSignature(emu, plan, synth);
  // The audio length the result reports (what a decoder measures) sets when the task succeeds.
  task.ready_at_ms = task.created_at_ms + 1000 + Math.round(encoded.meta.durationMs / 10);
  const mtimeSec = Math.floor(task.ready_at_ms / 1000);
  const base = `${task.task_id}/content-${task.task_id}`;
  const extra = { audio_length: encoded.meta.durationMs, audio_sample_rate: encoded.meta.sampleRate, audio_size: encoded.meta.sizeBytes, bitrate: encoded.meta.bitrate, word_count: plan.wordCount };
  const tar = writeTar([
    { name: `${base}.${plan.format}`, data: encoded.bytes, mtimeSec },
    { name: `${base}.titles`, data: Buffer.from(JSON.stringify(subtitleSegments(synth))), mtimeSec },
    { name: `${base}.extra`, data: Buffer.from(JSON.stringify(extra)), mtimeSec },
  ]);
  if (taskArea(emu).byId.get(task.task_id) !== task) return; // reset while it was being made
  const blob = blobOf(account, task.file_id, 'tar');
  await emu.blobs.put(blob, tar);
  addFile(emu, {
    file_id: task.file_id,
    account_id: account.id,
    bytes: tar.length,
    created_at: mtimeSec,
    filename: `${task.file_id}.tar`,
    purpose: 't2a_async',
    format: 'tar',
    blob,
    ready_at_ms: task.ready_at_ms,
    expires_at_ms: task.ready_at_ms + ASYNC_OUTPUT_TTL_MS,
  });
  task.state = 'done';
  emu.markDirty();
}

/** A task of the account, counted against the 10 queries a second; 2013 naming task_id when unknown. */
export function queryTask(emu: Emulator, account: Account, taskId: number): { task: AsyncTask; status: TaskStatus } {
  if (!emu.limits.hit(emu.windowKey(account, 'speech:async-query'), 1000, QUERIES_PER_SECOND).allowed) {
    throw new SpeechError(1002, `rate limit exceeded: at most ${QUERIES_PER_SECOND} task queries a second`);
  }
  const task = taskArea(emu).byId.get(taskId);
  if (!task || task.account_id !== account.id) throw invalidParams(`task_id ${taskId} is not a task of this account`);
  return { task, status: statusOf(emu, task) };
}
