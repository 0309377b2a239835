/**
 * What the emulator said in each audio it made, keyed by the signature id carried inside that audio.
 * Content-addressed and shared by all accounts (the audio carries its own content); bounded, oldest out.
 */
export interface SpokenSegment {
  text: string;
  startMs: number;
  endMs: number;
  speaker?: number;
}

export interface SignatureRecord {
  id: string;
  kind: 'speech' | 'dialogue';
  text: string;
  language?: string;
  /** Voice ids per speaker (one speaker for plain synthesis). */
  speakers: { speaker: number; voices: string[] }[];
  /** Sentence segments or dialogue turns with their true times. */
  segments: SpokenSegment[];
  /** Word spans with their true times (speech to text's `word` level). */
  words?: SpokenSegment[];
  /** `speech` when the speech engine spoke it (continuous speech, as hear reads it); absent for the tones. */
  engine?: 'speech';
  /** Pronunciation replacements of the synthesis (the spans' texts are the original text's). */
  pronunciations?: { text: string; replacement: string }[];
  durationMs: number;
  createdAtMs: number;
}

/** A record's weight in characters: its texts plus a little for each segment's numbers. */
function weightOf(r: SignatureRecord): number {
  let w = r.text.length + 64;
  for (const s of r.segments) w += s.text.length + 64;
  for (const s of r.words ?? []) w += s.text.length + 48;
  return w;
}

/**
 * Bounded both by count and by total weight (texts are up to 10,000 characters each), oldest out, so a
 * long run keeps a fixed amount of memory; a full reset drops them all.
 */
export class SignatureRecords {
  private records = new Map<string, SignatureRecord>();
  private weight = 0;
  /** Told of each record added or dropped (the state store writes only those). */
  onChange: (id: string) => void = () => {};

  constructor(
    private readonly limit = 20_000,
    private readonly maxWeight = 8_000_000,
  ) {}

  put(record: SignatureRecord): void {
    this.drop(record.id);
    this.records.set(record.id, record);
    this.weight += weightOf(record);
    this.onChange(record.id);
    while (this.records.size > 1 && (this.records.size > this.limit || this.weight > this.maxWeight)) this.drop(this.records.keys().next().value!);
  }

  private drop(id: string): void {
    const old = this.records.get(id);
    if (!old) return;
    this.records.delete(id);
    this.weight -= weightOf(old);
    this.onChange(id);
  }

  /** Total weight held (characters of text plus per-segment overhead). */
  totalWeight(): number {
    return this.weight;
  }

  clear(): void {
    this.records.clear();
    this.weight = 0;
  }

  get(id: string | null | undefined): SignatureRecord | undefined {
    return id ? this.records.get(id) : undefined;
  }

  size(): number {
    return this.records.size;
  }

  save(): SignatureRecord[] {
    return [...this.records.values()];
  }

  load(saved: SignatureRecord[]): void {
    this.clear();
    for (const r of saved) this.put(r);
  }
}

/** What a synthesis reports of the audio it made (the audio engine's summary fits it). */
export interface SpokenAudio {
  signatureId: string;
  durationMs: number;
  engine?: 'speech';
  timeline: {
    sentences: readonly { text: string; startMs: number; endMs: number }[];
    words?: readonly { text: string; startMs: number; endMs: number }[];
  };
}

/** The record of a synthesis: one speaker (a voice or a mix of voices) saying the timeline's sentences. */
export function speechRecord(input: {
  text: string;
  language?: string;
  voices: string[];
  summary: SpokenAudio;
  atMs: number;
  pronunciations?: readonly { text: string; replacement: string }[];
}): SignatureRecord {
  const { summary } = input;
  return {
    ...(input.pronunciations?.length ? { pronunciations: input.pronunciations.map((p) => ({ text: p.text, replacement: p.replacement })) } : {}),
    id: summary.signatureId,
    kind: 'speech',
    text: input.text,
    language: input.language,
    speakers: [{ speaker: 1, voices: input.voices }],
    segments: summary.timeline.sentences.map((sentence) => ({ text: sentence.text, startMs: sentence.startMs, endMs: sentence.endMs, speaker: 1 })),
    words: summary.timeline.words?.map((word) => ({ text: word.text, startMs: word.startMs, endMs: word.endMs })),
    ...(summary.engine ? { engine: summary.engine } : {}),
    durationMs: summary.durationMs,
    createdAtMs: input.atMs,
  };
}

/** The record of a dialogue: speaker N (from 1) speaks with `voices[N - 1]`; segments are the turns. */
export function dialogueRecord(input: {
  text: string;
  language?: string;
  voices: readonly string[];
  audio: {
    signatureId: string;
    durationMs: number;
    engine?: 'speech';
    turns?: readonly SpokenSegment[];
    timeline?: { words?: readonly { text: string; startMs: number; endMs: number; turn?: number }[] };
  };
  atMs: number;
}): SignatureRecord {
  const { audio } = input;
  const speakerOf = (turn: number | undefined) => (turn === undefined ? undefined : audio.turns?.[turn]?.speaker);
  return {
    id: audio.signatureId,
    kind: 'dialogue',
    text: input.text,
    language: input.language,
    speakers: input.voices.map((voice, index) => ({ speaker: index + 1, voices: [voice] })),
    segments: (audio.turns ?? []).map((turn) => ({ text: turn.text, startMs: turn.startMs, endMs: turn.endMs, speaker: turn.speaker })),
    words: audio.timeline?.words?.map((word) => ({ text: word.text, startMs: word.startMs, endMs: word.endMs, speaker: speakerOf(word.turn) })),
    ...(audio.engine ? { engine: audio.engine } : {}),
    durationMs: audio.durationMs,
    createdAtMs: input.atMs,
  };
}
