// The speech voice engine: English text spoken by Flite, laid out as the tone engine lays out its
// bursts (the signature first, then the text's sentences with the pause model between them), its
// word and sentence times taken from Flite's own segment (phone) times. Loaded only when chosen.
import { createHash } from 'node:crypto';
import { GAP_S, TAG_S, type TextPlan } from '../plan.js';
import { GAP_RANK, STEP_CHARS, tokenizeSteps, type Gap, type Steps, type TextOptions, type Token } from '../text/tokens.js';
import type { VoiceTone } from '../types.js';
import { alignWords, type Phone } from './align.js';
import { INPUT_FILE, loadFlite, type Flite } from './flite.js';
import { readWave, resample } from './samples.js';

export { loadFlite, SpeechEngineMissing } from './flite.js';

/** The built-in Flite voices used, with the pitch (Hz) each speaks at by default. */
const FLITE_VOICES = { kal16: 100, rms: 105, awb: 115, slt: 170 } as const;
type FliteVoice = keyof typeof FLITE_VOICES;
const FEMALE: FliteVoice[] = ['slt'];
const MALE: FliteVoice[] = ['kal16', 'rms', 'awb'];
const ANY: FliteVoice[] = ['kal16', 'slt', 'rms', 'awb'];

/** Longest sentence (subtitle), in code points, as the tone engine's timeline. */
const MAX_SENTENCE = 50;
/** Flite's samples (full scale 32768) to the level of the tone voices. */
const LEVEL = 0.8 / 32768;

export interface SpeechVoice {
  flite: FliteVoice;
  /** Mean pitch in Hz. */
  f0: number;
  /** Duration stretch at speed 1 (> 1 slower). */
  stretch: number;
}

/** A voice id (the heaviest of a mix) -> a built-in voice, a pitch within ±2 semitones and a pace within ±6%. */
export function speechVoiceFor(voices: VoiceTone[]): SpeechVoice {
  const id = [...voices].sort((a, b) => b.weight - a.weight)[0]?.id ?? 'default';
  const h = createHash('sha256').update(id).digest();
  const low = id.toLowerCase();
  const list = /female|woman|girl|lady|女/.test(low) ? FEMALE : /male|man|boy|gentleman|男/.test(low) ? MALE : ANY;
  const flite = list[h[0]! % list.length]!;
  return { flite, f0: FLITE_VOICES[flite] * 2 ** ((((h[1]! / 255) * 4 - 2) / 12) as number), stretch: 0.94 + (h[2]! / 255) * 0.12 };
}

const NON_LATIN_LETTER = /(?![\p{Script=Latin}])\p{L}/u;

/** Texts the engine speaks: letters of the Latin script only (else the tone engine voices them). */
export function speakable(text: string): boolean {
  return !NON_LATIN_LETTER.test(text);
}

export interface SpeechOptions extends TextOptions {
  speed?: number;
  /** Multiplies the voice's pitch (the `pitch` setting, emotion and voice_modify). */
  pitchMul: number;
}

/** A plan of the tone engine's shape plus the spoken samples, each at its first frame. */
export interface SpokenPlan extends TextPlan {
  pieces: { at: number; samples: Float32Array }[];
}

/**
 * Where a plan grows while it is made (for a stream that starts before the text is all spoken):
 * the arrays of the plan, and `ready`, the frame before which nothing changes any more.
 */
export interface SpeechSink extends Pick<SpokenPlan, 'segments' | 'words' | 'sentences' | 'pieces'> {
  ready: number;
}

type Word = Extract<Token, { kind: 'word' }>;

const PUNCT = /[,.;:!?]/g;

/** What Flite is given for one word: its spoken form (numbers read, pronunciations applied), letters only. */
function spokenOf(text: string, t: Word, textOf: (a: number, b: number) => string): string {
  const s = t.spoken && !/^\(/.test(t.spoken.trim()) ? t.spoken : textOf(t.start, t.end);
  return s
    .replace(/[^\p{L}\p{N}'’ -]+/gu, ' ')
    .replace(/’/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
}

/** Phones of each word said alone, in one run (one utterance a word): which phones make which word. */
function wordPhones(flite: Flite, spoken: string[]): string[][] {
  const said = spoken.map((s, k) => ({ s, k })).filter((w) => w.s !== '');
  const out: string[][] = spoken.map(() => []);
  if (!said.length) return out;
  const run = flite.run(['-voice', 'kal', '-ps', '-f', INPUT_FILE, '-o', 'none'], said.map((w) => w.s).join('\n\n') + '\n\n');
  const lines = run.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('pau'));
  if (lines.length !== said.length) return out; // not one utterance a word: the aligner spreads the phones
  said.forEach((w, i) => (out[w.k] = lines[i]!.split(/\s+/).filter((p) => p && p !== 'pau')));
  return out;
}

/**
 * Plans and speaks one text from frame `at` (see `planTextSteps` for the tone engine): sentences (at
 * most 50 code points, cut after a comma when longer) are spoken one Flite run each, trimmed to their
 * first and last phone; the pause model of the tone engine separates them (sentence end 500 ms, comma
 * 250 ms, newline 800 ms, divided by speed; pause markers exact); tags are the tone engine's sounds.
 */
export function* speakTextSteps(
  flite: Flite,
  text: string,
  opts: SpeechOptions,
  voice: SpeechVoice,
  sampleRate: number,
  at: number,
  part: number,
  sink: SpeechSink = { segments: [], words: [], sentences: [], pieces: [], ready: at },
): Steps<SpokenPlan> {
  const { u16At, tokens, trailing } = yield* tokenizeSteps(text, opts);
  const textOf = (a: number, b: number) => text.slice(u16At[a], u16At[b]);
  const speed = opts.speed && opts.speed > 0 ? opts.speed : 1;
  const fr = (s: number) => Math.round((s / speed) * sampleRate);
  const words = tokens.filter((t): t is Word => t.kind === 'word');
  const spokenText = new Map(words.map((w) => [w, spokenOf(text, w, textOf)]));
  const stretch = voice.stretch / speed;
  const f0 = voice.f0 * opts.pitchMul;

  const { segments, words: wordSpans, sentences, pieces } = sink;
  let pos = at;
  let started = false;
  let pendingPause: number | null = null;
  let soundEnd = at;
  let chunk: Word[] = [];

  const advance = (gap: Gap) => {
    if (pendingPause !== null) pos += Math.round(pendingPause * sampleRate);
    else if (started) pos += fr(GAP_S[gap]);
    pendingPause = null;
    started = true;
  };
  /** One Flite run of `said`: its samples from the first to the last phone, laid at `pos`. */
  const say = (said: string) => {
    const run = flite.run([
      '-voice',
      voice.flite,
      '-psdur',
      '--setf',
      `duration_stretch=${stretch.toFixed(4)}`,
      '--setf',
      `int_f0_target_mean=${f0.toFixed(2)}`,
      '-t',
      said,
      '-o',
      'out.wav',
    ]);
    const wave = run.wav ? readWave(run.wav) : null;
    const spokenPhones = parsePhones(run.stdout).filter((p) => p.name !== 'pau');
    const first = spokenPhones[0]?.start ?? 0;
    const last = spokenPhones[spokenPhones.length - 1]?.end ?? 0;
    const frames = Math.max(0, Math.round((last - first) * sampleRate));
    if (wave && frames > 0)
      pieces.push({ at: pos, samples: resample(wave.samples, wave.sampleRate, Math.round(first * wave.sampleRate), sampleRate, frames, LEVEL) });
    return { spokenPhones, first, frames };
  };
  const spanOf = (list: Word[], start: number, end: number) => ({
    text: textOf(list[0]!.start, list[list.length - 1]!.tailEnd),
    charStart: list[0]!.start,
    charEnd: list[list.length - 1]!.tailEnd,
    start,
    end,
    part,
  });
  const speak = () => {
    if (!chunk.length) return;
    const list = chunk;
    chunk = [];
    advance(list[0]!.gapBefore);
    // The words with their punctuation (a comma-class pause without a comma gets one), for Flite's phrasing.
    const said = list.map((w, k) => {
      const next = list[k + 1];
      let punct = (textOf(w.end, w.tailEnd).match(PUNCT) ?? []).join('');
      if (next && GAP_RANK[next.gapBefore] >= GAP_RANK.comma && !punct) punct = ',';
      return spokenText.get(w)! + punct;
    });
    const { spokenPhones, first, frames } = say(said.join(' '));
    // Each word said alone (one run for the sentence's words), laid against the sentence's phones.
    const times = alignWords(
      wordPhones(
        flite,
        list.map((w) => spokenText.get(w)!),
      ),
      spokenPhones,
    );
    const toFrame = (s: number) => pos + Math.min(frames, Math.max(0, Math.round((s - first) * sampleRate)));
    wordSpans.push(
      ...list.map((w, k) => ({
        text: textOf(w.start, w.end),
        charStart: w.start,
        charEnd: w.end,
        start: toFrame(times[k]!.start),
        end: toFrame(times[k]!.end),
        part,
      })),
    );
    sentences.push(spanOf(list, pos, pos + frames));
    pos += frames;
    soundEnd = pos;
    sink.ready = pos;
  };
  /**
   * A word whose spoken form is longer than a sentence (a long string without spaces, a long number
   * read out) is a sentence of its own, said in runs of at most MAX_SENTENCE characters laid end to
   * end: no run of Flite, so no wait of a stream, grows with the text.
   */
  function* speakLong(w: Word): Generator<void, void, void> {
    advance(w.gapBefore);
    const start = pos;
    for (const run of runsOf(spokenText.get(w)!)) {
      pos += say(run).frames;
      sink.ready = pos;
      yield;
    }
    wordSpans.push({ text: textOf(w.start, w.end), charStart: w.start, charEnd: w.end, start, end: pos, part });
    sentences.push(spanOf([w], start, pos));
    soundEnd = pos;
  }

  let steps = 0;
  for (const token of tokens) {
    if (++steps % STEP_CHARS === 0) yield;
    if (token.kind === 'pause') {
      speak();
      yield;
      pendingPause = (pendingPause ?? 0) + token.seconds;
      continue;
    }
    if (token.kind === 'tag') {
      speak();
      yield;
      advance(token.gapBefore);
      const frames = fr(TAG_S[token.name]);
      segments.push({ kind: 'tag', start: pos, frames, name: token.name, part });
      pos += frames;
      soundEnd = pos;
      sink.ready = pos;
      continue;
    }
    if (chunk.length && (token.sentenceBefore || token.tailEnd - chunk[0]!.start > MAX_SENTENCE)) {
      // A long sentence is cut after its last comma-class pause within the limit, else before this word.
      const cut = token.sentenceBefore ? -1 : chunk.findLastIndex((w, k) => k > 0 && GAP_RANK[w.gapBefore] >= GAP_RANK.comma);
      const rest = cut > 0 ? chunk.slice(cut) : [];
      if (cut > 0) chunk = chunk.slice(0, cut);
      speak();
      yield;
      chunk = rest;
      if (chunk.length && token.tailEnd - chunk[0]!.start > MAX_SENTENCE) {
        speak();
        yield;
      }
    }
    if (spokenText.get(token)!.length > MAX_SENTENCE) {
      speak();
      yield;
      yield* speakLong(token);
      continue;
    }
    chunk.push(token);
  }
  speak();
  pos += pendingPause !== null ? Math.round(pendingPause * sampleRate) : fr(GAP_S[trailing]);
  return { segments, words: wordSpans, sentences, end: pos, soundEnd, pieces };
}

/** A long spoken form in runs of at most MAX_SENTENCE characters: cut at its last space within that, else hard. */
function runsOf(spoken: string): string[] {
  const runs: string[] = [];
  let rest = spoken;
  while (rest.length > MAX_SENTENCE) {
    const space = rest.lastIndexOf(' ', MAX_SENTENCE);
    const cut = space > 0 ? space : MAX_SENTENCE;
    runs.push(rest.slice(0, cut));
    rest = rest.slice(cut).trimStart();
  }
  if (rest) runs.push(rest);
  return runs;
}

/** Flite's `-psdur` trace (`name:end` per phone, end times in seconds) as timed phones. */
function parsePhones(trace: string): Phone[] {
  const phones: Phone[] = [];
  let offset = 0;
  let last = 0;
  for (const item of trace.split(/\s+/)) {
    const k = item.lastIndexOf(':');
    if (k <= 0) continue;
    const end = Number(item.slice(k + 1));
    if (!Number.isFinite(end)) continue;
    if (end + offset < last - 1e-9) offset = last; // a second utterance starts again from 0
    phones.push({ name: item.slice(0, k), start: last, end: end + offset });
    last = end + offset;
  }
  return phones;
}

let flite: Flite | null = null;

/** Compiles Flite once (rejects with SpeechEngineMissing when its package is not installed). */
export async function prepareSpeechEngine(): Promise<Flite> {
  flite ??= await loadFlite();
  return flite;
}

/** Flite once prepared, for the synchronous entry points. */
export function preparedSpeechEngine(): Flite {
  if (!flite) throw new Error('the speech voice engine is not loaded: start the emulator with --voice-engine speech');
  return flite;
}
