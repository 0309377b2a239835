/**
 * The one registry of fault fields. Every other list of them reads this one: the fault schema (the
 * `X-Emulator-Fault` header, the control plane's rules, an account's standing `stream_faults`), the
 * stream guard's choice of the fields it takes (core/stream/shaping.ts), the inspector's fault form and
 * its reading of a journal entry's fault (the module src/control/inspector/fault-fields.js), the docs'
 * table (docs/control-plane.md) — both written by scripts/fault-fields.ts and checked against it by
 * test/unit/fault-fields.test.ts — `GET /_emulator/faults/fields`, and the published client's types
 * (held to it by test/client/types.test.ts).
 *
 * A new fault field is one entry here plus its behaviour: an `answer` field where the endpoint (or
 * the lifecycle, or `admit()`) takes it with `takeFault`; a `stream` field in the stream guard
 * (core/stream/guard.ts `sendAudio`, its rules in core/stream/shaping.ts) or the sender it asks.
 */

/** Where a field acts: on the answer as a whole (`answer`), or inside a stream of synthesized audio (`stream`). */
export type FaultStage = 'answer' | 'stream';

/** A stream field's kind: its delivery's pace (wall time) or damage inside its audio. */
export type StreamGroup = 'pace' | 'audio';

/** Where a stream's sender can apply faults: `hex` transports carry audio as hex text (T2A, speech sockets). */
export type AudioCarrier = 'hex' | 'binary';

export interface FaultFieldSpec {
  readonly stage: FaultStage;
  /** Stream fields only: pace or audio damage. */
  readonly group?: StreamGroup;
  /** `decimal` takes a fraction (`rtf=1.5`); every other field is an integer. */
  readonly type: 'integer' | 'decimal';
  readonly min?: number;
  /** `min` is exclusive (a value must be above it). */
  readonly minExclusive?: boolean;
  readonly max?: number;
  /** Stream fields only: the carriers that can express it (absent: both). */
  readonly carriers?: readonly AudioCarrier[];
  /** The values it takes, in words (the inspector's form says this when a value is wrong). */
  readonly values: string;
  /** Where it applies: the transports and families that express it. */
  readonly appliesTo: string;
  /** What it does. */
  readonly does: string;
  /** A value to show as an example. */
  readonly example: string;
}

const STREAMS = 'streams of synthesized audio: T2A `stream: true`, the speech sockets, platform `/v1/text-to-speech/stream`, the conversation sockets';
const HEX_STREAMS = 'hex audio streams only: T2A `stream: true` and the speech sockets';

/** The fields, in the order a directive is checked and shown. */
export const FAULT_FIELDS = {
  code: {
    stage: 'answer',
    type: 'integer',
    values: 'a spec error code, like 1002',
    appliesTo: 'every endpoint and socket, before its key is checked',
    does: 'The endpoint answers its own spec error N in its own shape.',
    example: '1002',
  },
  status: {
    stage: 'answer',
    type: 'integer',
    min: 100,
    max: 599,
    values: 'an HTTP status from 100 to 599',
    appliesTo: 'every HTTP endpoint',
    does: "HTTP N with the endpoint's error shape.",
    example: '429',
  },
  delay_ms: {
    stage: 'answer',
    type: 'integer',
    min: 0,
    max: 600_000,
    values: 'milliseconds from 0 to 600000',
    appliesTo: 'every request',
    does: 'The request waits N ms (wall time) before the endpoint reads it.',
    example: '500',
  },
  cut_after_chunks: {
    stage: 'answer',
    type: 'integer',
    min: 0,
    values: 'a number of chunks, 0 or more',
    appliesTo: 'every streamed answer (server-sent events, chunked audio, WebSockets); an async T2A task fails',
    does: 'A streaming answer sends N chunks, then the connection is destroyed without a clean end.',
    example: '3',
  },
  close_ws: {
    stage: 'answer',
    type: 'integer',
    min: 1000,
    max: 4999,
    values: 'a WebSocket close code from 1000 to 4999',
    appliesTo: 'every WebSocket; platform agent and call sessions end abnormally',
    does: 'The WebSocket is closed with code N.',
    example: '1011',
  },
  ttfa_ms: {
    stage: 'stream',
    group: 'pace',
    type: 'integer',
    min: 0,
    max: 600_000,
    values: 'milliseconds from 0 to 600000',
    appliesTo: STREAMS,
    does: 'The first audio leaves no sooner than N ms after the answer began.',
    example: '300',
  },
  rtf: {
    stage: 'stream',
    group: 'pace',
    type: 'decimal',
    min: 0,
    minExclusive: true,
    max: 1000,
    values: 'a number above 0 and up to 1000, like 1.5',
    appliesTo: STREAMS,
    does: 'Audio is delivered no faster than R seconds of audio per wall-clock second (1: real time).',
    example: '1',
  },
  jitter_ms: {
    stage: 'stream',
    group: 'pace',
    type: 'integer',
    min: 0,
    max: 60_000,
    values: 'milliseconds from 0 to 60000',
    appliesTo: STREAMS,
    does: "Each chunk's send time moves by a seeded amount within ±N ms, never reordering.",
    example: '20',
  },
  stall_ms: {
    stage: 'stream',
    group: 'pace',
    type: 'integer',
    min: 0,
    max: 600_000,
    values: 'milliseconds from 0 to 600000',
    appliesTo: STREAMS,
    does: 'One pause of N ms once `stall_at_ms` of audio were sent.',
    example: '2000',
  },
  stall_at_ms: {
    stage: 'stream',
    group: 'pace',
    type: 'integer',
    min: 0,
    values: 'milliseconds of audio, 0 or more',
    appliesTo: STREAMS,
    does: 'Where `stall_ms` pauses, in ms of audio sent (default 0: before the first audio).',
    example: '1000',
  },
  drop_final: {
    stage: 'stream',
    group: 'audio',
    type: 'integer',
    min: 0,
    max: 1,
    carriers: ['hex'],
    values: '0 or 1',
    appliesTo: HEX_STREAMS,
    does: 'The stream ends cleanly without its final event (no `extra_info`, no `task_finished`).',
    example: '1',
  },
  duplicate_chunk: {
    stage: 'stream',
    group: 'audio',
    type: 'integer',
    min: 1,
    values: 'a chunk number, 1 or more',
    appliesTo: STREAMS,
    does: 'Audio chunk N is sent twice.',
    example: '2',
  },
  hex_odd: {
    stage: 'stream',
    group: 'audio',
    type: 'integer',
    min: 1,
    carriers: ['hex'],
    values: 'a chunk number, 1 or more',
    appliesTo: HEX_STREAMS,
    does: "Chunk N's hex audio loses its last character (odd length).",
    example: '2',
  },
  split_frame: {
    stage: 'stream',
    group: 'audio',
    type: 'integer',
    min: 0,
    max: 1,
    values: '0 or 1',
    appliesTo: STREAMS,
    does: 'Chunk boundaries fall inside audio frames; the chunks joined are the same bytes.',
    example: '1',
  },
  gap_ms: {
    stage: 'stream',
    group: 'audio',
    type: 'integer',
    min: 0,
    max: 600_000,
    values: 'milliseconds from 0 to 600000',
    appliesTo: STREAMS,
    does: 'N ms of digital silence inserted at `gap_at_ms` of audio; reported durations grow with it.',
    example: '1500',
  },
  gap_at_ms: {
    stage: 'stream',
    group: 'audio',
    type: 'integer',
    min: 0,
    values: 'milliseconds of audio, 0 or more',
    appliesTo: STREAMS,
    does: 'Where `gap_ms` inserts its silence, in ms of audio (default 0).',
    example: '500',
  },
  corrupt_bytes: {
    stage: 'stream',
    group: 'audio',
    type: 'integer',
    min: 0,
    max: 100_000,
    values: 'a number of bytes from 0 to 100000',
    appliesTo: STREAMS,
    does: 'Up to N seeded bytes flipped inside the audio after the first chunk, frame syncs spared.',
    example: '16',
  },
  extra_info_mismatch: {
    stage: 'stream',
    group: 'audio',
    type: 'integer',
    min: 0,
    max: 1,
    carriers: ['hex'],
    values: '0 or 1',
    appliesTo: HEX_STREAMS,
    does: 'The final `extra_info` claims an `audio_length` and `audio_size` 10 % larger than the audio sent.',
    example: '1',
  },
} as const satisfies Record<string, FaultFieldSpec>;

export type FaultField = keyof typeof FAULT_FIELDS;
type StageOf<K extends FaultField> = (typeof FAULT_FIELDS)[K]['stage'];
/** The fields a stream of synthesized audio takes (an account's standing `stream_faults`). */
export type StreamFaultField = { [K in FaultField]: StageOf<K> extends 'stream' ? K : never }[FaultField];

/** Every field's name, in the registry's order. */
export const FAULT_FIELD_NAMES = Object.keys(FAULT_FIELDS) as FaultField[];

const spec = (name: FaultField): FaultFieldSpec => FAULT_FIELDS[name];

/** The stream fields of one group, in the registry's order. */
export function streamFields(group: StreamGroup): StreamFaultField[] {
  return FAULT_FIELD_NAMES.filter((n) => spec(n).group === group) as StreamFaultField[];
}

/** The stream fields a carrier can express, in the registry's order. */
export function fieldsCarried(carrier: AudioCarrier): StreamFaultField[] {
  return FAULT_FIELD_NAMES.filter((n) => spec(n).stage === 'stream' && (spec(n).carriers ?? ['hex', 'binary']).includes(carrier)) as StreamFaultField[];
}

/** The registry as JSON (the inspector and `GET /_emulator/faults/fields`): each field with its name. */
export function faultFieldsView(): ({ name: FaultField } & FaultFieldSpec)[] {
  return FAULT_FIELD_NAMES.map((name) => ({ name, ...spec(name) }));
}

const escapeCell = (text: string) => text.replace(/\|/g, '\\|');

/** The range of a field in words for the docs' table: `100–599`, `> 0, ≤ 1000`, `≥ 0`. */
function rangeText(f: FaultFieldSpec): string {
  const kind = f.type === 'decimal' ? 'decimal' : 'integer';
  if (f.min !== undefined && f.max !== undefined && !f.minExclusive) return `${kind} ${f.min}–${f.max}`;
  const parts: string[] = [];
  if (f.min !== undefined) parts.push(`${f.minExclusive ? '>' : '≥'} ${f.min}`);
  if (f.max !== undefined) parts.push(`≤ ${f.max}`);
  return parts.length ? `${kind} ${parts.join(', ')}` : kind;
}

/** The docs' table of fault fields (docs/control-plane.md holds it between its markers). */
export function faultFieldsTable(): string {
  const rows = FAULT_FIELD_NAMES.map((name) => {
    const f = spec(name);
    const kind = f.stage === 'answer' ? 'answer' : `stream (${f.group})`;
    return `| \`${name}\` | ${rangeText(f)} | ${kind} | ${escapeCell(f.appliesTo)} | ${escapeCell(f.does)} |`;
  });
  return ['| Field | Values | Acts on | Applies to | What it does |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}
