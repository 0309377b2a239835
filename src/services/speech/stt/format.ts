/**
 * The answers of `POST /v1/speech_to_text` by `response_format` (rule E2) and the event stream's
 * events (rule E3): `json`, `verbose_json`, SRT (`HH:MM:SS,mmm`), WebVTT (`HH:MM:SS.mmm`), and the
 * per-sentence deltas with their final event. Times are seconds with 3 decimals on the wire.
 */
import { joinText, separator, type Piece } from './transcript.js';

const seconds = (ms: number) => Math.round(ms) / 1000;

export function jsonBody(sentences: Piece[], durationMs: number, traceId: string) {
  return { text: joinText(sentences), duration: seconds(durationMs), trace_id: traceId };
}

export function verboseBody(sentences: Piece[], pieces: Piece[], durationMs: number, traceId: string) {
  return {
    text: joinText(sentences),
    duration: seconds(durationMs),
    n_speakers: new Set(pieces.map((p) => p.speaker)).size,
    segments: pieces.map((p, id) => ({ id, start: seconds(p.startMs), end: seconds(p.endMs), speaker: p.speaker, text: p.text })),
    trace_id: traceId,
  };
}

/** `HH:MM:SS<sep>mmm` of a time in ms. */
export function clockTime(ms: number, sep: ',' | '.'): string {
  const t = Math.max(0, Math.round(ms));
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(t / 3_600_000))}:${pad(Math.floor(t / 60_000) % 60)}:${pad(Math.floor(t / 1000) % 60)}${sep}${pad(t % 1000, 3)}`;
}

/** SRT: cues numbered from 1, no speaker prefix; an empty transcript is an empty body. */
export function srtBody(pieces: Piece[]): string {
  return pieces.map((p, i) => `${i + 1}\n${clockTime(p.startMs, ',')} --> ${clockTime(p.endMs, ',')}\n${p.text}\n`).join('\n');
}

/** WebVTT: the header line, a blank line, then the cues; an empty transcript is `WEBVTT\n\n`. */
export function vttBody(pieces: Piece[]): string {
  return `WEBVTT\n\n${pieces.map((p) => `${clockTime(p.startMs, '.')} --> ${clockTime(p.endMs, '.')}\n${p.text}\n`).join('\n')}`;
}

/** The stream's events: one delta per sentence (with the separator before the next), then the final event. */
/** One event of the stream and the audio time (ms) it stands for: a delta its sentence's end, the final event the whole. */
export interface StreamEvent {
  body: Record<string, unknown>;
  atMs: number;
}

export function streamEvents(sentences: Piece[], durationMs: number): StreamEvent[] {
  const events: StreamEvent[] = sentences.map((p, index) => ({
    body: { index, delta: p.text + separator(p.text, sentences[index + 1]?.text ?? ''), finish: false },
    atMs: p.endMs,
  }));
  events.push({ body: { index: sentences.length, delta: '', finish: true, duration: seconds(durationMs) }, atMs: durationMs });
  return events;
}

/** One server-sent event: `data: <JSON>` and a blank line, no `event:` or `id:` lines. */
export function sseLine(event: unknown): string {
  return `data: ${JSON.stringify(event)}\n\n`;
}
