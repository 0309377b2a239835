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
  durationMs: number;
  createdAtMs: number;
}

/** What a one-voice synthesis reports about its audio (the audio engine's summary, structurally). */
export interface SpeechSummary {
  signatureId: string;
  durationMs: number;
  timeline: { sentences: readonly { text: string; startMs: number; endMs: number }[] };
}

/** The record of a one-voice synthesis: its sentences, with their true times, as segments of speaker 1. */
export function speechRecord(summary: SpeechSummary, spoken: { text: string; language?: string; voices: string[] }, createdAtMs: number): SignatureRecord {
  return {
    id: summary.signatureId,
    kind: 'speech',
    text: spoken.text,
    language: spoken.language,
    speakers: [{ speaker: 1, voices: spoken.voices }],
    segments: summary.timeline.sentences.map((sentence) => ({ text: sentence.text, startMs: sentence.startMs, endMs: sentence.endMs, speaker: 1 })),
    durationMs: summary.durationMs,
    createdAtMs,
  };
}

export class SignatureRecords {
  private records = new Map<string, SignatureRecord>();

  constructor(private readonly limit = 20_000) {}

  put(record: SignatureRecord): void {
    this.records.delete(record.id);
    this.records.set(record.id, record);
    if (this.records.size > this.limit) this.records.delete(this.records.keys().next().value!);
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
    this.records.clear();
    for (const r of saved) this.records.set(r.id, r);
  }
}
