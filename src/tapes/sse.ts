/**
 * Server-sent events as a tape holds them: each event's name and its `data:` parsed as JSON when it reads back to the
 * same bytes (then the audio inside can be a file), else kept as text. Parsed as the bytes arrive, chunk by chunk.
 */
import type { SseEvent } from './format.js';

/** An SSE event as recorded: parsed `data` (JSON), or `text` when the data is not JSON that reads back the same. */
export type RecordedSse = SseEvent & { text?: string };

/** Splits a byte stream into events as it arrives. */
export class SseReader {
  private pending = '';
  private readonly decoder = new TextDecoder();

  /** The events the chunk completed. */
  push(chunk: Uint8Array): RecordedSse[] {
    this.pending += this.decoder.decode(chunk, { stream: true });
    const out: RecordedSse[] = [];
    for (;;) {
      const m = /\r?\n\r?\n/.exec(this.pending);
      if (!m) break;
      const block = this.pending.slice(0, m.index);
      this.pending = this.pending.slice(m.index + m[0].length);
      const event = parseBlock(block);
      if (event) out.push(event);
    }
    return out;
  }

  /** What is left once the stream ended (an event without its blank line). */
  end(): RecordedSse[] {
    const rest = this.pending + this.decoder.decode();
    this.pending = '';
    const event = rest.trim() ? parseBlock(rest) : null;
    return event ? [event] : [];
  }
}

function parseBlock(block: string): RecordedSse | null {
  let name: string | undefined;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') name = value;
    else if (field === 'data') data.push(value);
  }
  if (name === undefined && data.length === 0) return null;
  const text = data.join('\n');
  const base = name === undefined ? {} : { event: name };
  try {
    const parsed: unknown = JSON.parse(text);
    if (JSON.stringify(parsed) === text) return { ...base, data: parsed };
  } catch {
    // Not JSON: kept as text.
  }
  return { ...base, data: null, text };
}

/** An event written back as the service wrote it. */
export function sseText(event: RecordedSse): string {
  const data = event.text ?? JSON.stringify(event.data);
  const lines = data.split('\n').map((l) => `data: ${l}`);
  return `${event.event !== undefined ? `event: ${event.event}\n` : ''}${lines.join('\n')}\n\n`;
}
