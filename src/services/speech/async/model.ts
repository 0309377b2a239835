/**
 * Async synthesis (rule 12.12). A task is `Processing` until the emulator clock has moved
 * 1,000 ms + audio length / 10 past its creation (and the audio is made), then `Success`; 9 h later
 * `Expired` with its file gone. `Failed` when the synthesis was cut by a fault. Output: a tar with the
 * audio, a `.titles` JSON of sentence segments and a `.extra` JSON.
 */
import { Readable } from 'node:stream';
import * as z from 'zod';
import { areaOf, checkWith, recordArea, type RecordArea } from '../../../core/state/areas.js';
import { reportedBitrate, synthesizeStreamSliced, type SynthStream, type AudioFormat, type AudioMeta } from '../../../audio/index.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator, StateArea } from '../../../core/emulator.js';
import { tarStream, type TarStreamEntry } from '../../../core/archive/tar.js';
import { readZip, type ZipEntry } from '../../../core/archive/zip.js';
import { invalidParams, SpeechError } from '../errors.js';
import { addFile, ASYNC_OUTPUT_TTL_MS, blobOf, findFile, newFileId } from '../files/model.js';
import { chargeRequest, checkOutputSize, planRequest, readRequest, recordSignature, subtitleSegments, type SynthesisPlan } from '../model.js';
import { ASYNC_OPUS_RATES, fileExtension, MODIFIABLE_FORMATS, OPUS_DEFAULT_RATE, oggSerialFor } from '../formats.js';
import { numericId } from '../reply.js';
import { synthesizeToBlob } from '../url-audio.js';
import type { AsyncBody } from './schema.js';

export const MAX_TEXT = 50_000;
export const MAX_FILE_TEXT = 1_000_000;
export const QUERIES_PER_SECOND = 10;
/**
 * Caps of one task (emulator rules where the spec is silent; docs/robustness.md). The 3 h cap per
 * text (MAX_AUDIO_SECONDS) holds for the task's texts together, a zip holds at most MAX_TASK_FILES
 * files, and the audio of the task at most MAX_TASK_OUTPUT_BYTES: a 338-byte zip must not ask for
 * hours of audio per file, nor a 6 MB zip for 65,535 results.
 */
export const MAX_TASK_AUDIO_SECONDS = 3 * 3600;
export const MAX_TASK_FILES = 1000;
export const MAX_TASK_OUTPUT_BYTES = 1024 * 1048576;

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

type TaskArea = RecordArea<number, AsyncTask>;

export function taskArea(emu: Emulator): TaskArea {
  return areaOf(emu, AREA, () =>
    recordArea<number, AsyncTask>({
      name: AREA,
      idOf: (t) => t.task_id,
      accountOf: (t) => t.account_id,
      record: checkWith(
        z.looseObject({
          task_id: z.number().int(),
          account_id: z.string().min(1),
          file_id: z.number().int(),
          created_at_ms: z.number(),
          ready_at_ms: z.number(),
          state: z.string(),
          usage_characters: z.number(),
          note: z.string().optional(),
        }),
      ),
      show: (t) => ({
        task_id: t.task_id,
        status: statusOf(emu, t),
        file_id: t.file_id,
        created_at_ms: t.created_at_ms,
        ready_at_ms: t.ready_at_ms,
        audio_ready: t.state === 'done',
        ...(t.note ? { note: t.note } : {}),
      }),
      // A task whose audio was being made when the emulator stopped will never finish.
      restore: (t) => (t.state === 'running' ? { ...t, state: 'failed', note: 'interrupted by a restart' } : t),
    }),
  );
}

export function statusOf(emu: Emulator, t: AsyncTask): TaskStatus {
  if (t.state === 'failed') return 'Failed';
  const now = emu.clock.now();
  if (t.state === 'running' || now < t.ready_at_ms) return 'Processing';
  return now >= t.ready_at_ms + ASYNC_OUTPUT_TTL_MS ? 'Expired' : 'Success';
}

/** One text of a task and where its three result files go inside the tar. */
interface Piece {
  /** Folder under `<task_id>/` ('' for a plain text or txt input). */
  folder: string;
  /** `content`, or a json input's `title` / `content` / `extra`. */
  field: string;
  text: string;
}

const JSON_FIELDS = ['title', 'content', 'extra'] as const;

/**
 * The result folder of a zip entry: its name without the extension, characters outside [A-Za-z0-9._-] folded
 * to `_`, and `.`/`..` segments resolved so the folder stays inside the task's folder of the tar (a member
 * named `x/../../escaped` would otherwise be written outside the folder a client extracts into). Null when
 * the name climbs above its root.
 */
export function folderOfEntry(name: string): string | null {
  const segments: string[] = [];
  for (const raw of name.replace(/\.(txt|json)$/i, '').split(/[/\\]+/)) {
    const segment = raw.replace(/[^A-Za-z0-9._-]+/g, '_');
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (!segments.length) return null;
      segments.pop();
    } else segments.push(segment);
  }
  return segments.join('/').slice(0, 100).replace(/\/+$/, '') || 'file';
}

/** A zip input: files of one type, txt or json; one folder per file (section 6.4). */
function piecesOfZip(fileId: number, bytes: Buffer): Piece[] {
  let entries: ZipEntry[];
  try {
    entries = readZip(bytes, 4 * MAX_FILE_TEXT);
  } catch (err) {
    throw invalidParams(`text_file_id ${fileId}: the zip cannot be read (${(err as Error).message})`);
  }
  if (!entries.length) throw invalidParams(`text_file_id ${fileId}: the zip holds no file`);
  if (entries.length > MAX_TASK_FILES)
    throw invalidParams(`text_file_id ${fileId}: the zip holds ${entries.length} files, over the emulator's limit of ${MAX_TASK_FILES} files per task`);
  const kinds = new Set(entries.map((e) => /\.(txt|json)$/i.exec(e.name)?.[1]?.toLowerCase() ?? 'other'));
  if (kinds.has('other') || kinds.size > 1) throw invalidParams(`text_file_id ${fileId}: the zip must hold files of one type, all .txt or all .json`);
  return entries.flatMap((e) => {
    const folder = folderOfEntry(e.name);
    if (folder === null) throw invalidParams(`text_file_id ${fileId}: the zip entry name ${JSON.stringify(e.name.slice(0, 200))} leaves its folder ("..")`);
    const text = e.data.toString('utf8');
    if (kinds.has('txt')) return [{ folder, field: 'content', text }];
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw invalidParams(`text_file_id ${fileId}: ${e.name} is not valid JSON`);
    }
    const obj = (doc && typeof doc === 'object' && !Array.isArray(doc) ? doc : {}) as Record<string, unknown>;
    const pieces = JSON_FIELDS.filter((f) => typeof obj[f] === 'string' && (obj[f] as string).trim() !== '').map((f) => ({
      folder,
      field: f,
      text: obj[f] as string,
    }));
    if (!pieces.length) throw invalidParams(`text_file_id ${fileId}: ${e.name} has no non-empty title, content or extra string`);
    return pieces;
  });
}

/** The texts of the task: `text`, or the account's text file (txt, or zip of txt/json); exactly one of them. */
async function piecesOf(emu: Emulator, account: Account, body: AsyncBody): Promise<{ pieces: Piece[]; limit: number }> {
  const hasText = body.text !== undefined && body.text !== null;
  const hasFile = body.text_file_id !== undefined && body.text_file_id !== null;
  if (hasText && hasFile) throw invalidParams('give either text or text_file_id, not both');
  if (!hasText && !hasFile) throw invalidParams('text or text_file_id is required');
  if (hasText) {
    const n = [...body.text!].length;
    if (n > MAX_TEXT) throw invalidParams(`text must be at most ${MAX_TEXT} characters (got ${n}); upload longer texts as a file and send text_file_id`);
    return { pieces: [{ folder: '', field: 'content', text: body.text! }], limit: MAX_TEXT + 1 };
  }
  const f = findFile(emu, account, body.text_file_id!, { field: 'text_file_id' });
  if (f.purpose !== 't2a_async_input') throw invalidParams(`text_file_id ${f.file_id} was uploaded with purpose ${f.purpose}, not t2a_async_input`);
  const bytes = await emu.blobs.read(f.blob);
  const pieces = f.format === 'zip' ? piecesOfZip(f.file_id, bytes) : [{ folder: '', field: 'content', text: bytes.toString('utf8') }];
  const n = pieces.reduce((sum, p) => sum + [...p.text].length, 0);
  if (n >= MAX_FILE_TEXT) throw invalidParams(`text_file_id: the file's text must be under ${MAX_FILE_TEXT} characters (got ${n})`);
  return { pieces, limit: MAX_FILE_TEXT };
}

/**
 * The `/v1/t2a_v2` body a piece stands for (same voices, settings and rules). Opus takes its rate
 * from the task's own rule (`opusRate`) instead of the HTTP one.
 */
function t2aBody(body: AsyncBody, text: string): Record<string, unknown> {
  const { audio_sample_rate, ...audio } = (body.audio_setting ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { ...body, text, output_format: 'url', stream: false };
  delete out.text_file_id;
  const rate = audio.format === 'opus' ? null : audio_sample_rate;
  out.audio_setting = { ...audio, ...(rate != null ? { sample_rate: rate } : {}) };
  return out;
}

/**
 * Opus on async (E12): 8000, 12000, 16000, 24000 or 48000 (24000 when absent); any other rate
 * leaves the task to fail (`unsupported`; planned at 24000, so every other rule still applies).
 */
function asyncOpusRate(body: AsyncBody): { opusRate?: number; unsupported?: string } {
  const audio = (body.audio_setting ?? {}) as { format?: unknown; audio_sample_rate?: number | null };
  if (audio.format !== 'opus') return {};
  const rate = audio.audio_sample_rate ?? OPUS_DEFAULT_RATE;
  if ((ASYNC_OPUS_RATES as readonly number[]).includes(rate)) return { opusRate: rate };
  return { opusRate: OPUS_DEFAULT_RATE, unsupported: `audio_sample_rate ${rate} is not supported for opus (use ${ASYNC_OPUS_RATES.join(', ')})` };
}

/** `voice_modify` on async only with mp3, wav or flac: else 2013 at creation (the newest async page). */
function checkVoiceModify(body: AsyncBody, format: AudioFormat): void {
  if ((body as { voice_modify?: unknown }).voice_modify == null || MODIFIABLE_FORMATS.includes(format)) return;
  throw invalidParams(`voice_modify applies only to mp3, wav and flac; audio_setting.format ${format} does not take it`);
}

interface Planned {
  piece: Piece;
  plan: SynthesisPlan;
  synth: SynthStream;
}

/** Plans every piece by the T2A rules; a rule broken inside a file names the file. */
async function planPieces(emu: Emulator, account: Account, body: AsyncBody, pieces: Piece[], limit: number, opusRate?: number): Promise<Planned[]> {
  const planned: Planned[] = [];
  // One after the other, each planned in slices (the speech engine speaks a piece whole): the loop stays free.
  for (const piece of pieces) {
    try {
      const plan = planRequest(emu, account, readRequest(t2aBody(body, piece.text)), {
        maxTextChars: limit,
        ...(opusRate !== undefined ? { sampleRate: opusRate } : {}),
      });
      const synth = await synthesizeStreamSliced(plan.input);
      checkOutputSize(plan, synth.durationMs);
      planned.push({ piece, plan, synth });
    } catch (err) {
      if (!(err instanceof SpeechError) || err.code !== 2013 || !piece.folder) throw err;
      throw new SpeechError(2013, err.message.replace(/^invalid params, /, `invalid params, text_file_id ${piece.folder} ${piece.field}: `));
    }
  }
  return planned;
}

/** The task's audio in all: at most MAX_TASK_AUDIO_SECONDS and about MAX_TASK_OUTPUT_BYTES (2013 naming the field). */
function checkTaskSize(planned: Planned[], field: string): void {
  const ms = planned.reduce((sum, p) => sum + p.synth.durationMs, 0);
  if (ms > MAX_TASK_AUDIO_SECONDS * 1000)
    throw invalidParams(
      `${field}: the task's audio would last ${Math.round(ms / 1000)} s in all, over the emulator's limit of ${MAX_TASK_AUDIO_SECONDS} s per task`,
    );
  const bytes = planned.reduce((sum, { plan, synth }) => {
    const bitrate = plan.format === 'mp3' ? plan.bitrate : reportedBitrate(plan.format, plan.sampleRate, plan.channels);
    return sum + (synth.durationMs / 1000) * (bitrate / 8);
  }, 0);
  if (bytes > MAX_TASK_OUTPUT_BYTES) {
    throw invalidParams(
      `audio_setting: the task's audio would be about ${Math.round(bytes / 1048576)} MB, over the emulator's limit of ${MAX_TASK_OUTPUT_BYTES / 1048576} MB per task; ask for a compressed format or a lower sample rate`,
    );
  }
}

export async function createTask(emu: Emulator, account: Account, body: AsyncBody, opts: { fail?: boolean }): Promise<AsyncTask> {
  const formats = asyncOpusRate(body);
  const { pieces, limit } = await piecesOf(emu, account, body);
  const planned = await planPieces(emu, account, body, pieces, limit, formats.opusRate);
  checkVoiceModify(body, planned[0]!.plan.format);
  checkTaskSize(planned, body.text_file_id != null ? 'text_file_id' : 'text');
  for (const p of planned) chargeRequest(emu, account, p.plan);
  for (const p of planned) p.plan.serial = oggSerialFor(emu, account, p.plan.format);
  const fail = opts.fail || formats.unsupported !== undefined;
  const area = taskArea(emu);
  let taskId = numericId(emu, `${account.id}:tasks`);
  while (area.byId.has(taskId)) taskId = numericId(emu, `${account.id}:tasks`);
  const now = emu.clock.now();
  const durationMs = planned.reduce((sum, p) => sum + p.synth.durationMs, 0);
  const task: AsyncTask = {
    task_id: taskId,
    account_id: account.id,
    file_id: newFileId(emu, account),
    created_at_ms: now,
    ready_at_ms: now + 1000 + Math.round(durationMs / 10),
    state: fail ? 'failed' : 'running',
    usage_characters: planned.reduce((sum, p) => sum + p.plan.usageCharacters, 0),
    ...(opts.fail ? { note: 'synthesis cut by a fault' } : formats.unsupported ? { note: formats.unsupported } : {}),
  };
  area.byId.set(taskId, task);
  emu.markDirty(AREA, account.id, taskId);
  if (!fail) {
    const making = produce(emu, account, task, planned).catch((err) => {
      emu.logger.error({ err }, 'async synthesis failed');
      task.state = 'failed';
      task.note = 'synthesis failed';
      emu.markDirty(AREA, task.account_id, task.task_id);
    });
    production.set(task, making);
    emu.clock.track(making);
  }
  return task;
}

/**
 * Makes the audio of every piece and the tar, then files it as the task's output (visible from
 * `ready_at_ms`). Each piece's audio is streamed to a part file as it is encoded, and the tar is
 * streamed from the parts: memory holds a chunk at a time, whatever the task's length.
 */
async function produce(emu: Emulator, account: Account, task: AsyncTask, planned: Planned[]): Promise<void> {
  const blob = blobOf(account, task.file_id, 'tar');
  const parts: string[] = [];
  try {
    const made: { piece: Piece; plan: SynthesisPlan; synth: Planned['synth']; meta: AudioMeta; part: string }[] = [];
    for (const { piece, plan, synth } of planned) {
      const part = `${blob}.part${parts.length}`;
      parts.push(part);
      const meta = await synthesizeToBlob(emu, part, plan, synth);
      recordSignature(emu, plan, synth);
      made.push({ piece, plan, synth, meta, part });
    }
    // The audio length the result reports (what a decoder measures) sets when the task succeeds.
    const audioMs = made.reduce((sum, m) => sum + m.meta.durationMs, 0);
    task.ready_at_ms = task.created_at_ms + 1000 + Math.round(audioMs / 10);
    const mtimeSec = Math.floor(task.ready_at_ms / 1000);
    const entries: TarStreamEntry[] = made.flatMap(({ piece, plan, synth, meta, part }) => {
      const base = `${task.task_id}/${piece.folder ? `${piece.folder}/` : ''}${piece.field}-${task.task_id}`;
      const extra = {
        audio_length: meta.durationMs,
        audio_sample_rate: meta.sampleRate,
        audio_size: meta.sizeBytes,
        bitrate: meta.bitrate,
        word_count: plan.wordCount,
      };
      const titles = Buffer.from(JSON.stringify(subtitleSegments(synth)));
      const extraBytes = Buffer.from(JSON.stringify(extra));
      return [
        { name: `${base}.${fileExtension(plan.format)}`, size: meta.sizeBytes, mtimeSec, data: () => emu.blobs.readStream(part) },
        { name: `${base}.titles`, size: titles.length, mtimeSec, data: titles },
        { name: `${base}.extra`, size: extraBytes.length, mtimeSec, data: extraBytes },
      ];
    });
    if (taskArea(emu).byId.get(task.task_id) !== task) return; // reset while it was being made
    const bytes = await emu.blobs.putStream(blob, Readable.from(tarStream(entries)), Number.MAX_SAFE_INTEGER);
    if (taskArea(emu).byId.get(task.task_id) !== task) {
      await emu.blobs.remove(blob);
      return;
    }
    addFile(emu, {
      file_id: task.file_id,
      account_id: account.id,
      bytes,
      created_at: mtimeSec,
      filename: `${task.file_id}.tar`,
      purpose: 't2a_async',
      format: 'tar',
      blob,
      ready_at_ms: task.ready_at_ms,
      expires_at_ms: task.ready_at_ms + ASYNC_OUTPUT_TTL_MS,
    });
    task.state = 'done';
    emu.markDirty(AREA, task.account_id, task.task_id);
  } finally {
    for (const part of parts) await emu.blobs.remove(part).catch(() => undefined);
  }
}

/** The audio being made for a task still running: a query that may find it due waits for it. */
const production = new WeakMap<AsyncTask, Promise<void>>();

/**
 * A task of the account, counted against the 10 queries a second; 2013 naming task_id when unknown.
 * A task whose audio is still being made when the clock already stands past its earliest ready time
 * (1 s after creation) waits for the audio, so its status is the one its time gives.
 */
export async function queryTask(emu: Emulator, account: Account, taskId: number): Promise<{ task: AsyncTask; status: TaskStatus }> {
  if (!emu.limits.hit(emu.windowKey(account, 'speech:async-query'), 1000, QUERIES_PER_SECOND).allowed) {
    throw new SpeechError(1002, `rate limit exceeded: at most ${QUERIES_PER_SECOND} task queries a second`);
  }
  const task = taskArea(emu).byId.get(taskId);
  if (!task || task.account_id !== account.id) throw invalidParams(`task_id ${taskId} is not a task of this account`);
  const making = production.get(task);
  if (task.state === 'running' && making && emu.clock.now() >= task.created_at_ms + 1000) await making;
  return { task, status: statusOf(emu, task) };
}
