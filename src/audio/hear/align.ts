/**
 * What was heard of one utterance: its known word timeline (from the synthesis plan, times from the
 * start of the synthesis) laid against the sound stretches heard after its signature. Each heard
 * stretch is matched to the group of words whose durations and spacing (it and the next two) fit it
 * best, preferring the next expected group; a match elsewhere is a skip (`missing`) or a span heard
 * again (`repeat`), silence longer than planned by ≥ 150 ms is a `gap`, and an utterance whose last
 * words are not heard whole is `cut`. Stretches that fit no words (tags, foreign sounds) are passed over.
 */
import { SIGNATURE_SECONDS } from '../marker.js';
import type { ActivitySpan } from '../types.js';

export interface TimedWord {
  text: string;
  startMs: number;
  endMs: number;
}

export interface HeardWord {
  word: string;
  start_ms: number;
  end_ms: number;
}

export type AnomalyKind = 'gap' | 'repeat' | 'missing' | 'cut';
export interface HeardAnomaly {
  kind: AnomalyKind;
  at_ms: number;
  duration_ms: number;
}

export interface HeardUtterance {
  words: HeardWord[];
  complete: boolean;
  endMs: number;
  anomalies: HeardAnomaly[];
}

/** Silence longer than planned by at least this much is a gap. */
export const GAP_MIN_MS = 150;
/** Words closer than this sound as one stretch (the activity detector bridges such silences). */
export const BRIDGE_MS = 40;
/** Average mismatch (ms) of durations and spacings under which a stretch fits a group of words. */
const FIT_MS = 45;
/** The activity detector's window: a stretch lasts about this much more than its sound. */
const SPAN_WINDOW_MS = 20;
/** How close to its planned start a stretch must begin to be taken for the next words cut short. */
const ON_TIME_MS = 60;
/** The most one following stretch adds to a fit (a jump right after a stretch costs this). */
const CONTEXT_CAP_MS = 60;
/** How much worse than the next expected group another group must fit to be taken instead. */
const JUMP_PENALTY_MS = 25;
/** A stretch this close to its words' length, on time, is those words (ms). */
const EXACT_MS = 15;
/** A last word heard shorter than planned by more than this was cut. */
const CUT_TOLERANCE_MS = 45;

interface Group {
  first: number;
  last: number;
  startMs: number;
  endMs: number;
}

function groupsOf(words: readonly TimedWord[]): Group[] {
  const groups: Group[] = [];
  words.forEach((w, i) => {
    const g = groups[groups.length - 1];
    if (g && w.startMs - g.endMs < BRIDGE_MS) {
      g.last = i;
      g.endMs = Math.max(g.endMs, w.endMs);
    } else groups.push({ first: i, last: i, startMs: w.startMs, endMs: w.endMs });
  });
  return groups;
}

const r1 = (ms: number) => Math.round(ms);

/**
 * @param words the utterance's words, times from the start of its synthesis
 * @param durationMs the synthesis's whole duration
 * @param startMs where the synthesis starts in the recording
 * @param limitMs where its part of the recording ends (the next utterance, or the recording's end)
 * @param spans sound stretches of the recording (ms), in order
 */
export function alignUtterance(
  words: readonly TimedWord[],
  durationMs: number,
  startMs: number,
  limitMs: number,
  spans: readonly ActivitySpan[],
): HeardUtterance {
  const signatureEnd = startMs + SIGNATURE_SECONDS * 1000 - 60;
  const heard = spans.filter((s) => s.startMs >= signatureEnd && s.startMs < limitMs).map((s) => ({ startMs: s.startMs, endMs: Math.min(s.endMs, limitMs) }));
  const groups = groupsOf(words);
  const out: HeardUtterance = { words: [], complete: false, endMs: Math.min(limitMs, startMs + SIGNATURE_SECONDS * 1000), anomalies: [] };
  const atEnd = (h: number) => heard[h]!.endMs >= limitMs - 25;
  const dur = (s: { startMs: number; endMs: number }) => s.endMs - s.startMs;

  // How far stretch h is from group j (ms), or Infinity when it does not fit; a stretch that runs into
  // the end of the recording may be shorter than its words (it was cut).
  // A stretch may also be the next words cut short when the recording goes on after the cut: it starts
  // when they were due, and what follows it (if anything) is no words of this utterance.
  const cutShort = (h: number, j: number): boolean => {
    if (j !== cursor) return false;
    const onTime = Math.abs(heard[h]!.startMs - prevHeardEnd - (groups[j]!.startMs - prevExpEnd)) <= ON_TIME_MS;
    return onTime && (h === heard.length - 1 || !groups.some((_, k) => strict(h + 1, k)));
  };
  const onTime = (h: number, j: number) => Math.abs(heard[h]!.startMs - prevHeardEnd - (groups[j]!.startMs - prevExpEnd)) <= ON_TIME_MS / 2;
  const strict = (h: number, j: number) => Math.abs(dur(heard[h]!) - dur(groups[j]!)) <= FIT_MS;
  const own = (h: number, j: number): number => {
    const d = dur(heard[h]!) - dur(groups[j]!);
    const m = d < 0 && (atEnd(h) || cutShort(h, j)) ? 0 : Math.abs(d);
    return m <= FIT_MS ? m : Infinity;
  };
  // The stretch's own mismatch plus how well the next two stretches follow as the next two groups
  // (each capped, so a jump right after this stretch costs a bounded amount).
  const fit = (h: number, j: number): number => {
    let sum = own(h, j);
    for (let t = 1; t < 3 && sum < Infinity && h + t < heard.length; t++) {
      // More heard than this utterance has words: no support for the match (a repeat, or a wrong one).
      if (j + t >= groups.length) {
        sum += CONTEXT_CAP_MS;
        continue;
      }
      const H = heard[h + t]!;
      const G = groups[j + t]!;
      const d = dur(H) - dur(G);
      const gapH = H.startMs - heard[h + t - 1]!.endMs;
      const gapG = G.startMs - groups[j + t - 1]!.endMs;
      // Extra silence is a gap (reported, not a mismatch); less silence than planned is a mismatch.
      sum += Math.min(CONTEXT_CAP_MS, (atEnd(h + t) && d < 0 ? 0 : Math.abs(d)) + Math.max(0, gapG - gapH));
    }
    return sum;
  };

  let cursor = 0;
  let prevHeardEnd = startMs + (SIGNATURE_SECONDS * 1000 - 50);
  let prevExpEnd = SIGNATURE_SECONDS * 1000 - 50;
  let lastGroup = -1;
  let lastWhole = false;
  // Silence inserted inside a word splits it in two stretches that together last as long as the word.
  const splitFit = (h: number, j: number): number => {
    const G = groups[j];
    const [H1, H2] = [heard[h], heard[h + 1]];
    if (!G || !H1 || !H2 || dur(H1) >= dur(G) - CUT_TOLERANCE_MS || H2.startMs - H1.endMs < GAP_MIN_MS - BRIDGE_MS) return Infinity;
    // Each stretch is measured on 20 ms windows, so two of them carry one window's extra length.
    const m = Math.abs(dur(H1) + dur(H2) - SPAN_WINDOW_MS - dur(G));
    return m <= FIT_MS ? m : Infinity;
  };

  for (let h = 0; h < heard.length; h++) {
    let best = -1;
    let bestScore = Infinity;
    for (let j = 0; j < groups.length; j++) {
      const score = fit(h, j) + (j === cursor ? 0 : JUMP_PENALTY_MS);
      if (score < bestScore) {
        bestScore = score;
        best = j;
      }
    }
    // The next expected words, on time and of their own length, are taken whatever follows: words of
    // equal length elsewhere (a repeat of them just after) must not pull an on-time match away.
    if (best !== cursor && cursor < groups.length && own(h, cursor) <= EXACT_MS && onTime(h, cursor)) {
      best = cursor;
      bestScore = own(h, cursor);
    }
    const split = splitFit(h, cursor) < bestScore;
    if (split) best = cursor;
    else if (best < 0 || bestScore === Infinity) continue;
    const H = heard[h]!;
    const G = groups[best]!;
    if (best > cursor && cursor < groups.length) {
      out.anomalies.push({ kind: 'missing', at_ms: r1(prevHeardEnd), duration_ms: r1(G.startMs - groups[cursor]!.startMs) });
    } else if (best < cursor) {
      out.anomalies.push({ kind: 'repeat', at_ms: r1(H.startMs), duration_ms: r1(groups[cursor - 1]!.endMs - G.startMs) });
    } else {
      const extra = H.startMs - prevHeardEnd - (G.startMs - prevExpEnd);
      if (extra >= GAP_MIN_MS) out.anomalies.push({ kind: 'gap', at_ms: r1(prevHeardEnd), duration_ms: r1(extra) });
    }
    // Planned time inside the group -> time in the recording (across the inserted silence of a split word).
    const H2 = split ? heard[h + 1]! : null;
    if (H2) out.anomalies.push({ kind: 'gap', at_ms: r1(H.endMs), duration_ms: r1(H2.startMs - H.endMs) });
    const heardEnd = H2 ? H2.endMs : H.endMs;
    const heardDur = H2 ? dur(H) + dur(H2) : dur(H);
    const toHeard = (t: number) => {
      const off = t - G.startMs;
      return H2 && off > dur(H) ? H2.startMs + off - dur(H) : H.startMs + off;
    };
    // The words of the group at their planned offsets; a word is heard when at least half of it is.
    for (let i = G.first; i <= G.last; i++) {
      const w = words[i]!;
      if (G.startMs + heardDur - w.startMs < (w.endMs - w.startMs) / 2) continue;
      out.words.push({ word: w.text, start_ms: r1(toHeard(w.startMs)), end_ms: r1(Math.min(toHeard(w.endMs), heardEnd)) });
    }
    lastWhole = heardDur >= dur(G) - CUT_TOLERANCE_MS;
    prevHeardEnd = heardEnd;
    prevExpEnd = lastWhole ? G.endMs : G.startMs + heardDur;
    lastGroup = best;
    cursor = best + 1;
    if (H2) h++;
  }
  out.complete = groups.length === 0 || (lastGroup === groups.length - 1 && lastWhole);
  if (lastGroup >= 0) out.endMs = prevHeardEnd;
  if (out.complete) out.endMs = Math.min(limitMs, prevHeardEnd + Math.max(0, durationMs - prevExpEnd));
  else out.anomalies.push({ kind: 'cut', at_ms: r1(out.endMs), duration_ms: r1(Math.max(0, durationMs - prevExpEnd)) });
  out.endMs = r1(out.endMs);
  return out;
}
