/**
 * `--replay`: a socket answered from its tapes as the client speaks. Every candidate tape (its operation, an account
 * it answers) is followed message by message (match.ts); the server frames of the first one still in the running
 * leave once the client reached the point they answered, after the recorded delay (divided by `--replay-speed`),
 * with their volatile fields fresh (the same fresh value wherever the recorded one appears again, and a value the
 * client names itself, such as its own session id, echoed back). They go out through the socket's stream guard like
 * the emulator's own frames: `cut_after_chunks`, the pace and the audio faults apply to the recorded audio.
 *
 * When the client says something no tape said: under `--replay-strict` the family's error naming the nearest tapes
 * and what differs, then the close; otherwise the emulator's own socket takes over (a fall-through, fallthrough.ts).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { messageBytes } from '../../core/socket/protocol.js';
import { openSocketWire, type SocketWire } from '../../core/socket/wire.js';
import { AUDIO_CHUNK, type FrameKind } from '../../core/stream/guard.js';
import { isFileRef, type FileRef, type TapeStep } from '../format.js';
import { credentialValues, presentedSecrets, withoutSecrets } from '../request.js';
import type { TapeStore } from '../store.js';
import { failureIds, type SocketTapesHost } from './host.js';
import { socketOperation, type SocketKind } from './kinds.js';
import { Candidate, messageKey, reached, valuesAt, type AnchoredStep, type Position, type SocketScript } from './match.js';
import { fallThrough } from './fallthrough.js';
import { freshLike } from './fresh.js';

/** How many near misses a strict miss names. */
const NEAREST = 3;

export function replaySocket(host: SocketTapesHost, store: TapeStore, kind: SocketKind, scripts: SocketScript[], socket: WebSocket, req: FastifyRequest): void {
  new SocketReplay(host, store, kind, scripts, socket, req).start();
}

/** A frame waiting for its time. */
interface Due {
  step: TapeStep;
  at: number;
}

class SocketReplay {
  private readonly wire: SocketWire;
  private readonly candidates: Candidate[];
  private leader: Candidate;
  /** The leader's next server step not yet released. */
  private nextOut = 0;
  private live: Position = { item: -1, bytes: 0 };
  private inAudio = false;
  /** Every client frame so far, in order (a fall-through hands them to the emulator's own socket). */
  private readonly said: { data: Buffer; binary: boolean }[] = [];
  private readonly queue: Due[] = [];
  private lastDue = 0;
  /** The queue is being sent (set and cleared in the same turn as the loop's last look at it). */
  private pumping = false;
  private pumped: Promise<void> = Promise.resolve();
  /** Aborted on a miss: the frames already released stop waiting for their time. */
  private readonly hurry = new AbortController();
  /** The fresh fields' values of each frame sent, in order (a fall-through maps the emulator's own ids onto them). */
  private readonly sentIds: Map<string, string>[] = [];
  /** Recorded value → the value this socket uses instead (fresh ids, the client's own names). */
  private readonly ids = new Map<string, string>();
  /** The keys the client presented or sent so far (never compared: a tape holds the marker in their place). */
  private secrets: string[] | null = null;
  /** Set once no tape answers any more: the frames go to the fall-through (or nowhere after a strict miss). */
  private handOver: ((data: Buffer, binary: boolean) => void) | null = null;
  private over = false;
  /** No tape matches any more (the frames it already released still leave). */
  private missed = false;
  private readonly account: string;

  constructor(
    private readonly host: SocketTapesHost,
    private readonly store: TapeStore,
    private readonly kind: SocketKind,
    scripts: SocketScript[],
    private readonly socket: WebSocket,
    private readonly req: FastifyRequest,
  ) {
    this.account = req.ctx?.account?.id ?? 'anonymous';
    this.candidates = scripts.map((s) => new Candidate(s));
    this.leader = this.candidates[0]!;
    this.wire = openSocketWire(host.emu, socket, req, undefined, kind.carrier ? { carrier: kind.carrier, latency: 'none' } : undefined);
  }

  private get entry() {
    return this.req.ctx?.entry ?? null;
  }

  start(): void {
    this.noteLeader();
    this.socket.on('message', (data: RawData, binary: boolean) => this.onClient(messageBytes(data), binary));
    this.wire.onClose(() => {
      this.over = true;
      this.queue.length = 0;
      if (!this.handOver) this.host.used(this.leader.script.tape.id);
    });
    this.release(performance.now());
  }

  private noteLeader(): void {
    this.entry?.noteTape({ mode: 'replayed', id: this.leader.script.tape.id });
  }

  private onClient(data: Buffer, binary: boolean): void {
    this.said.push({ data, binary });
    if (this.handOver || this.missed) {
      if (binary) this.wire.recordIn(data.length, true);
      else {
        const text = data.toString('utf8');
        const value = parseJson(text) ?? text;
        this.wire.recordIn(data.length, false, eventName(value), value);
      }
      return this.handOver?.(data, binary);
    }
    if (this.over) return;
    const now = performance.now();
    const before = { ...this.live };
    let value: unknown;
    if (binary) {
      this.wire.recordIn(data.length, true);
      const index = this.inAudio ? this.live.item : this.live.item + 1;
      const from = this.inAudio ? this.live.bytes : 0;
      for (const c of this.candidates) c.audio(index, from, data);
      this.live = { item: index, bytes: from + data.length };
      this.inAudio = true;
    } else {
      const text = data.toString('utf8');
      value = parseJson(text) ?? text;
      this.wire.recordIn(data.length, false, eventName(value), value);
      if (this.inAudio) for (const c of this.candidates) c.audioEnds(this.live.item, this.live.bytes);
      this.inAudio = false;
      const index = this.live.item + 1;
      // Compared as a tape holds it: the client's keys (presented or inside the message) as the marker.
      const taped = this.asTaped(value);
      const key = messageKey(this.kind, taped);
      for (const c of this.candidates) c.message(index, key, taped);
      this.live = { item: index, bytes: 0 };
    }
    const running = this.candidates.filter((c) => !c.parted);
    if (running.length === 0) return this.miss();
    if (this.leader.parted) {
      // Another tape said the same so far: it answers from here (what the first one answered stays said).
      this.leader = running[0]!;
      this.nextOut = this.leader.script.server.findIndex((s) => !reached(s.anchor, before));
      if (this.nextOut < 0) this.nextOut = this.leader.script.server.length;
      this.noteLeader();
    }
    if (value !== undefined) this.echoClientNames(value);
    this.release(now);
  }

  /** The values a client names itself (ignored in matching) replace the recorded ones wherever the tape echoes them. */
  private echoClientNames(value: unknown): void {
    if (!this.kind.ignoreIn.length) return;
    const item = this.leader.script.items[this.live.item];
    if (item?.kind !== 'message') return;
    const recorded = valuesAt(item.value, this.kind.ignoreIn);
    for (const [path, live] of valuesAt(value, this.kind.ignoreIn)) {
      const was = recorded.get(path);
      if (was !== undefined) this.ids.set(was, live);
    }
  }

  /** Queues the leader's server steps the client has now reached, each at its recorded delay after now. */
  private release(now: number): void {
    const server = this.leader.script.server;
    let audio = false;
    while (this.nextOut < server.length && reached(server[this.nextOut]!.anchor, this.live)) {
      const s: AnchoredStep = server[this.nextOut++]!;
      const speed = this.host.replaySpeed;
      const at = Math.max(this.lastDue, now + (speed > 0 ? s.afterMs / speed : 0));
      this.lastDue = at;
      this.queue.push({ step: s.step, at });
      if ('frame' in s.step || ('event' in s.step && this.chunkKind(s.step.event, false)?.audio)) audio = true;
    }
    // A new answer with audio begins: the pace's `ttfa_ms` counts from here.
    if (audio && this.live.item >= 0) this.wire.beginAnswer();
    void this.pump();
  }

  private pump(): Promise<void> {
    if (!this.pumping) {
      this.pumping = true;
      this.pumped = this.drain();
    }
    return this.pumped;
  }

  /** Sends what is due, in order; `pumping` is cleared in the same turn as the loop's last look at the queue. */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length && !this.over) {
        const next = this.queue[0]!;
        const wait = next.at - performance.now();
        // After a miss, what the tape answered to the messages that matched leaves at once.
        if (wait > 1 && !this.hurry.signal.aborted)
          await sleep(wait, undefined, { signal: AbortSignal.any([this.wire.signal, this.hurry.signal]) }).catch(() => undefined);
        if (this.over) break;
        this.queue.shift();
        await this.send(next.step);
      }
    } finally {
      this.pumping = false;
    }
  }

  private chunkKind(event: unknown, binary: boolean): FrameKind | null {
    return this.kind.chunkOf(event && typeof event === 'object' ? (event as Record<string, unknown>) : null, binary);
  }

  /** Sends one recorded server step, fresh and through the guard. */
  private async send(step: TapeStep): Promise<void> {
    const wire = this.wire;
    if ('close' in step) {
      this.over = true;
      if (step.close.code === 1006) return wire.terminate();
      return wire.close(step.close.code === 1005 ? 1000 : step.close.code, step.close.reason);
    }
    if ('text' in step) {
      wire.relay(Buffer.from(step.text, 'utf8'), false);
      return void this.sentIds.push(new Map());
    }
    if ('frame' in step) {
      const bytes = await this.store.bytesOf(step.frame);
      this.sentIds.push(new Map());
      if (this.kind.carrier === 'binary') {
        // MP3 at the conversation's constant 64 kbps: the bytes say how much audio the frame carries.
        await wire.sendAudioFrame({ audio: bytes, ms: (bytes.length * 8000) / 64_000, render: (b: Buffer) => b }, 'audio', AUDIO_CHUNK);
      } else wire.relay(bytes, true);
      return;
    }
    const event = this.freshen(structuredClone(step.event));
    const record = event && typeof event === 'object' ? (event as Record<string, unknown>) : null;
    this.sentIds.push(valuesAt(event, this.kind.fresh));
    const name = record ? String(record.event ?? record.type ?? '') || undefined : undefined;
    const kind = this.chunkKind(event, false);
    const audioRef = kind?.audio ? this.hexAudioRef(record) : null;
    if (kind && audioRef) {
      const audio = await this.store.bytesOf(audioRef.ref);
      const frame = {
        audio,
        ms: audioMs(audio.length, record!),
        render: (bytes: Buffer, damage: { oddHex: boolean; inflate: number }) => {
          const out = structuredClone(record!);
          const hex = bytes.toString('hex');
          audioRef.set(out, damage.oddHex ? hex.slice(0, -1) : hex);
          if (damage.inflate !== 1) inflateInfo(out, damage.inflate);
          return out;
        },
      };
      await wire.sendAudioFrame(frame, name ?? 'audio', kind);
      return;
    }
    await this.inlineFiles(event);
    wire.sendJson(event as object, name, kind ?? undefined);
  }

  /** The hex audio reference of a speech event, and how to put the hex back in its place. */
  private hexAudioRef(event: Record<string, unknown> | null): { ref: FileRef; set: (event: Record<string, unknown>, hex: string) => void } | null {
    for (const path of this.kind.hexAudio ?? []) {
      const keys = path.split('.');
      let at: unknown = event;
      for (const k of keys.slice(0, -1)) at = at && typeof at === 'object' ? (at as Record<string, unknown>)[k] : undefined;
      const last = keys[keys.length - 1]!;
      const ref = at && typeof at === 'object' ? (at as Record<string, unknown>)[last] : undefined;
      if (!isFileRef(ref)) continue;
      return {
        ref,
        set: (out, hex) => {
          let o: unknown = out;
          for (const k of keys.slice(0, -1)) o = (o as Record<string, unknown>)[k];
          (o as Record<string, unknown>)[last] = hex;
        },
      };
    }
    return null;
  }

  /** Every file reference inside an event written back as it was (hex, base64). */
  private async inlineFiles(value: unknown): Promise<void> {
    if (!value || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value)) {
      if (isFileRef(v)) {
        const bytes = await this.store.bytesOf(v);
        (value as Record<string, unknown>)[k] =
          v.encoding === 'base64' ? bytes.toString('base64') : v.encoding === 'hex' ? bytes.toString('hex') : bytes.toString('utf8');
      } else await this.inlineFiles(v);
    }
  }

  /** The socket's fresh fields made fresh: a recorded value seen before gets the same fresh value. */
  private freshen(event: unknown): unknown {
    if (!event || typeof event !== 'object') return event;
    for (const path of this.kind.fresh) {
      const keys = path.split('.');
      let at: unknown = event;
      for (const k of keys.slice(0, -1)) at = at && typeof at === 'object' ? (at as Record<string, unknown>)[k] : undefined;
      const last = keys[keys.length - 1]!;
      if (!at || typeof at !== 'object') continue;
      const obj = at as Record<string, unknown>;
      const recorded = obj[last];
      if (typeof recorded !== 'string' || recorded === '') continue;
      let fresh = this.ids.get(recorded);
      if (fresh === undefined) {
        fresh = freshLike(recorded, this.host.emu.ids.stream(this.account));
        this.ids.set(recorded, fresh);
      }
      obj[last] = fresh;
    }
    return event;
  }

  /** A client's message with its keys (presented, or sent in any message so far) as the marker, as its tape holds it. */
  private asTaped(value: unknown): unknown {
    this.secrets ??= presentedSecrets(this.req.raw);
    credentialValues(value, this.secrets);
    return JSON.parse(withoutSecrets(JSON.stringify(value), this.secrets)) as unknown;
  }

  /** No tape says what the client said: the frames already released leave, then the strict error or the fall-through. */
  private miss(): void {
    this.missed = true;
    this.hurry.abort();
    const nearest = [...this.candidates]
      .sort((a, b) => b.agreed - a.agreed)
      .slice(0, NEAREST)
      .map((c) => ({ id: c.script.tape.id, differs: [c.parted ?? 'the client said more'] }));
    const message = `no tape matches ${socketOperation(this.kind)}; nearest: ${nearest.map((n) => `${n.id} (${n.differs[0]})`).join('; ')}`;
    this.entry?.noteTape({ mode: 'missed', nearest });
    void this.pump().then(() => {
      this.over = true;
      this.queue.length = 0;
      if (this.wire.closed) return;
      if (this.host.strict) {
        const failure = this.kind.failure(message, this.failureIds(), 'miss');
        this.wire.sendJson(failure.event, String(failure.event.event ?? failure.event.type));
        return this.wire.close(failure.close, 'no tape matches');
      }
      this.entry?.setNote("no tape matched: the emulator's own socket answered");
      this.handOver = fallThrough(this.host, this.kind, this.req, this.wire, { said: this.said, sentIds: this.sentIds });
    });
  }

  /** The ids a failure event carries: those this socket already spoke with, else new ones. */
  private failureIds() {
    const fresh = failureIds(this.host.emu, this.req);
    const spoken = this.sentIds.find((m) => m.has('session_id'));
    return { sessionId: spoken?.get('session_id') ?? fresh.sessionId, traceId: spoken?.get('trace_id') ?? fresh.traceId };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function eventName(value: unknown): string | undefined {
  if (!value || typeof value !== 'object') return 'invalid';
  const v = value as Record<string, unknown>;
  const name = typeof v.event === 'string' ? v.event : typeof v.type === 'string' ? v.type : 'is_final' in v ? 'is_final' : 'meta' in v ? 'meta' : undefined;
  return name?.slice(0, 40);
}

/** How many ms of audio a speech event's bytes carry, for the guard's pace: from its format's bit rate, or PCM's rate. */
function audioMs(bytes: number, event: Record<string, unknown>): number {
  const info = event.extra_info as { audio_format?: string; bitrate?: number; audio_sample_rate?: number; audio_channel?: number } | undefined;
  if (info?.audio_format === 'pcm' && info.audio_sample_rate) return (bytes / (2 * info.audio_sample_rate * (info.audio_channel ?? 1))) * 1000;
  const bitrate = info?.bitrate && info.bitrate > 0 ? info.bitrate : 128_000;
  return (bytes * 8000) / bitrate;
}

/** `extra_info_mismatch`: the final message claims more than it carries. */
function inflateInfo(event: Record<string, unknown>, by: number): void {
  const info = event.extra_info as Record<string, unknown> | undefined;
  if (!info) return;
  for (const key of ['audio_length', 'audio_size']) if (typeof info[key] === 'number') info[key] = Math.round((info[key] as number) * by);
}
