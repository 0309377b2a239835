/**
 * The `fault` of a journal entry: where the fault came from (`header`, a rule's id, or `account` for an
 * account's standing stream faults) and what it did. The fields the endpoint expressed are read from
 * the request's own record of them when the entry is shown, so recording a fault costs nothing more
 * per field; what only the stream guard knows (the chunk a stream was cut at, the audio faults it
 * applied, when the first paced audio left) is noted by the guard.
 */
import type { FaultDirective, FaultField } from '../faults/faults.js';

export class FaultRecord {
  /** The chunk count at which `cut_after_chunks` dropped the connection. */
  #cutAtChunk: number | undefined = undefined;
  /** Audio faults the guard applied, as it applied them (`hex_odd=2`, `corrupt_bytes=17`…). */
  #audio: readonly string[] | undefined = undefined;
  /** A paced stream's first audio, ms after its answer began. */
  #firstAudioMs: number | undefined = undefined;

  constructor(
    readonly origin: string,
    private readonly directive: FaultDirective,
    /** The fields the endpoint expressed (the request context's set, filled as it takes them). */
    private readonly used: ReadonlySet<FaultField>,
  ) {}

  /** The stream guard cut the connection after this many chunks. */
  noteCut(chunks: number): void {
    this.#cutAtChunk = chunks;
  }

  /** The audio faults the stream guard applied so far (its own list, shown as a copy), and a paced first audio. */
  noteAudio(applied: readonly string[] | undefined, firstAudioMs: number | undefined): void {
    if (applied?.length) this.#audio = applied;
    if (firstAudioMs !== undefined) this.#firstAudioMs = firstAudioMs;
  }

  /** The fields the endpoint expressed, as the log line gives them (`rtf=1,ttfa_ms=300`). */
  fieldsText(): string {
    return (Object.keys(this.directive) as FaultField[])
      .filter((field) => this.used.has(field))
      .map((field) => `${field}=${this.directive[field]}`)
      .join(',');
  }

  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { origin: this.origin };
    const ignored: string[] = [];
    for (const field of Object.keys(this.directive) as FaultField[]) {
      if (this.used.has(field)) out[field] = this.directive[field];
      else ignored.push(field);
    }
    if (this.#cutAtChunk !== undefined) out.cut_at_chunk = this.#cutAtChunk;
    if (this.#audio?.length) out.audio_faults = [...this.#audio];
    if (this.#firstAudioMs !== undefined) out.first_audio_ms = this.#firstAudioMs;
    if (ignored.length) out.ignored = ignored;
    return out;
  }
}
