/**
 * What a journal entry keeps of a streamed answer besides its chunk count: its bytes, and its first
 * and last events without their audio (an SSE event's `audio` hex is replaced by its size). The first
 * event is read once when it leaves; the last is only held (no copy) and read when someone looks, or
 * at once when it is the final event (it carries the whole file as hex: it is not held).
 */
import { frameContent } from './frames.js';

/** How a stream ended. `done` and `failed` are said by the transport; the stream guard finds the others. */
export type StreamEnd = 'done' | 'cut' | 'left' | 'shutdown' | 'failed';

/** A text frame's content: the JSON of its `data:` lines without audio, or its bounded text. */
function eventContent(text: string): unknown {
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
  return frameContent(data || text).content;
}

export class StreamRecord {
  bytes = 0;
  private first: unknown = undefined;
  private last: unknown = undefined;
  private lastRaw: string | null = null;

  add(frame: string | Buffer, final: boolean): void {
    const text = typeof frame === 'string';
    this.bytes += text ? Buffer.byteLength(frame) : frame.length;
    if (!text) return;
    if (this.first === undefined) {
      this.first = eventContent(frame);
      return;
    }
    if (final) {
      this.last = eventContent(frame);
      this.lastRaw = null;
    } else this.lastRaw = frame;
  }

  /** The last event held as sent is summarized (the stream ended, or someone looks). */
  settle(): void {
    if (this.lastRaw === null) return;
    this.last = eventContent(this.lastRaw);
    this.lastRaw = null;
  }

  toJSON(): Record<string, unknown> {
    this.settle();
    const out: Record<string, unknown> = { bytes: this.bytes };
    if (this.first !== undefined) out.first_event = this.first;
    if (this.last !== undefined) out.last_event = this.last;
    return out;
  }
}
