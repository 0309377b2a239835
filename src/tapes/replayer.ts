/**
 * Replaying: a matched tape's answer, with what must be fresh made fresh (trace ids, ids of things, download links
 * as the emulator's own), through the same lifecycle as the emulator's answers. A stream's events leave at the
 * recorded pace (scaled by the replay speed) through the stream guard, so the fault fields apply to the real audio:
 * pacing (`rtf` by each chunk's share of the audio's length, pace.ts), `cut_after_chunks`, the audio faults.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AUDIO_CHUNK, EVENT_CHUNK, FINAL_AUDIO_CHUNK, FINAL_EVENT_CHUNK } from '../core/stream/guard.js';
import { guardStream } from '../core/stream/request-guard.js';
import { waitUntil } from '../core/stream/shaping.js';
import type { TapeOperation } from '../core/service.js';
import { internalize } from './body.js';
import { isFileRef, type FileRef, type Tape, type TapeRequest, type TapeStep } from './format.js';
import { IDENTITY_FIELDS, TRACE_HEADERS, type ReplayLinks } from './fresh.js';
import { audioHintOf, msPerByte } from './pace.js';
import { sseText, type RecordedSse } from './sse.js';
import type { TapesContext } from './context.js';

/** How long replayed download links stay valid (the emulator's own links' 24 hours). */
const LINK_TTL_MS = 24 * 3600 * 1000;

/** The emulator's own links for the tape's downloads, by the recorded URL (files put in its store once). */
async function linksOf(ctx: TapesContext, tape: Tape): Promise<ReplayLinks> {
  const byUrl = new Map<string, string>();
  const expiresAtMs = ctx.emu.clock.now() + LINK_TTL_MS;
  for (const d of tape.downloads) {
    const rel = `tapes/${d.file.$file}`;
    if ((await ctx.emu.blobs.size(rel)) === null) await ctx.emu.blobs.put(rel, await ctx.store.bytesOf(d.file));
    byUrl.set(d.url, ctx.emu.downloadUrl(tape.service, rel, expiresAtMs));
  }
  return { byUrl, expiresAtMs };
}

function freshHeaders(ctx: TapesContext, headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = TRACE_HEADERS.has(name) && value ? ctx.fresh.trace(value) : value;
  return out;
}

/** The value at a dotted path of a JSON value, or undefined. */
function valueAt(value: unknown, path: string[]): unknown {
  let v = value;
  for (const seg of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[seg];
  }
  return v;
}

/** A copy of a JSON value with the value at `path` (which exists) replaced; key order kept. */
function withValueAt(value: unknown, path: string[], next: unknown): unknown {
  if (path.length === 0) return next;
  const [seg, ...rest] = path as [string, ...string[]];
  const copy = (Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) }) as Record<string, unknown>;
  copy[seg] = withValueAt(copy[seg], rest, next);
  return copy;
}

/**
 * The answer with the client's values of the operation's `echo` fields where the recorded answer had the recorded ones.
 * A batch (JSON arrays of messages, answered in any order): each answer message's field takes the value the client
 * sent in the message whose recorded value it holds.
 */
function echoed(answer: unknown, declaration: TapeOperation, recorded: TapeRequest, arrived: TapeRequest): unknown {
  if (!declaration.echo?.length || !('json' in recorded.body) || !('json' in arrived.body)) return answer;
  const [was, now] = [recorded.body.json, arrived.body.json];
  if (Array.isArray(was) && Array.isArray(now) && Array.isArray(answer) && was.length === now.length)
    return answer.map((message: unknown) => {
      let out = message;
      for (const field of declaration.echo!) {
        const path = field.split('.');
        const at = was.findIndex((m) => valueAt(m, path) !== undefined && JSON.stringify(valueAt(m, path)) === JSON.stringify(valueAt(message, path)));
        const value = at === -1 ? undefined : valueAt(now[at], path);
        if (value !== undefined) out = withValueAt(out, path, value);
      }
      return out;
    });
  let out = answer;
  for (const field of declaration.echo) {
    const path = field.split('.');
    const was = valueAt(recorded.body.json, path);
    const now = valueAt(arrived.body.json, path);
    if (was !== undefined && now !== undefined && JSON.stringify(valueAt(out, path)) === JSON.stringify(was)) out = withValueAt(out, path, now);
  }
  return out;
}

/** `arrived`: the request as the tapes read it (what an `echo` field takes its value from). */
export async function replayTape(
  ctx: TapesContext,
  req: FastifyRequest,
  reply: FastifyReply,
  tape: Tape,
  declaration: TapeOperation,
  arrived: TapeRequest,
): Promise<void> {
  req.ctx.entry?.noteTape({ mode: 'replayed', id: tape.id });
  const identities = new Set([...IDENTITY_FIELDS, ...(declaration.fresh ?? [])]);
  const links = await linksOf(ctx, tape);
  const answer = tape.answer;
  const headers = freshHeaders(ctx, answer.headers);
  const refresh = async (value: unknown) => ctx.fresh.refresh(await internalize(value, ctx.store), identities, links);
  if (answer.body) {
    const body = answer.body;
    void reply.code(answer.status).headers(headers);
    if ('json' in body) return void reply.send(JSON.stringify(echoed(await refresh(body.json), declaration, tape.request, arrived)));
    if ('text' in body) return void reply.send(body.text);
    if ('file' in body) return void reply.send(await ctx.store.bytesOf(body.file));
    return void reply.send();
  }
  const stream = answer.stream!;
  if (stream.kind === 'sse') await replaySse(ctx, req, reply, tape, headers, stream.steps, refresh);
  else await replayChunks(ctx, req, reply, tape, headers, stream.steps);
}

/** Lets the chunks already written reach the client, then drops the connection (the cut of `cut_after_chunks`). */
async function flushThenCut(socket: Socket | null): Promise<void> {
  for (let i = 0; i < 200 && socket && socket.writableLength > 0 && !socket.destroyed; i++) await new Promise((r) => setTimeout(r, 5));
  socket?.destroy();
}

/**
 * Takes the reply over, sends its head at once (a paced stream may wait before its first event) and puts the
 * stream guard in front of it, so the replayed events meet the same faults and pacing as the emulator's own.
 */
function openGuardedStream<F extends string | Buffer>(
  ctx: TapesContext,
  req: FastifyRequest,
  reply: FastifyReply,
  tape: Tape,
  headers: Record<string, string>,
  carrier: 'hex' | 'binary',
) {
  const res = reply.raw;
  reply.hijack();
  res.writeHead(tape.answer.status, { ...(reply.getHeaders() as Record<string, string>), ...headers });
  res.flushHeaders();
  req.ctx.entry?.markStream(headers['content-type'] ?? '', { tape: true });
  const head = performance.now();
  const guard = guardStream<F>(
    req,
    {
      write: (frame) => (res.destroyed ? false : (res.write(frame), true)),
      cut: () => flushThenCut(res.socket),
      endForShutdown: () => void res.end(),
    },
    {
      status: tape.answer.status,
      closing: ctx.emu.closing,
      logger: ctx.emu.logger,
      carrier,
      latency: ctx.emu.config.latency,
      response: res,
      startedAt: head,
    },
  );
  return { res, head, guard };
}

/** When a step is due: its recorded time from the head, scaled (speed 0: now). */
function dueOf(ctx: TapesContext, head: number, step: TapeStep): number {
  const speed = ctx.options.speed;
  return speed === 0 ? 0 : head + step.t_ms / speed;
}

/** The path of the first audio (a hex or base64 file reference) inside an event, if it carries one. */
function audioPathOf(value: unknown, path: (string | number)[] = []): { path: (string | number)[]; ref: FileRef } | null {
  if (isFileRef(value)) return value.encoding === 'raw' ? null : { path, ref: value };
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = audioPathOf(v, [...path, i]);
      if (found) return found;
    }
  } else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) {
      const found = audioPathOf(v, [...path, k]);
      if (found) return found;
    }
  return null;
}

function setAt(value: unknown, path: (string | number)[], to: unknown): void {
  let at = value as Record<string | number, unknown>;
  for (const seg of path.slice(0, -1)) at = at[seg] as Record<string | number, unknown>;
  at[path[path.length - 1]!] = to;
}

/** `extra_info` claiming `factor` times its audio (the `extra_info_mismatch` fault), where the event has one. */
function inflate(event: RecordedSse, factor: number): void {
  const extra = (event.data as { extra_info?: Record<string, unknown> } | null)?.extra_info;
  if (factor === 1 || !extra) return;
  for (const k of ['audio_length', 'audio_size']) if (typeof extra[k] === 'number') extra[k] = Math.round((extra[k] as number) * factor);
}

/**
 * The `rtf` pace's measure of a replayed event stream: ms of audio per byte over its events' audio (the final event's
 * `extra_info.audio_length` when the audio's headers cannot be read).
 */
async function sseMsPerByte(ctx: TapesContext, tape: Tape, events: Extract<TapeStep, { event: unknown }>[]): Promise<number> {
  const chunks: Buffer[] = [];
  let stated: number | undefined;
  for (const step of events) {
    const recorded = step.event as RecordedSse;
    const audio = recorded.text === undefined ? audioPathOf(recorded.data) : null;
    if (audio) chunks.push(await ctx.store.bytesOf(audio.ref));
    const length = (recorded.data as { extra_info?: { audio_length?: unknown } } | null)?.extra_info?.audio_length;
    if (typeof length === 'number') stated = length;
  }
  return msPerByte(chunks, audioHintOf(tape), stated);
}

async function replaySse(
  ctx: TapesContext,
  req: FastifyRequest,
  reply: FastifyReply,
  tape: Tape,
  headers: Record<string, string>,
  steps: TapeStep[],
  refresh: (v: unknown) => Promise<unknown>,
): Promise<void> {
  const { res, head, guard } = openGuardedStream<string>(ctx, req, reply, tape, headers, 'hex');
  const out = steps.filter((s): s is Extract<TapeStep, { event: unknown }> => s.dir === 'out' && 'event' in s);
  try {
    const rate = guard.shape.rtf ? await sseMsPerByte(ctx, tape, out) : 0;
    for (const [i, step] of out.entries()) {
      await waitUntil(dueOf(ctx, head, step), 0, guard.gone);
      const recorded = step.event as RecordedSse;
      const final = i === out.length - 1;
      const audio = recorded.text === undefined ? audioPathOf(recorded.data) : null;
      if (!audio) {
        const event = { ...recorded, data: await refresh(recorded.data) } as RecordedSse;
        if (!(await guard.send(sseText(event), final ? FINAL_EVENT_CHUNK : EVENT_CHUNK))) return;
        continue;
      }
      // The audio goes through the guard's audio path: its faults change the real audio, then the event is written again.
      const bytes = await ctx.store.bytesOf(audio.ref);
      const data = await refresh(recorded.data);
      const frame = {
        audio: bytes,
        ms: bytes.length * rate,
        render: (a: Buffer, d: { oddHex: boolean; inflate: number }) => {
          const text = audio.ref.encoding === 'hex' ? a.toString('hex') : a.toString('base64');
          const copy = { ...recorded, data: structuredClone(data) } as RecordedSse;
          setAt(copy.data, audio.path, d.oddHex ? text.slice(0, -1) : text);
          inflate(copy, d.inflate);
          return sseText(copy);
        },
      };
      if (!(await guard.sendAudio(frame, final ? FINAL_AUDIO_CHUNK : AUDIO_CHUNK))) return;
    }
    await guard.end('done');
    res.end();
  } catch (err) {
    if (guard.ended) return;
    await guard.end('left');
    if (!res.destroyed) ctx.emu.logger.error({ err }, 'tapes: a replayed stream failed');
    res.destroy();
  }
}

async function replayChunks(
  ctx: TapesContext,
  req: FastifyRequest,
  reply: FastifyReply,
  tape: Tape,
  headers: Record<string, string>,
  steps: TapeStep[],
): Promise<void> {
  const { res, head, guard } = openGuardedStream<Buffer>(ctx, req, reply, tape, headers, 'binary');
  const frames = steps.filter((s): s is Extract<TapeStep, { frame: FileRef }> => s.dir === 'out' && 'frame' in s);
  try {
    const rate = guard.shape.rtf ? await msPerByte(await Promise.all(frames.map((f) => ctx.store.bytesOf(f.frame))), audioHintOf(tape)) : 0;
    for (const [i, step] of frames.entries()) {
      await waitUntil(dueOf(ctx, head, step), 0, guard.gone);
      const bytes = await ctx.store.bytesOf(step.frame);
      const kind = i === frames.length - 1 ? FINAL_AUDIO_CHUNK : AUDIO_CHUNK;
      if (!(await guard.sendAudio({ audio: bytes, ms: bytes.length * rate, render: (a: Buffer) => a }, kind))) return;
    }
    await guard.end('done');
    res.end();
  } catch (err) {
    if (guard.ended) return;
    await guard.end('left');
    if (!res.destroyed) ctx.emu.logger.error({ err }, 'tapes: a replayed stream failed');
    res.destroy();
  }
}
