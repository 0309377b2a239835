/**
 * The four sockets the tapes record and replay, declared once: where each lives, which fields of the client's
 * messages never decide a match, which fields of the server's events are made fresh on replay, what its binary
 * frames hold, what each server frame is to the stream guard (an audio chunk, a result, a plain event) and how the
 * family says that something failed (the upstream could not be reached, no tape matched under `--replay-strict`).
 */
import { AUDIO_CHUNK, EVENT_CHUNK, FINAL_AUDIO_CHUNK, type FrameKind } from '../../core/stream/guard.js';
import type { AudioCarrier } from '../../core/stream/shaping.js';

export type SocketName = 'speech' | 'speech-bidi' | 'conversation' | 'conversation-text' | 'recognition';

export type FailureReason = 'miss' | 'upstream';

/** The ids a failure event of the speech family carries (the socket's session and trace). */
export interface FailureIds {
  sessionId: string;
  traceId: string;
}

export interface SocketKind {
  readonly name: SocketName;
  readonly service: 'speech' | 'platform';
  readonly path: string;
  /** Dotted paths of client message fields that never decide a match (`*` is any key). */
  readonly ignoreIn: readonly string[];
  /** Dotted paths of server event fields whose values are made fresh on replay (same shape, consistent within the socket). */
  readonly fresh: readonly string[];
  /** The extension of the file the client's binary frames are kept in, and of the server's. */
  readonly binaryExt: { readonly in: string; readonly out: string };
  /** How synthesized audio travels on it: the stream guard paces and damages it on replay. */
  readonly carrier?: AudioCarrier;
  /**
   * What a server frame is to the stream guard: an audio chunk (its hex or bytes), a result chunk, or null for an
   * event outside the stream (a greeting, an acknowledgement).
   */
  chunkOf(event: Record<string, unknown> | null, binary: boolean): FrameKind | null;
  /** Where a JSON server event carries its audio as hex (the speech sockets' `data.audio`). */
  readonly hexAudio?: readonly string[];
  /**
   * Server events that never wait for more than the client's first `n` messages (-1: none, the greeting), by name: a
   * client that sent everything at once while recording may wait for them before it speaks on replay.
   */
  readonly earliest?: Readonly<Record<string, number>>;
  /**
   * The family's failure: the event it speaks and the close. `miss`: no tape matches under `--replay-strict` (the
   * family's "not found", as the HTTP operations' 404); `upstream`: the upstream could not be reached.
   */
  failure(message: string, ids: FailureIds, why?: FailureReason): { event: Record<string, unknown>; close: number };
}

const speechFailure = (message: string, ids: FailureIds, connect: boolean) => ({
  event: {
    event: 'task_failed',
    session_id: ids.sessionId,
    ...(connect ? { connect_id: ids.sessionId } : {}),
    trace_id: ids.traceId,
    base_resp: { status_code: 1000, status_msg: `unknown error: ${message}` },
  },
  // Rule 12.3: an internal fault closes with 1011.
  close: 1011,
});

const speechChunk = (event: Record<string, unknown> | null): FrameKind | null => {
  if (!event || event.event !== 'task_continued') return null;
  const data = event.data as { audio?: unknown } | null | undefined;
  // The audio as the wire has it (hex), or as a tape keeps it (a file reference).
  if (!data || (typeof data.audio !== 'string' && !(data.audio && typeof data.audio === 'object'))) return null;
  return event.is_final === true ? FINAL_AUDIO_CHUNK : AUDIO_CHUNK;
};

const conversation = (name: SocketName, path: string): SocketKind => ({
  name,
  service: 'platform',
  path,
  ignoreIn: [],
  fresh: ['session_id'],
  binaryExt: { in: 'pcm', out: 'mp3' },
  carrier: 'binary',
  chunkOf: (_event, binary) => (binary ? AUDIO_CHUNK : null),
  earliest: { session_created: 0 },
  failure: (message, _ids, why) => ({ event: { type: 'error', code: why === 'miss' ? 'NOT_FOUND' : 'UNAVAILABLE', message }, close: 1011 }),
});

export const SOCKET_KINDS: readonly SocketKind[] = [
  {
    name: 'speech',
    service: 'speech',
    path: '/ws/v1/t2a_v2',
    ignoreIn: [],
    fresh: ['session_id', 'trace_id'],
    binaryExt: { in: 'bin', out: 'bin' },
    carrier: 'hex',
    hexAudio: ['data.audio'],
    chunkOf: speechChunk,
    earliest: { connected_success: -1, task_started: 0 },
    failure: (message, ids) => speechFailure(message, ids, false),
  },
  {
    name: 'speech-bidi',
    service: 'speech',
    path: '/ws/v1/t2a_v2_bidi',
    // A client may name its session (E5): a new name each run never decides a match; the events echo the live one.
    ignoreIn: ['session_id'],
    fresh: ['session_id', 'trace_id', 'connect_id'],
    binaryExt: { in: 'bin', out: 'bin' },
    carrier: 'hex',
    hexAudio: ['data.audio'],
    chunkOf: speechChunk,
    earliest: { connected_success: -1, task_started: 0 },
    failure: (message, ids) => speechFailure(message, ids, true),
  },
  conversation('conversation', '/api/v1/audio/conversation/stream'),
  conversation('conversation-text', '/api/v1/audio/conversation/stream-text'),
  {
    name: 'recognition',
    service: 'platform',
    path: '/v1/speech-to-text/stream',
    ignoreIn: [],
    fresh: [],
    binaryExt: { in: 'pcm', out: 'bin' },
    // Each result is a chunk of the stream, as on the emulator's own socket (cut_after_chunks counts them).
    chunkOf: (event) => (event && typeof event.type === 'string' && event.type !== 'error' ? EVENT_CHUNK : null),
    // A miss has the code the recognition family gives an HTTP 404 (its parameter error), as its HTTP operations do.
    failure: (message, _ids, why) => ({
      event: { type: 'error', text: '', asr_text: '', language: 'auto', confidence: 0, audio_duration_ms: 0, code: why === 'miss' ? 10001 : 10000, message },
      close: 1011,
    }),
  },
];

/** The socket kind of a path on a service, or undefined (not a socket the tapes know). */
export function socketKindOf(service: string, path: string): SocketKind | undefined {
  return SOCKET_KINDS.find((k) => k.service === service && k.path === path);
}

/** `GET /path`: the operation name a socket's tapes carry. */
export function socketOperation(kind: SocketKind): string {
  return `GET ${kind.path}`;
}
