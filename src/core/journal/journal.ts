/**
 * A bounded record of what was requested and answered, newest first when read. Keys never appear:
 * accounts are shown by their redacted label and matched by their id (a hash of the key).
 */
import { JournalEntry, JournalRequest, type EntryFields, type WsFrameSummary } from './entry.js';
import { frameContent } from './frames.js';
import { detached } from './value.js';

// What an entry is and how it is summarized lives beside this file; importers of the journal get it here too.
export { FRAME_HEAD, FRAME_TAIL, JournalEntry, JournalRequest, entryCode, type EntryFields, type WsFrameSummary } from './entry.js';
export { isSecretField, summarize } from './value.js';
export { STALL_MIN_MS } from './delivery.js';

/** What a watcher of the journal hears: an entry started (`new`) or its answer ended (`finished`). */
export type JournalEvent = 'new' | 'finished';
export type JournalWatcher = (event: JournalEvent, entry: JournalEntry) => void;

/** Client audio kept: per entry, and in all (the oldest entry's audio goes first). */
export const CLIENT_AUDIO_ENTRY_CAP = 8 * 1024 * 1024;
export const CLIENT_AUDIO_TOTAL_CAP = 64 * 1024 * 1024;

interface KeptAudio {
  entry: JournalEntry;
  sampleRate: number;
  chunks: Buffer[];
  bytes: number;
}

/** Frame contents kept in all (the oldest entry's contents go first; its frames stay, by size). */
export const FRAME_CONTENT_TOTAL_CAP = 32 * 1024 * 1024;

/** Left entries are cut from the journal's array once this many have piled up at its head. */
const COMPACT_AFTER = 1024;

/**
 * Encoded audio an answer carried; raw PCM is served as WAV. Either the bytes themselves, or how to
 * make them again (synthesis is deterministic: the same request gives the same bytes), which keeps
 * the journal small however many answers it remembers.
 */
export interface AnswerAudio {
  format: string;
  sampleRate: number;
  channels: number;
  /** Size of the audio as answered. */
  size: number;
  bytes?: Buffer;
  make?: () => Promise<Buffer>;
}

/** An entry given as plain data (tools and tests that make entries without a request). */
export type PlainEntry = Omit<EntryFields, 'request'> & {
  request: { headers: Record<string, string>; query?: Record<string, unknown> };
  response?: Record<string, never>;
};

function fromPlain(plain: PlainEntry): JournalEntry {
  return JournalEntry.of({ ...plain, request: new JournalRequest(plain.request.headers, plain.request.query, null) });
}

export class Journal {
  /** Entries oldest first; those before `first` have left the journal (compacted now and then). */
  private entries: JournalEntry[] = [];
  private first = 0;
  private counter = 0;
  private framesSeen = 0;
  /** PCM16 mono a client sent, by entry id; it lives and dies with its entry. */
  private audio = new Map<string, KeptAudio>();
  private audioBytes = 0;
  /** Audio answers carried as hex, by entry id, under the same caps (a larger one is not kept). */
  private answers = new Map<string, { entry: JournalEntry; audio: AnswerAudio }>();
  private answerBytes = 0;
  /** Entries holding frame contents, oldest first, and the bytes they hold in all. */
  private framed = new Set<JournalEntry>();
  private frameBytes = 0;
  private readonly watchers = new Set<JournalWatcher>();

  constructor(
    private readonly limit: number,
    private readonly audioCaps = { entry: CLIENT_AUDIO_ENTRY_CAP, total: CLIENT_AUDIO_TOTAL_CAP },
    private readonly frameCap = FRAME_CONTENT_TOTAL_CAP,
  ) {}

  /**
   * Records a new entry and gives it its id: the lifecycle's entry itself (no copy: this runs on every
   * request), or one made from plain fields (headers and query shown as given).
   */
  start(entry: JournalEntry | PlainEntry): JournalEntry {
    const full = entry instanceof JournalEntry ? entry : fromPlain(entry);
    full.id = `req_${String(++this.counter).padStart(6, '0')}`;
    this.entries.push(full);
    // The oldest leaves; the array is compacted only once many have left (a shift per request would
    // move the whole journal every time).
    while (this.entries.length - this.first > this.limit) this.forget(this.entries[this.first++]!);
    if (this.first >= COMPACT_AFTER) {
      this.entries = this.entries.slice(this.first);
      this.first = 0;
    }
    if (this.watchers.size) this.emit('new', full);
    return full;
  }

  /** An entry leaves: its kept audio goes with it. (Nothing is written on the entry: it is old by now, and a new property would cost every request.) */
  private forget(entry: JournalEntry): void {
    if (this.audio.size) this.dropAudio(entry.id);
    if (this.answers.size) this.dropAnswer(entry.id);
    if (this.framed.size && this.framed.delete(entry)) this.frameBytes -= entry.frameBytes ?? 0;
  }

  /**
   * Keeps a WebSocket frame on its entry; a text frame with its `text` (a JSON string or the object
   * sent), a binary frame with its decoded content when the socket gives one (the rooms' protobuf
   * signalling), its audio fields replaced by their size and bounded per frame. Over the journal's bound in
   * bytes, the oldest entries' frame contents go first.
   */
  recordFrame(entry: JournalEntry | null | undefined, frame: WsFrameSummary, text?: unknown): void {
    this.framesSeen++;
    if (!entry) return;
    // Copied: an event name read from a frame's text (a regular expression's match, a slice) is a view
    // of the whole frame, and the entry would keep the whole frame alive (9 KB for a long task_continue).
    if (frame.event) frame.event = detached(frame.event);
    let bytes = 0;
    if (text !== undefined && frame.type !== 'close') {
      const kept = frameContent(text);
      frame.content = kept.content;
      if (kept.truncated) frame.truncated = true;
      bytes = kept.bytes;
    }
    const added = entry.recordFrame(frame, bytes);
    if (added === 0) return;
    this.frameBytes += added;
    this.framed.add(entry);
    for (const old of this.framed) {
      if (this.frameBytes <= this.frameCap || old === entry) break;
      this.framed.delete(old);
      this.frameBytes -= old.dropFrameContents();
    }
  }

  /** Whether `entry` is still in the journal (the newest are looked at first: audio is kept for recent entries). */
  private holds(entry: JournalEntry): boolean {
    return this.get(entry.id) === entry;
  }

  /** Tells watchers an entry's answer has ended (status and duration are set). */
  finished(entry: JournalEntry): void {
    if (this.watchers.size) this.emit('finished', entry);
  }

  /** Calls `watcher` on every new and finished entry until the returned function is called. */
  watch(watcher: JournalWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  private emit(event: JournalEvent, entry: JournalEntry): void {
    for (const watcher of this.watchers) watcher(event, entry);
  }

  get(id: string): JournalEntry | undefined {
    for (let i = this.entries.length - 1; i >= this.first; i--) if (this.entries[i]!.id === id) return this.entries[i];
    return undefined;
  }

  /** Keeps PCM16 mono bytes a client streamed on the socket of `entry`, up to the caps. */
  keepAudio(entry: JournalEntry | null | undefined, pcm: Buffer, sampleRate: number): void {
    if (!entry) return;
    let kept = this.audio.get(entry.id);
    // Audio already kept means the entry is still held (an entry that leaves takes its audio along):
    // the journal is searched only for a socket's first frame, not for every frame.
    if (kept?.entry !== entry) {
      if (!this.holds(entry)) return;
      kept = { entry, sampleRate, chunks: [], bytes: 0 };
      this.audio.set(entry.id, kept);
      entry.client_audio = { bytes: 0, sample_rate: sampleRate, truncated: false, url: `/_emulator/journal/${entry.id}/audio.wav` };
    }
    const room = this.audioCaps.entry - kept.bytes;
    const piece = pcm.length > room ? pcm.subarray(0, Math.max(0, room)) : pcm;
    if (piece.length < pcm.length) entry.client_audio!.truncated = true;
    if (piece.length === 0) return;
    kept.chunks.push(Buffer.from(piece));
    kept.bytes += piece.length;
    this.audioBytes += piece.length;
    entry.client_audio!.bytes = kept.bytes;
    // Over the total: the oldest entries lose their audio first (never the one being recorded).
    for (const [id] of this.audio) {
      if (this.audioBytes <= this.audioCaps.total) break;
      if (id !== entry.id) this.dropAudio(id);
    }
  }

  /** Keeps the audio an answer carried (inside its body), when it fits the caps; the oldest go first. */
  keepAnswerAudio(entry: JournalEntry | null | undefined, audio: AnswerAudio): void {
    const stored = audio.bytes?.length ?? 0;
    if (!entry || stored > this.audioCaps.entry || !this.holds(entry)) return;
    this.dropAnswer(entry.id);
    this.answers.set(entry.id, { entry, audio });
    this.answerBytes += stored;
    entry.answer_audio = {
      bytes: audio.size,
      format: audio.format,
      sample_rate: audio.sampleRate,
      channels: audio.channels,
      url: `/_emulator/journal/${entry.id}/answer-audio`,
    };
    for (const [id] of this.answers) {
      if (this.answerBytes <= this.audioCaps.total) break;
      if (id !== entry.id) this.dropAnswer(id);
    }
  }

  answerAudioOf(id: string): AnswerAudio | undefined {
    return this.answers.get(id)?.audio;
  }

  private dropAnswer(id: string): void {
    const kept = this.answers.get(id);
    if (!kept) return;
    this.answers.delete(id);
    this.answerBytes -= kept.audio.bytes?.length ?? 0;
    delete kept.entry.answer_audio;
  }

  /** The kept client audio of an entry: PCM16 mono bytes and their rate. */
  audioOf(id: string): { pcm: Buffer; sampleRate: number } | undefined {
    const kept = this.audio.get(id);
    if (!kept) return undefined;
    // Frames need not be sample-aligned; the WAV holds whole samples.
    const pcm = Buffer.concat(kept.chunks);
    return { pcm: pcm.subarray(0, pcm.length - (pcm.length % 2)), sampleRate: kept.sampleRate };
  }

  private dropAudio(id: string): void {
    const kept = this.audio.get(id);
    if (!kept) return;
    this.audio.delete(id);
    this.audioBytes -= kept.bytes;
    delete kept.entry.client_audio;
  }

  /** Entries newest first, those `filter.match` keeps (all without it), up to `limit`. */
  list(filter: { limit?: number; path?: string; accountId?: string; match?: (e: JournalEntry) => boolean } = {}): JournalEntry[] {
    const out: JournalEntry[] = [];
    for (let i = this.entries.length - 1; i >= this.first; i--) {
      const e = this.entries[i]!;
      if (filter.path && e.path !== filter.path) continue;
      if (filter.accountId && e.accountId !== filter.accountId) continue;
      if (filter.match && !filter.match(e)) continue;
      out.push(e);
      if (filter.limit && out.length >= filter.limit) break;
    }
    return out;
  }

  clear(accountId?: string): void {
    const keep: JournalEntry[] = [];
    for (let i = this.first; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (accountId !== undefined && e.accountId !== accountId) keep.push(e);
      else this.forget(e);
    }
    this.entries = keep;
    this.first = 0;
  }

  size(): number {
    return this.entries.length - this.first;
  }

  /** Entries started and frames recorded, ever (a reset does not lower it): it moves while clients ask or sockets talk. */
  get activity(): number {
    return this.counter + this.framesSeen;
  }
}
