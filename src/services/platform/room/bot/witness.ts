/**
 * What the room connection's journal entry keeps of the bot, as the conversation socket keeps its own:
 * the user's microphone as `client_audio` (the PCM as it arrived, 48 kHz), the bot's audio as
 * `answer_audio` (every frame it sent, as sent: 48 kHz mono PCM, served as WAV), and one frame
 * `bot_turn` per greeting or turn (what was heard, what was said, and where a barge-in cut it).
 */
import type { Emulator } from '../../../../core/emulator.js';
import { CLIENT_AUDIO_ENTRY_CAP, type JournalEntry } from '../../../../core/journal/journal.js';
import { TRACK_RATE } from './downsample.js';

export interface TurnNote {
  /** The greeting, or a reply to what the user said. */
  kind: 'greeting' | 'reply';
  /** What the user said (a reply's turn). */
  user?: string;
  /** The whole text the bot had to say. */
  reply: string;
  /** Milliseconds of its audio sent. */
  spoken_ms: number;
  /** Cut by the user's speech (barge-in) after `spoken_ms`. */
  cut?: true;
  /** Not said: the account's balance cannot pay for the reply audio. */
  unpaid?: true;
}

export class Witness {
  private sent: Buffer[] = [];
  private keptBytes = 0;
  private sentBytes = 0;
  private dirty = false;
  /** The journal let the entry's answer audio go (its total cap, or the entry left): no more is kept. */
  private dropped = false;
  private flushed = false;

  constructor(
    private readonly emu: Emulator,
    private readonly entry: JournalEntry | null,
  ) {}

  /** A frame of the user's microphone (48 kHz mono PCM16). */
  heard(frame: Int16Array): void {
    if (!this.entry || frame.length === 0) return;
    this.emu.journal.keepAudio(this.entry, Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength), TRACK_RATE);
  }

  /** A frame the bot sent, as it left (kept up to the journal's per-entry cap). */
  said(frame: Int16Array): void {
    if (!this.entry) return;
    this.sentBytes += frame.byteLength;
    if (this.dropped) return;
    const room = CLIENT_AUDIO_ENTRY_CAP - this.keptBytes;
    if (room <= 0) return;
    const bytes = Buffer.from(frame.buffer, frame.byteOffset, Math.min(frame.byteLength, room));
    this.sent.push(Buffer.from(bytes));
    this.keptBytes += bytes.length;
    this.dirty = true;
  }

  /** The entry's `answer_audio` is brought up to date (after each utterance of the bot, and at the end). */
  flush(): void {
    if (!this.entry || !this.dirty) return;
    this.dirty = false;
    // Once the journal let it go (over its total, or the entry left), nothing more is held for it.
    if (this.flushed && this.entry.answer_audio === undefined) {
      this.dropped = true;
      this.sent = [];
      return;
    }
    this.flushed = true;
    const bytes = Buffer.concat(this.sent);
    this.sent = [bytes];
    this.emu.journal.keepAnswerAudio(this.entry, { bytes, size: this.sentBytes, format: 'pcm', sampleRate: TRACK_RATE, channels: 1 });
  }

  turn(note: TurnNote): void {
    if (!this.entry) return;
    const size = Buffer.byteLength(JSON.stringify(note));
    this.emu.journal.recordFrame(this.entry, { dir: 'out', type: 'text', size, event: 'bot_turn', at_ms: this.emu.clock.now() }, note);
  }

  /** A line on the entry for what the bot did that no frame shows (a dropped room). */
  note(text: string): void {
    this.entry?.setNote(text);
  }
}
