/**
 * The tape format, version 1 (docs/tapes.md): one JSON file per recorded exchange, readable and diffable, with the
 * bytes of audio and downloads stored once beside it under `files/`, named by their content hash. This file is the
 * one place that knows the shape; the store reads and writes it, the recorder makes it, the replayer plays it.
 *
 * A value anywhere in a body or an event may be a file reference (`{"$file": "…", "encoding": "hex"}`): long hex or
 * base64 audio inside JSON is stored as its decoded bytes, so the JSON stays small and the audio is a real file. A
 * string that is itself JSON text holding such audio (an MCP tool's result) is kept as `{"$json": value}`, the value
 * with its audio as file references; it is written back as the very text it was.
 */
import * as z from 'zod';

export const TAPE_VERSION = 1;

/** What a credential (a key in a header or the query) is replaced by: the key itself is never written. */
export const CREDENTIAL_MARKER = '<credential>';

/** Where the files of a tape dir live, beside the tapes. */
export const FILES_DIR = 'files';

/** A file of `files/`: the SHA-256 of its bytes in hex, and an extension that says what it holds. */
const FILE_NAME = /^[0-9a-f]{64}\.[a-z0-9]{1,8}$/;
const fileName = z.string().regex(FILE_NAME, 'must be a file of files/ named by its SHA-256 (64 hex digits, a dot, an extension)');

/** A value of a body held in a file: the file, and how it was written in the JSON it came from. */
export const fileRefSchema = z
  .object({
    $file: fileName,
    /** How the bytes appeared in the JSON: hex, base64, or raw (a whole body, a chunk). */
    encoding: z.enum(['hex', 'base64', 'raw']),
    /** A slice of the file (a chunk of a stream), from `offset`, `bytes` long; the whole file when absent. */
    offset: z.number().int().min(0).optional(),
    bytes: z.number().int().min(0).optional(),
  })
  .strict();
export type FileRef = z.infer<typeof fileRefSchema>;

export function isFileRef(v: unknown): v is FileRef {
  return typeof v === 'object' && v !== null && typeof (v as { $file?: unknown }).$file === 'string';
}

/** JSON text kept as the value it holds (`{"$json": value}`): the string `JSON.stringify(value)`. */
export interface JsonText {
  $json: unknown;
}

export function isJsonText(v: unknown): v is JsonText {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && '$json' in v;
}

/** One part of a multipart request: a field's value, or a file with its content stored by hash. */
const partSchema = z.union([
  z.object({ name: z.string(), value: z.string() }).strict(),
  z.object({ name: z.string(), filename: z.string(), content_type: z.string(), file: fileRefSchema }).strict(),
]);
export type TapePart = z.infer<typeof partSchema>;

/**
 * A body as recorded: JSON (with file references inside), text, a multipart form, raw bytes in a file, or none.
 * Exactly one member is present.
 */
export const bodySchema = z.union([
  z.object({ json: z.unknown() }).strict(),
  z.object({ text: z.string() }).strict(),
  z.object({ multipart: z.array(partSchema) }).strict(),
  z.object({ file: fileRefSchema }).strict(),
  z.object({ none: z.literal(true) }).strict(),
]);
export type TapeBody = z.infer<typeof bodySchema>;

/**
 * One step of a timeline: which way it went (`out` = the service to the client, `in` = the client to the service),
 * when (milliseconds since the answer's head, or the socket's open), and what: a parsed event (an SSE event, a
 * socket's JSON message) or a frame of bytes (a chunk of audio, a binary socket message) held in a file.
 */
export const stepSchema = z.union([
  z.object({ dir: z.enum(['in', 'out']), t_ms: z.number().min(0), event: z.unknown() }).strict(),
  z.object({ dir: z.enum(['in', 'out']), t_ms: z.number().min(0), frame: fileRefSchema }).strict(),
  /** A socket's text frame that is not JSON, kept as written. */
  z.object({ dir: z.enum(['in', 'out']), t_ms: z.number().min(0), text: z.string() }).strict(),
  /** The end of a socket (its close code and reason), in either direction. */
  z.object({ dir: z.enum(['in', 'out']), t_ms: z.number().min(0), close: z.object({ code: z.number().int(), reason: z.string() }).strict() }).strict(),
]);
export type TapeStep = z.infer<typeof stepSchema>;

/**
 * An SSE event as recorded: its `event:` name when it had one, and its `data:` (parsed JSON with file references,
 * or the text when not JSON).
 */
export interface SseEvent {
  event?: string;
  data: unknown;
}

const headersSchema = z.record(z.string(), z.string());

export const requestSchema = z
  .object({
    method: z.string().min(1),
    /** The path as sent, without the query. */
    path: z.string().startsWith('/'),
    /** The query as sent; a credential in it is the marker. */
    query: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
    /** The headers that carry meaning (content type, credentials as the marker); transport headers are dropped. */
    headers: headersSchema,
    body: bodySchema,
  })
  .strict();
export type TapeRequest = z.infer<typeof requestSchema>;

export const answerSchema = z
  .object({
    status: z.number().int().min(100).max(599),
    headers: headersSchema,
    /** A whole body (absent for a stream: its steps hold it). */
    body: bodySchema.optional(),
    /** A streamed answer: server-sent events, or chunks of bytes, with their times. */
    stream: z
      .object({
        /** `socket`: a WebSocket's frames both ways (src/tapes/sockets/). */
        kind: z.enum(['sse', 'chunks', 'socket']),
        steps: z.array(stepSchema),
      })
      .strict()
      .optional(),
  })
  .strict()
  .refine((a) => (a.body === undefined) !== (a.stream === undefined), 'an answer has either a body or a stream, not both and not neither');
export type TapeAnswer = z.infer<typeof answerSchema>;

/** A link a recorded answer handed out, fetched while recording (links expire upstream) and served back on replay. */
export const downloadSchema = z
  .object({
    url: z.url(),
    status: z.number().int(),
    content_type: z.string(),
    file: fileRefSchema,
  })
  .strict();
export type TapeDownload = z.infer<typeof downloadSchema>;

export const tapeSchema = z
  .object({
    tape: z.literal(TAPE_VERSION, { error: `must be ${TAPE_VERSION} (this emulator reads tapes of format version ${TAPE_VERSION})` }),
    /** The tape's id: its file name without `.json`. */
    id: z.string().regex(/^[A-Za-z0-9._-]+$/),
    service: z.enum(['speech', 'platform']),
    /** The operation, `METHOD /route/pattern` as the service registers it. */
    operation: z.string().min(3),
    /** The n-th recording of the same request in one run (a list before and after an upload differs): 1, 2, … */
    seq: z.number().int().min(1),
    /** The account the tape answers; null = any account (the default: a tape holds no account). */
    account: z.string().nullable(),
    /** Wall time of the recording (for a person; no rule reads it). */
    recorded_at: z.string(),
    /** Where it was recorded from: the upstream's base URL. */
    upstream: z.string(),
    /** How long the upstream took from the request to the answer's head. */
    head_ms: z.number().min(0),
    request: requestSchema,
    answer: answerSchema,
    downloads: z.array(downloadSchema),
  })
  .strict();
export type Tape = z.infer<typeof tapeSchema>;

/** A tape that cannot be read: its file, and what is wrong in words (`answer.status: …`). */
export class TapeError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`tape ${file}: ${problem}`);
  }
}

/** Parses a tape's text: the tape, or the TapeError naming the file and the first thing wrong. */
export function parseTape(file: string, text: string): Tape {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new TapeError(file, `not JSON (${(err as Error).message})`);
  }
  if (typeof raw === 'object' && raw !== null && 'tape' in raw && (raw as { tape: unknown }).tape !== TAPE_VERSION)
    throw new TapeError(file, `format version ${JSON.stringify((raw as { tape: unknown }).tape)} is not ${TAPE_VERSION}, the one this emulator reads`);
  const parsed = tapeSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join('.') : 'the tape';
    throw new TapeError(file, `${where}: ${issue.message}`);
  }
  return parsed.data;
}

/** The tape as written: two-space JSON, keys in the schema's order, a newline at the end (diffable). */
export function tapeText(tape: Tape): string {
  return `${JSON.stringify(tape, null, 2)}\n`;
}

/** The extension a file of `files/` gets for a content type (what a person opening the folder sees). */
export function extensionOf(contentType: string | undefined): string {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const known: Record<string, string> = {
    'audio/mpeg': 'mp3',
    'audio/mp3': 'mp3',
    'audio/wav': 'wav',
    'audio/x-wav': 'wav',
    'audio/wave': 'wav',
    'audio/flac': 'flac',
    'audio/x-flac': 'flac',
    'audio/pcm': 'pcm',
    'audio/l16': 'pcm',
    'audio/ogg': 'ogg',
    'audio/opus': 'opus',
    'audio/mp4': 'm4a',
    'application/json': 'json',
    'text/plain': 'txt',
    'application/zip': 'zip',
    'application/x-tar': 'tar',
  };
  return known[type] ?? 'bin';
}
