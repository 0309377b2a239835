/**
 * The request and answer parts of a journal entry (core/journal/entry.ts): what a request arrived with
 * and what it was answered, each kept as it came and summarized (secrets redacted) on first read.
 */
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
 * The request part of an entry: headers and query as they arrived, and the parsed body, each
 * summarized on first read. JSON shows `{headers, query, body}`.
 */
export class JournalRequest extends LazySummary<unknown> {
  private summary: RequestSummary | null = null;

  constructor(
    private rawHeaders: Record<string, unknown> | null,
    private rawQuery: unknown,
    private readonly summarizeRequest: RequestSummarizer | null,
  ) {
    super();
  }

  private read(): RequestSummary {
    if (!this.summary) {
      this.summary = this.summarizeRequest
        ? this.summarizeRequest(this.rawHeaders ?? {}, this.rawQuery)
        : { headers: (this.rawHeaders ?? {}) as Record<string, string>, query: this.rawQuery as Record<string, unknown> | undefined };
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

  /** Records the body once: kept as parsed, summarized by `summarize` on first read. */
  keepBody(body: unknown, summarize: ValueSummarizer<unknown>): void {
    if (!this.hasSummary) this.keepRaw(body, summarize);
  }

  /** Records the body once, as a summary made now (a large body is never held parsed). */
  setBody(summary: unknown): void {
    if (!this.hasSummary) this.writeSummary(summary);
  }

  /**
   * What a route that reads its body as a stream (a multipart form) found in it, in place of the size
   * and content type the pipeline noted before the route ran.
   */
  replaceBody(summary: unknown): void {
    this.writeSummary(summary);
  }

  toJSON() {
    return { headers: this.headers, query: this.query, body: this.body };
  }
}

/**
 * The response part of an entry: its content type, the spec code its renderer named, and its summary,
 * which may be made when first read (a JSON answer is parsed and summarized only if someone looks).
 */
export class JournalResponse extends LazySummary<string> {
  content_type?: string = undefined;
  /** The spec code of the answer, when its renderer named it (also for answers too large to summarize). */
  code?: number = undefined;
  /** The message that came with a non-zero code (bounded), for the request's log line; the summary shows the body's. */
  message?: string = undefined;

  get summary(): unknown {
    return this.readSummary();
  }

  /** The summary, made now (a byte count, a stream's first facts). */
  setSummary(summary: unknown): void {
    this.writeSummary(summary);
  }

  /** Keeps the answer's text; `summarize` makes its summary on first read. */
  keepPayload(payload: string, summarize: ValueSummarizer<string>): void {
    this.keepRaw(payload, summarize);
  }

  toJSON() {
    return { summary: this.summary, content_type: this.content_type, code: this.code };
  }
}
