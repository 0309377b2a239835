/**
 * One journal entry: its shape, the lazily summarized request and response parts the request pipeline
 * fills on every request, and the summaries they show (secrets redacted). The bounded record of
 * entries is core/journal.ts.
 */
export interface WsFrameSummary {
  dir: 'in' | 'out';
  type: 'text' | 'binary' | 'close';
  size: number;
  event?: string;
  at_ms: number;
}

export interface JournalEntry {
  id: string;
  at_ms: number;
  service: 'speech' | 'platform';
  method: string;
  path: string;
  status: number | null;
  account: string | null;
  duration_ms: number | null;
  request: { headers: Record<string, string>; query?: Record<string, unknown>; body?: unknown };
  /** `code`: the spec code of the answer, when its renderer named it (also for answers too large to summarize). */
  response: { summary?: unknown; content_type?: string; code?: number };
  chunks?: number;
  ws_frames?: WsFrameSummary[];
  ws_frames_total?: number;
  note?: string;
  /** Audio the client streamed over a socket, kept for download as WAV (the URL is on the control plane). */
  client_audio?: { bytes: number; sample_rate: number; truncated: boolean; url: string };
  /** Audio the answer carried inside its body (hex), to listen to again (the URL is on the control plane). */
  answer_audio?: { bytes: number; format: string; sample_rate: number; channels: number; url: string };
  /** Internal: matched by the control plane's `account` filter, never serialized. */
  accountId?: string;
}

type RequestSummary = { headers: Record<string, string>; query?: Record<string, unknown> };

/** Turns what a request arrived with into what its entry shows (secrets redacted). */
export type RequestSummarizer = (headers: Record<string, unknown>, query: unknown) => RequestSummary;
/** Turns a value the entry keeps as it was (a parsed body, a JSON answer) into its summary. */
export type ValueSummarizer<T> = (value: T) => unknown;

/**
 * One value an entry shows summarized: kept as it came, with its summarizer, until first read; a write
 * replaces either. A base class, not a field: the journal is written on every request and read rarely,
 * so no helper object or closure is made per request (the summarizers are module-level functions).
 */
abstract class LazySummary<Raw> {
  private summarized: unknown = undefined;
  private raw: Raw | undefined = undefined;
  private summarizer: ValueSummarizer<Raw> | null = null;

  protected readSummary(): unknown {
    if (this.summarizer) {
      this.summarized = this.summarizer(this.raw as Raw);
      this.summarizer = null;
      this.raw = undefined;
    }
    return this.summarized;
  }

  protected writeSummary(value: unknown): void {
    this.summarized = value;
    this.summarizer = null;
    this.raw = undefined;
  }

  protected keepRaw(raw: Raw, summarize: ValueSummarizer<Raw>): void {
    this.raw = raw;
    this.summarizer = summarize;
  }

  protected get hasSummary(): boolean {
    return this.summarizer !== null || this.summarized !== undefined;
  }
}

/**
 * The request part of an entry: headers and query as they arrived, and a small parsed body, each
 * summarized on first read. JSON shows the same fields as a plain object.
 */
export class LazyJournalRequest extends LazySummary<unknown> {
  private summary: RequestSummary | null = null;

  constructor(
    private rawHeaders: Record<string, unknown> | null,
    private rawQuery: unknown,
    private readonly summarizeRequest: RequestSummarizer,
  ) {
    super();
  }

  private read(): RequestSummary {
    if (!this.summary) {
      this.summary = this.summarizeRequest(this.rawHeaders ?? {}, this.rawQuery);
      this.rawHeaders = null;
      this.rawQuery = undefined;
    }
    return this.summary;
  }

  get headers(): Record<string, string> {
    return this.read().headers;
  }

  get query(): Record<string, unknown> | undefined {
    return this.read().query;
  }

  get body(): unknown {
    return this.readSummary();
  }

  set body(value: unknown) {
    this.writeSummary(value);
  }

  /** Keeps the parsed body; `summarize` makes its summary on first read. */
  keepBody(body: unknown, summarize: ValueSummarizer<unknown>): void {
    this.keepRaw(body, summarize);
  }

  /** Whether a body was recorded (or is waiting to be summarized). */
  get hasBody(): boolean {
    return this.hasSummary;
  }

  toJSON() {
    return { headers: this.headers, query: this.query, body: this.body };
  }
}

/**
 * The response part of an entry, whose summary may be made when first read (a JSON answer is parsed
 * and summarized only if someone looks). A write replaces it.
 */
export class LazyJournalResponse extends LazySummary<string> {
  content_type?: string = undefined;
  code?: number = undefined;

  get summary(): unknown {
    return this.readSummary();
  }

  set summary(value: unknown) {
    this.writeSummary(value);
  }

  /** Keeps the answer's text; `summarize` makes its summary on first read. */
  keepPayload(payload: string, summarize: ValueSummarizer<string>): void {
    this.keepRaw(payload, summarize);
  }

  toJSON() {
    return { summary: this.summary, content_type: this.content_type, code: this.code };
  }
}

const FRAME_HEAD = 20;
const FRAME_TAIL = 20;

/** Keeps the first and the last 20 frames of a WebSocket conversation, and the total count. */
export function recordFrame(entry: JournalEntry | null | undefined, frame: WsFrameSummary): void {
  if (!entry) return;
  const frames = (entry.ws_frames ??= []);
  entry.ws_frames_total = (entry.ws_frames_total ?? 0) + 1;
  if (frames.length >= FRAME_HEAD + FRAME_TAIL) frames.splice(FRAME_HEAD, 1);
  frames.push(frame);
}

/** The spec's own code of an answer: `base_resp.status_code` (speech) or `error_code` (platform); '' if none. */
export function specCodeOf(summary: unknown): string {
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

const SECRET_FIELDS = new Set(['apikey', 'api_key', 'authorization', 'x-api-key', 'token', 'usertoken']);

/** A small, key-free picture of a body: long strings and arrays are cut, secrets redacted. */
export function summarize(value: unknown, redact: (s: string) => string, depth = 0): unknown {
  if (value === null || value === undefined) return value;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return { bytes: value.length };
  if (typeof value === 'string') return value.length > 256 ? `${value.slice(0, 64)}…(${value.length} chars)` : value;
  if (typeof value !== 'object') return value;
  if (depth > 4) return '…';
  if (Array.isArray(value)) {
    const items = value.slice(0, 20).map((v) => summarize(v, redact, depth + 1));
    if (value.length > 20) items.push(`…(${value.length} items)`);
    return items;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_FIELDS.has(k.toLowerCase()) && typeof v === 'string' ? redact(v) : summarize(v, redact, depth + 1);
  }
  return out;
}
