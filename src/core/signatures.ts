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
