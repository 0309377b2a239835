/**
 * One journal entry: the class that is the entry (its declared type is the object the journal holds)
 * and the methods that change it. Its lazily summarized request and response parts are
 * core/journal/entry-parts.ts; the bounded record of entries is core/journal/journal.ts.
 */
import { FaultRecord } from './fault.js';
import type { FaultField } from '../faults/faults.js';
import { StreamRecord } from './stream.js';
import type { DeliveryRecord } from './delivery.js';
import { JournalResponse, type JournalRequest, type ValueSummarizer } from './entry-parts.js';

export { JournalRequest } from './entry-parts.js';

export interface WsFrameSummary {
  dir: 'in' | 'out';
  type: 'text' | 'binary' | 'close';
  size: number;
  event?: string;
  at_ms: number;
  /** A text frame's JSON (audio fields replaced by their size), or its text when it is not JSON. */
  content?: unknown;
  /** The content was cut (over the per-frame bound) or left out (over the entry's bound). */
  truncated?: true;
}

/** What a room connection's entry tells: the room, the participant, its tracks and how it left. */
export interface RoomRecord {
  room_name: string;
  identity: string;
  participant_sid: string;
  tracks_published: { sid: string; name: string; source: string }[];
  tracks_subscribed: { sid: string; participant: string }[];
  /** LiveKit's DisconnectReason name (ROOM_DELETED, DUPLICATE_IDENTITY, CLIENT_INITIATED…); null while connected. */
  disconnect_reason: string | null;
}

/**
 * The listeners, by name. core knows none: each service adds its own here (`declare module`, beside its registration,
 * which declares them: core/service.ts).
 */
export interface Listeners {}

/** The listener a request reached, by the name its service declares. */
export type EntryListener = keyof Listeners & string;

/** A log line carries at most this many characters of an answer's message. */
export const LOGGED_MESSAGE_MAX = 160;

/** One line, at most LOGGED_MESSAGE_MAX characters (a longer one ends with `…`). */
function boundedMessage(message: string): string {
  const line = message.replace(/[\r\n\t]+/g, ' ');
  return line.length <= LOGGED_MESSAGE_MAX ? line : `${line.slice(0, LOGGED_MESSAGE_MAX - 1)}…`;
}

/** What the tapes did with a request (JournalEntry.tape). */
export interface TapeRecord {
  mode: 'replayed' | 'forwarded' | 'missed';
  /** The tape that answered, or the one the exchange was recorded into. */
  id?: string;
  /** Where it was forwarded. */
  upstream?: string;
  /** Whether the exchange was written as a tape (false: the upstream failed, or the write did). */
  recorded?: boolean;
  /** Why no tape was written, in words. */
  problem?: string;
  /** A miss: the nearest tapes and the fields that differ. */
  nearest?: { id: string; differs: string[] }[];
}

/** What a new entry is made of; the journal gives it its id. */
export interface EntryFields {
  at_ms: number;
  service: 'speech' | 'platform';
  /** The listener that served it; its service when not given. */
  listener?: EntryListener;
  method: string;
  path: string;
  account: string | null;
  accountId?: string;
  request: JournalRequest;
  note?: string;
}

/** Frames an entry keeps: the first FRAME_HEAD and the last FRAME_TAIL (`ws_frames_total` counts all). */
export const FRAME_HEAD = 100;
export const FRAME_TAIL = 50;

/**
 * One request as the journal keeps it. Routes and transports change it only through its methods; the
 * journal itself sets the id and the kept-audio links. The fields every entry has are made in the
 * constructor, so all entries share one shape (this runs on every request).
 */
export class JournalEntry {
  id = '';
  at_ms: number;
  service: 'speech' | 'platform';
  listener: EntryListener;
  method: string;
  path: string;
  status: number | null = null;
  account: string | null;
  duration_ms: number | null = null;
  request: JournalRequest;
  readonly response = new JournalResponse();
  note: string | undefined;
  /** Internal: matched by the control plane's `account` filter, never serialized. */
  accountId: string | undefined;
  // Made by the first chunk, frame, fault or kept audio only: most requests have none (they stay out of the answer's JSON).
  /** The fault injected into this request: its origin and what it did (core/journal/fault.ts). */
  declare fault?: FaultRecord;
  declare chunks?: number;
  /** A streamed answer's bytes and its first and last events without their audio (core/journal/stream.ts). */
  declare stream?: StreamRecord;
  /** A stream of synthesized audio's delivery figures: first audio, real-time factor, stalls, overrun (core/journal/delivery.ts). */
  declare delivery?: DeliveryRecord;
  declare ws_frames?: WsFrameSummary[];
  declare ws_frames_total?: number;
  /** A room connection (the platform's `/rtc`): who joined which room, the tracks, how it ended. */
  declare room?: RoomRecord;
  /** Text frames whose content was left out: the entry's bound on frame contents was reached. */
  declare ws_frames_truncated?: true;
  /** Bytes of frame contents kept (internal: the journal's bound in bytes reads it). */
  declare frameBytes?: number;
  /** Audio the client streamed over a socket, kept for download as WAV (the URL is on the control plane). */
  declare client_audio?: { bytes: number; sample_rate: number; truncated: boolean; url: string };
  /**
   * Tapes (docs/tapes.md): `forwarded` to an upstream (and `recorded` into `id`, unless the upstream failed), or
   * `replayed` from the tape `id`, or `missed` (no tape matched: `nearest` names the closest ones).
   */
  declare tape?: TapeRecord;
  /** Audio the answer carried inside its body (hex), to listen to again (the URL is on the control plane). */
  declare answer_audio?: { bytes: number; format: string; sample_rate: number; channels: number; url: string };

  /** Positional, not an object of fields: this runs on every request (see `EntryFields` for the names). */
  constructor(
    at_ms: number,
    service: 'speech' | 'platform',
    listener: EntryListener,
    method: string,
    path: string,
    account: string | null,
    accountId: string | undefined,
    request: JournalRequest,
    note: string | undefined,
  ) {
    this.at_ms = at_ms;
    this.service = service;
    this.listener = listener;
    this.method = method;
    this.path = path;
    this.account = account;
    this.accountId = accountId;
    this.request = request;
    this.note = note;
  }

  static of(fields: EntryFields): JournalEntry {
    return new JournalEntry(
      fields.at_ms,
      fields.service,
      fields.listener ?? fields.service,
      fields.method,
      fields.path,
      fields.account,
      fields.accountId,
      fields.request,
      fields.note,
    );
  }

  /** Names the account of a key found after the headers (e.g. /mcp `arguments.apiKey`). */
  setAccount(label: string, id: string): void {
    this.account = label;
    this.accountId = id;
  }

  /** The spec code of the answer, as its renderer named it. */
  setCode(code: number, message?: string): void {
    this.response.code = code;
    if (message !== undefined) this.response.message = boundedMessage(message);
  }

  /** An answer the route writes itself as a stream (hijacked): its content type and first facts. */
  markStream(contentType: string, summary: Record<string, unknown>): void {
    this.response.content_type = contentType;
    this.response.setSummary({ stream: true, ...summary });
  }

  /** What the answer was, as the lifecycle saw it leave: its content type, and a summary when there is one. */
  describeAnswer(contentType: string | undefined, summary?: unknown): void {
    this.response.content_type = contentType;
    if (summary !== undefined) this.response.setSummary(summary);
  }

  /** A JSON answer kept as text, summarized by `summarize` when first read. */
  keepJsonAnswer(contentType: string | undefined, payload: string, summarize: ValueSummarizer<string>): void {
    this.response.content_type = contentType;
    this.response.keepPayload(payload, summarize);
  }

  /** Facts of a room connection, merged into its `room` record as they happen. */
  noteRoom(facts: Partial<RoomRecord>): void {
    this.room = {
      ...(this.room ?? { room_name: '', identity: '', participant_sid: '', tracks_published: [], tracks_subscribed: [], disconnect_reason: null }),
      ...facts,
    };
  }

  /** What the tapes did with this request (replayed, forwarded, recorded), merged into what was noted before. */
  noteTape(record: Partial<TapeRecord>): void {
    this.tape = { mode: 'forwarded', ...this.tape, ...record };
  }

  /** A note on what happened to the request (client left, shutdown, a fault, an id worth finding). */
  setNote(note: string): void {
    this.note = note;
  }

  /**
   * One streamed chunk (SSE event, audio chunk, binary frame). An SSE event (text) or an audio chunk
   * (bytes) also counts its bytes, and the first and last events are kept without their audio; a
   * socket's frames are kept as frames instead (`recordFrame`).
   */
  countChunk(frame?: unknown, final?: boolean): void {
    this.chunks = (this.chunks ?? 0) + 1;
    if (typeof frame === 'string' || Buffer.isBuffer(frame)) (this.stream ??= new StreamRecord()).add(frame, final === true);
  }

  /** The delivery figures of the entry's audio stream, kept by its stream guard (shown once its first audio left). */
  noteDelivery(record: DeliveryRecord): void {
    this.delivery = record;
  }

  /** The fault injected into the request (the lifecycle records it when the request arrives). */
  setFault(fault: FaultRecord): void {
    this.fault = fault;
  }

  /** `cut_after_chunks` dropped the connection after this many chunks (noted on the request's fault). */
  noteCut(chunks: number): void {
    this.fault?.noteCut(chunks);
  }

  /**
   * An account's standing stream faults shape this request's stream: witnessed as a fault of origin
   * `account` with those fields (unless the request brought its own fault, which stays its origin).
   */
  noteAccountFaults(fields: Record<string, number>): void {
    if (this.fault) return;
    this.fault = new FaultRecord('account', fields, new Set(Object.keys(fields) as FaultField[]));
  }

  /**
   * Audio faults a stream guard applied and a paced first audio: on the request's fault, or on a fault
   * of origin `account` made for them (an account's standing stream faults come with no request fault).
   */
  noteStreamFaults(applied: readonly string[], firstAudioMs: number | undefined): void {
    if (!this.fault && !applied.length) return;
    (this.fault ??= new FaultRecord('account', {}, new Set())).noteAudio(applied, firstAudioMs);
  }

  /** What the socket's session says of itself (the speech sockets' task and its settings), as the answer's summary. */
  setAnswerSummary(summary: unknown): void {
    this.response.setSummary(summary);
  }

  /**
   * What a route that reads its body as a stream (a multipart form) found in it, in place of the size
   * and content type the pipeline noted before the route ran.
   */
  replaceRequestBody(summary: unknown): void {
    this.request.replaceBody(summary);
  }

  /**
   * Keeps a WebSocket frame: the first FRAME_HEAD and the last FRAME_TAIL of them, and the total count.
   * Answers the bytes of frame content this added to the entry (a frame pushed out of the middle gives
   * its bytes back, so the answer may be negative).
   */
  recordFrame(frame: WsFrameSummary, contentBytes = 0): number {
    const frames = (this.ws_frames ??= []);
    this.ws_frames_total = (this.ws_frames_total ?? 0) + 1;
    if (contentBytes) (frame as { [CONTENT_BYTES]?: number })[CONTENT_BYTES] = contentBytes;
    let added = contentBytes;
    if (frames.length >= FRAME_HEAD + FRAME_TAIL) added -= contentSize(frames.splice(FRAME_HEAD, 1)[0]!);
    frames.push(frame);
    this.frameBytes = (this.frameBytes ?? 0) + added;
    return added;
  }

  /** Frame contents leave the entry (the journal is over its bound in bytes): the frames stay, by size. */
  dropFrameContents(): number {
    const freed = this.frameBytes ?? 0;
    for (const frame of this.ws_frames ?? []) {
      if (frame.content === undefined) continue;
      delete frame.content;
      frame.truncated = true;
    }
    this.frameBytes = 0;
    if (freed) this.ws_frames_truncated = true;
    return freed;
  }

  /** A streamed answer still being written. */
  get streaming(): boolean {
    return this.status === null && (this.response.summary as { stream?: unknown } | undefined)?.stream === true;
  }

  /** The answer ended (or the socket closed): its status, unless one was set before the upgrade ended, and its duration. */
  finish(status: number, durationMs: number): void {
    if (this.status === null || this.status === 101) this.status = status;
    this.duration_ms = durationMs;
    // A stream cut short holds its last event as sent: summarized now, so no finished entry holds a frame.
    this.stream?.settle();
  }
}

/** The bytes of content a kept frame holds, measured when it was recorded (a symbol: never serialized). */
export const CONTENT_BYTES = Symbol('content bytes');

function contentSize(frame: WsFrameSummary): number {
  return frame.content === undefined ? 0 : ((frame as { [CONTENT_BYTES]?: number })[CONTENT_BYTES] ?? 0);
}

/** The spec's own code of an answer: `base_resp.status_code` (speech) or `error_code` (platform); '' if none. */
function specCodeOf(summary: unknown): string {
  if (typeof summary !== 'object' || summary === null) return '';
  const s = summary as { base_resp?: { status_code?: unknown }; error_code?: unknown };
  const code = s.base_resp?.status_code ?? s.error_code;
  return typeof code === 'number' || typeof code === 'string' ? String(code) : '';
}

/**
 * The spec code of an entry's answer, the one reading of it (journal view, verify, metrics, inspector):
 * the code its renderer named (known also for answers too large to summarize), else the one its summary
 * shows; undefined when the answer has none (an answer still being written, audio, a socket).
 */
export function entryCode(entry: JournalEntry): number | undefined {
  const named = entry.response.code;
  if (named !== undefined) return named;
  const code = specCodeOf(entry.response.summary);
  return code === '' || !Number.isFinite(Number(code)) ? undefined : Number(code);
}
