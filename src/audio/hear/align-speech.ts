/**
 * What was heard of one utterance of the speech engine: continuous speech, whose silences do not fall
 * at word edges (a stop consonant's closure is silence inside a word; the words of a sentence touch).
 * Its words are not matched stretch by stretch (the tone engine's `alignUtterance`): the recording is
 * read against the planned timeline through an offset (recording time = planned time + offset). A
 * silence heard where the plan has none (or one that ends later than planned) by at least
 * `SPEECH_GAP_MIN_MS` is a `gap` when the sound after it is later by as much (its pauses and its end fit
 * the grown offset better: silence inserted); silence in place of sound (a dropout, quiet phones under
 * noise) moves nothing and is no gap. Sound that comes back after a pause at another sentence's start
 * than planned (a sentence heard again, or one skipped), where that sentence's offset explains more of
 * what follows, is a `repeat` or `missing`. Sound that stops before the last word's second half is a
 * `cut`. Words are placed at their planned times plus the offset, so on intact audio they are the
 * synthesized times (within the signature's location, a few ms); a sentence heard twice gives its words twice.
 */
import { SIGNATURE_SECONDS } from '../marker.js';
import type { ActivitySpan } from '../types.js';
import type { HeardUtterance, TimedWord } from './align.js';

/** Silence longer than planned by at least this much is a gap (closures and quiet phones stay under it). */
const SPEECH_GAP_MIN_MS = 200;
/** A heard silence starting this close to a planned silence (its quiet edges) is that silence. */
const NEAR_MS = 120;
/** The last word's end may sound this much early (a quiet last phone, a fricative past a narrow band) in a whole utterance. */
const SPEECH_CUT_TOLERANCE_MS = 100;
/** Pauses between words at least this long are landmarks: sound comes back at their end. */
const LANDMARK_PAUSE_MS = 60;
/** How close to a landmark (moved by an offset) heard sound must start to be explained by that offset. */
const LANDMARK_MS = 60;
/** Pauses of the plan at least this long start a sentence (a sentence end, a comma, a newline; a marker). */
const SENTENCE_PAUSE_MS = 150;
/** Sound after at least this much silence may be another sentence than planned (one heard again, or one skipped). */
const JUMP_SILENCE_MS = 150;

/** True when the words are continuous speech: some words of a sentence touch (the speech engine's timeline). */
export function isContinuous(words: readonly TimedWord[]): boolean {
  return words.some((w, i) => i > 0 && w.startMs - words[i - 1]!.endMs < 1 && w.startMs >= words[i - 1]!.startMs);
}

const r1 = (ms: number) => Math.round(ms);

/** Same parameters as `alignUtterance`. */
export function alignSpeech(words: readonly TimedWord[], durationMs: number, startMs: number, limitMs: number, spans: readonly ActivitySpan[]): HeardUtterance {
  const signatureEnd = startMs + SIGNATURE_SECONDS * 1000 - 60;
  const heard = spans.filter((s) => s.startMs >= signatureEnd && s.startMs < limitMs).map((s) => ({ startMs: s.startMs, endMs: Math.min(s.endMs, limitMs) }));
  // The plan's silences: before the first word (after the signature) and between words.
  const silences: { startMs: number; endMs: number }[] = [];
  let prevEnd = SIGNATURE_SECONDS * 1000;
  for (const w of words) {
    if (w.startMs > prevEnd) silences.push({ startMs: prevEnd, endMs: w.startMs });
    prevEnd = Math.max(prevEnd, w.endMs);
  }
  const lastEnd = words.length ? Math.max(...words.map((w) => w.endMs)) : SIGNATURE_SECONDS * 1000;
  const out: HeardUtterance = { words: [], complete: false, endMs: Math.min(limitMs, startMs + SIGNATURE_SECONDS * 1000), anomalies: [] };

  // What was heard in order: runs of the plan, each from a planned time (where sound came back, or a
  // sentence heard again or after one skipped) to the planned time it reached, with its offsets from
  // planned time ([planned time from which it applies, offset]; silence inserted adds one).
  const runs: { from: number; to: number; offsets: [number, number][] }[] = [{ from: -Infinity, to: Infinity, offsets: [[0, startMs]] }];
  let offsets = runs[0]!.offsets;
  let offset = startMs;
  // How far into the plan the sound was heard (planned ms).
  let reach = heard.length ? SIGNATURE_SECONDS * 1000 : 0;
  let prevHeardEnd = startMs + SIGNATURE_SECONDS * 1000;
  // Landmarks of the plan: where sound comes back after a pause between words, and where the last word ends.
  const returns = silences.filter((s) => s.endMs - s.startMs >= LANDMARK_PAUSE_MS).map((s) => s.endMs);
  // Where sentences start: the first word, and sound after a sentence's pause.
  const sentenceStarts = [
    ...(words.length ? [words[0]!.startMs] : []),
    ...silences.filter((s) => s.endMs - s.startMs >= SENTENCE_PAUSE_MS).map((s) => s.endMs),
  ];
  const lastHeardEnd = heard.length ? heard[heard.length - 1]!.endMs : 0;
  // How many later landmarks an offset explains: a stretch starting on a pause's end, the sound ending on the last word's.
  const starts = (from: number, o: number): number => {
    let n = 0;
    for (let k = from; k < heard.length; k++) if (returns.some((t) => Math.abs(heard[k]!.startMs - o - t) <= LANDMARK_MS)) n++;
    return n;
  };
  const explained = (from: number, o: number): number => starts(from, o) + (Math.abs(lastHeardEnd - o - lastEnd) <= LANDMARK_MS * 2 ? 2 : 0);
  for (const [k, h] of heard.entries()) {
    const a = prevHeardEnd - offset; // the silence before this stretch, in planned time
    const b = h.startMs - offset;
    if (b > lastEnd + NEAR_MS) break; // sound after the utterance's words: not its own
    // The planned silence this heard one is (nearest start within NEAR_MS, or one it began inside).
    let planned: { startMs: number; endMs: number } | null = null;
    for (const s of silences) {
      const inside = a >= s.startMs && a < s.endMs;
      if (!inside && Math.abs(s.startMs - a) > NEAR_MS) continue;
      if (!planned || Math.abs(s.startMs - a) < Math.abs(planned.startMs - a)) planned = s;
    }
    // How much later than planned the sound came back.
    const extra = planned ? b - planned.endMs : b - a;
    // Silence inserted moves what follows later; silence in place of sound (a dropout, quiet phones under noise) does not.
    if (extra >= SPEECH_GAP_MIN_MS && explained(k, offset + extra) > explained(k, offset)) {
      out.anomalies.push({ kind: 'gap', at_ms: r1(prevHeardEnd), duration_ms: r1(extra) });
      offset += extra;
      offsets.push([planned ? planned.endMs : a, offset]);
    } else if (h.startMs - prevHeardEnd >= JUMP_SILENCE_MS) {
      // A sentence heard again or one skipped: this sound starts another sentence than planned, and the
      // offset that makes it that sentence explains more of what follows (a later sentence's start
      // among them, not only the end: a cut's last sound fits some sentence's length by chance).
      // The sentence the sound came back at as planned: the shift is then exactly the plan's, from it to the one heard.
      const due = sentenceStarts.find((t) => Math.abs(b - t) <= NEAR_MS);
      // Only the end to go by (no later sentence start): the recording must go on past the sound, as a whole one does
      // (a stream cut short ends with its sound; its last sound may fit some sentence's length by chance).
      const endsWhole = limitMs - lastHeardEnd >= durationMs - lastEnd - LANDMARK_MS;
      let best: { start: number; o: number } | null = null;
      for (const start of sentenceStarts) {
        const o = due === undefined ? h.startMs - start : offset + due - start;
        if (Math.abs(o - offset) < SPEECH_GAP_MIN_MS) continue;
        const later = starts(k + 1, o) > starts(k + 1, offset);
        if (!(later || endsWhole) || explained(k, o) < explained(k, offset) + 2) continue;
        if (!best || explained(k, o) > explained(k, best.o)) best = { start, o };
      }
      if (best) {
        const run = runs[runs.length - 1]!;
        run.to = a; // the plan as far as heard before the jump
        const at = due === undefined ? h.startMs : offset + due; // where the sentence heard instead was due
        out.anomalies.push({ kind: best.start < a ? 'repeat' : 'missing', at_ms: r1(at), duration_ms: r1(Math.abs(best.o - offset)) });
        offset = best.o;
        offsets = [[best.start, offset]];
        runs.push({ from: best.start, to: Infinity, offsets });
      }
    }
    prevHeardEnd = h.endMs;
    reach = Math.max(reach, h.endMs - offset);
  }
  // A word is heard when at least half of it is within the sound heard, in each run that reached it.
  runs[runs.length - 1]!.to = reach;
  for (const run of runs) {
    const offsetAt = (t: number) => {
      let o = run.offsets[0]![1];
      for (const [from, value] of run.offsets) if (from <= t) o = value;
      return o;
    };
    for (const w of words) {
      const mid = w.startMs + (w.endMs - w.startMs) / 2;
      if (mid < run.from) continue;
      if (mid > run.to) break;
      out.words.push({ word: w.text, start_ms: r1(w.startMs + offsetAt(w.startMs)), end_ms: r1(Math.min(w.endMs + offsetAt(w.endMs), prevHeardEnd)) });
    }
  }
  const last = words[words.length - 1];
  out.complete = !last || reach >= lastEnd - Math.max(SPEECH_CUT_TOLERANCE_MS, (last.endMs - last.startMs) / 2);
  if (out.complete) out.endMs = Math.min(limitMs, durationMs + offset);
  else {
    if (heard.length) out.endMs = prevHeardEnd;
    out.anomalies.push({ kind: 'cut', at_ms: r1(out.endMs), duration_ms: r1(Math.max(0, durationMs - reach)) });
  }
  out.endMs = r1(out.endMs);
  return out;
}
