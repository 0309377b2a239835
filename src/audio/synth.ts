// Text + voice + settings -> PCM. The plan (timeline, duration) is computed up front; samples are
// rendered block by block as the consumer pulls them, yielding to the event loop between blocks.
import { nextTurn } from './event-loop.js';
import { onceStream } from './once-stream.js';
import { EFFECT_TAIL_S, effectProcessor, softLimit } from './effects.js';
import { signatureFrames, signatureSamples } from './marker.js';
import { planTextSteps, type FrameSpan, type Segment, type TextPlan } from './plan.js';
import { signatureIdFor } from './signature-id.js';
import { renderTag, renderWatermark } from './sounds.js';
import { growingSpeechStream } from './speech-stream.js';
import { runSteps, type Steps } from './text/tokens.js';
import type { DialogueInput, SynthInput, SynthResult, SynthSettings, SynthStream, SynthSummary, Timeline, VoiceTone } from './types.js';
import { mixOf, renderBurst, styleFor } from './voice.js';
import type * as SpeechEngine from './speech/engine.js';

export interface StreamOptions {
  signal?: AbortSignal;
  /**
   * The caller reads `frames`, `durationMs` and the timeline as they grow (final once `done()`
   * resolves): the speech engine's stream then starts at once and grows sentence by sentence, its
   * duration an estimate until its end. Only `synthesizeStreamSliced` takes it; other engines ignore it.
   */
  growing?: boolean;
}

/** Frames per PCM block of a stream. */
export const BLOCK_FRAMES = 4096;
const YIELD_AFTER_MS = 8;
/** Longest stretch of planning between two turns of the event loop. */
const PLAN_SLICE_MS = 4;
const CACHE_ENTRIES = 256;

interface Part {
  text: string;
  voices: VoiceTone[];
  speaker: number;
}

interface Prepared {
  summary: SynthSummary;
  segments: Segment[];
  /** The speech engine's samples from frame 0 (mixed under the segments), or null. */
  speech: Float32Array | null;
  parts: Part[];
  settings: SynthSettings;
  watermarkAt: number;
}

function checkSettings(s: SynthSettings): void {
  if (!Number.isInteger(s.sampleRate) || s.sampleRate < 8000 || s.sampleRate > 48000)
    throw new RangeError(`sampleRate must be an integer in 8000..48000, got ${s.sampleRate}`);
  if (s.channels !== 1 && s.channels !== 2) throw new RangeError(`channels must be 1 or 2, got ${s.channels}`);
}

const ms = (frames: number, sr: number) => Math.round((frames * 1e6) / sr) / 1000;

/** Plans one part (a text, or a dialogue's turn) from frame `at`; `pieces` are spoken samples (speech engine). */
type PartPlanner = (p: Part, at: number, k: number) => Steps<TextPlan & { pieces?: { at: number; samples: Float32Array }[] }>;

let speechEngine: typeof SpeechEngine | null = null;

/**
 * Loads the speech voice engine (its module and Flite's WebAssembly, compiled once), as the emulator
 * does at start with `voiceEngine: 'speech'`. Rejects with one line when the optional package is missing.
 */
export async function loadSpeechEngine(): Promise<void> {
  const engine = await import('./speech/engine.js');
  await engine.prepareSpeechEngine();
  speechEngine = engine;
}

/** The planner of the settings' engine: the speech engine for English text, else the tone engine. */
function plannerFor(parts: Part[], s: SynthSettings): PartPlanner {
  const tones: PartPlanner = (p, at, k) => planTextSteps(p.text, s, s.sampleRate, at, k);
  if (s.engine !== 'speech') return tones;
  const engine = speechEngine;
  if (!engine) throw new Error('the speech voice engine is not loaded (loadSpeechEngine)');
  if (!parts.every((p) => engine.speakable(p.text))) return tones;
  const flite = engine.preparedSpeechEngine();
  const pitchMul = 2 ** ((s.pitch ?? 0) / 12) * styleFor(s).f0Mul;
  return (p, at, k) => engine.speakTextSteps(flite, p.text, { ...s, pitchMul }, engine.speechVoiceFor(p.voices), s.sampleRate, at, k);
}

function* prepare(parts: Part[], s: SynthSettings, id: string, turnGapMs: number, dialogue: boolean): Steps<Prepared> {
  checkSettings(s);
  const planPart = plannerFor(parts, s);
  const pieces: { at: number; samples: Float32Array }[] = [];
  const sr = s.sampleRate;
  let pos = signatureFrames(sr);
  const segments: Segment[] = [];
  const words: FrameSpan[] = [];
  const sentences: FrameSpan[] = [];
  const turns: { speaker: number; text: string; start: number; end: number }[] = [];
  let end = pos;
  for (const [k, p] of parts.entries()) {
    if (k > 0) pos += Math.round((turnGapMs / 1000) * sr);
    const plan = yield* planPart(p, pos, k);
    if (plan.pieces) pieces.push(...plan.pieces);
    segments.push(...plan.segments);
    words.push(...plan.words);
    sentences.push(...plan.sentences);
    turns.push({ speaker: p.speaker, text: p.text, start: pos, end: plan.soundEnd });
    pos = plan.soundEnd;
    end = plan.end;
  }
  const effect = s.voiceModify?.soundEffect;
  const tail = effect ? Math.round(EFFECT_TAIL_S[effect] * sr) : 0;
  const watermarkAt = end + tail;
  const frames = watermarkAt + (s.watermark ? renderWatermark(sr).length : 0);
  const span = (f: FrameSpan) => ({
    text: f.text,
    charStart: f.charStart,
    charEnd: f.charEnd,
    startMs: ms(f.start, sr),
    endMs: ms(f.end, sr),
    ...(dialogue ? { turn: f.part } : {}),
  });
  const timeline: Timeline = { sentences: sentences.map(span), words: words.map(span) };
  const summary: SynthSummary = {
    sampleRate: sr,
    channels: s.channels,
    frames,
    durationMs: (frames * 1000) / sr,
    timeline,
    signatureId: id,
    ...(dialogue ? { turns: turns.map((t) => ({ speaker: t.speaker, text: t.text, startMs: ms(t.start, sr), endMs: ms(t.end, sr) })) } : {}),
    ...(pieces.length ? { engine: 'speech' as const } : {}),
  };
  return { summary, segments, speech: pieces.length ? joinPieces(pieces, watermarkAt, styleFor(s).gain) : null, parts, settings: s, watermarkAt };
}

/** The spoken pieces laid in one buffer from frame 0, at the style's level. */
function joinPieces(pieces: { at: number; samples: Float32Array }[], frames: number, gain: number): Float32Array {
  const out = new Float32Array(frames);
  for (const { at, samples } of pieces) {
    for (let j = 0; j < samples.length && at + j < frames; j++) out[at + j] = samples[j]! * gain;
  }
  return out;
}

/** A sample in [-1, 1] (a little beyond, after the marks) as 16-bit PCM. */
function toInt16(v: number): number {
  return Math.max(-32768, Math.min(32767, Math.round(v * 32767)));
}

function writeFrame(out: Int16Array, j: number, ch: number, v: number): void {
  const s = toInt16(v);
  for (let c = 0; c < ch; c++) out[j * ch + c] = s;
}

/** Renders the prepared plan block by block (interleaved Int16). */
async function* render(p: Prepared, signal?: AbortSignal): AsyncGenerator<Int16Array> {
  const s = p.settings;
  const sr = s.sampleRate;
  const ch = s.channels;
  const total = p.summary.frames;
  const style = styleFor(s);
  const pitchMul = 2 ** ((s.pitch ?? 0) / 12);
  const vol = s.vol && s.vol > 0 ? s.vol : 1;
  const mixes = p.parts.map((part) => mixOf(part.voices));
  const effect = s.voiceModify?.soundEffect;
  const fx = effect ? effectProcessor(effect, sr) : null;
  const sig = signatureSamples(p.summary.signatureId, sr);
  const wm = s.watermark ? renderWatermark(sr) : null;
  const cache = new Map<string, Float32Array>();
  const sound = (seg: Segment): Float32Array => {
    const key = seg.kind === 'tag' ? `t|${seg.name}|${seg.frames}` : `b|${seg.part}|${seg.seed}|${seg.frames}`;
    let v = cache.get(key);
    if (!v) {
      v = seg.kind === 'tag' ? renderTag(seg.name, seg.frames, sr) : renderBurst(seg.frames, mixes[seg.part]!, style, pitchMul, seg.seed, sr);
      if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
      cache.set(key, v);
    }
    return v;
  };
  const addAt = (buf: Float32Array, b0: number, src: Float32Array, at: number) => {
    const from = Math.max(b0, at);
    const to = Math.min(b0 + buf.length, at + src.length);
    for (let f = from; f < to; f++) buf[f - b0]! += src[f - at]!;
  };

  let segIdx = 0;
  let lastYield = performance.now();
  // One mixing buffer for the whole stream: each block is zeroed, not allocated.
  const mixBuf = new Float32Array(BLOCK_FRAMES);
  for (let b0 = 0; b0 < total; b0 += BLOCK_FRAMES) {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    const n = Math.min(BLOCK_FRAMES, total - b0);
    const buf = n === BLOCK_FRAMES ? mixBuf.fill(0) : new Float32Array(n);
    if (p.speech) addAt(buf, b0, p.speech, 0);
    while (segIdx < p.segments.length && p.segments[segIdx]!.start + p.segments[segIdx]!.frames <= b0) segIdx++;
    for (let k = segIdx; k < p.segments.length && p.segments[k]!.start < b0 + n; k++) {
      const seg = p.segments[k]!;
      addAt(buf, b0, sound(seg), seg.start);
    }
    if (fx) fx(buf);
    const out = new Int16Array(n * ch);
    // The signature and the watermark come after effects and volume.
    const marked = b0 < sig.length || (wm !== null && b0 + n > p.watermarkAt);
    if (marked) {
      for (let j = 0; j < n; j++) buf[j] = softLimit(buf[j]! * vol);
      if (b0 < sig.length) addAt(buf, b0, sig, 0);
      if (wm && b0 + n > p.watermarkAt) addAt(buf, b0, wm, p.watermarkAt);
      for (let j = 0; j < n; j++) writeFrame(out, j, ch, buf[j]!);
    } else if (ch === 1) {
      // The common block: volume, limiter and conversion in one pass.
      for (let j = 0; j < n; j++) out[j] = toInt16(softLimit(buf[j]! * vol));
    } else {
      for (let j = 0; j < n; j++) writeFrame(out, j, ch, softLimit(buf[j]! * vol));
    }
    yield out;
    if (performance.now() - lastYield > YIELD_AFTER_MS) {
      await nextTurn();
      lastYield = performance.now();
    }
  }
}

function streamOf(p: Prepared, opts: StreamOptions): SynthStream {
  return onceStream(
    p.summary,
    () => render(p, opts.signal),
    () => p.summary,
  );
}

function single(input: SynthInput): Steps<Prepared> {
  return prepare([{ text: input.text, voices: input.voices, speaker: 0 }], input, signatureIdFor(input), 0, false);
}

function dialogue(input: DialogueInput): Steps<Prepared> {
  return prepare(input.turns, input, signatureIdFor(input), input.turnGapMs ?? 400, true);
}

/** Runs the planning steps, letting the event loop run whenever a slice took YIELD_AFTER_MS. */
async function runSliced<T>(steps: Steps<T>): Promise<T> {
  let last = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() - last > PLAN_SLICE_MS) {
      await nextTurn();
      last = performance.now();
    }
  }
}

async function collect(p: Prepared, opts: StreamOptions = {}): Promise<SynthResult> {
  const pcm = new Int16Array(p.summary.frames * p.summary.channels);
  let at = 0;
  for await (const block of render(p, opts.signal)) {
    pcm.set(block, at);
    at += block.length;
  }
  return { ...p.summary, pcm };
}

/** Loads the speech engine when the settings ask for it and it is not loaded yet. */
async function engineReady(s: SynthSettings): Promise<void> {
  if (s.engine === 'speech' && !speechEngine) await loadSpeechEngine();
}

/** Whole synthesis: PCM, timeline and signature id. */
export async function synthesize(input: SynthInput, opts: StreamOptions = {}): Promise<SynthResult> {
  await engineReady(input);
  return collect(await runSliced(single(input)), opts);
}

/** A podcast: turns in order with `turnGapMs` between them; `turns` gives each turn's span. */
export async function synthesizeDialogue(input: DialogueInput, opts: StreamOptions = {}): Promise<SynthResult> {
  await engineReady(input);
  return collect(await runSliced(dialogue(input)), opts);
}

/**
 * Streaming synthesis: blocks of 4096 frames as rendering advances; abort with `signal`. Planned at
 * once: with the speech engine, that engine must be loaded (`loadSpeechEngine`, done at start).
 */
export function synthesizeStream(input: SynthInput, opts: StreamOptions = {}): SynthStream {
  return streamOf(runSteps(single(input)), opts);
}

/**
 * The same stream, planned in slices that yield to the event loop (planning a 10,000-character
 * text takes tens of milliseconds): what a server uses so other requests keep being served.
 */
export async function synthesizeStreamSliced(input: SynthInput, opts: StreamOptions = {}): Promise<SynthStream> {
  await engineReady(input);
  const engine = speechEngine;
  if (opts.growing && input.engine === 'speech' && engine?.speakable(input.text)) {
    checkSettings(input);
    // The estimate until the last sentence is spoken: the tone engine's plan of the same text.
    const estimate = (await runSliced(single({ ...input, engine: 'tones' }))).summary;
    const sr = input.sampleRate;
    // Nothing of the text sounds before the signature's end: the signature leaves before any of it is spoken.
    const sink = { segments: [], words: [], sentences: [], pieces: [], ready: signatureFrames(sr) };
    const pitchMul = 2 ** ((input.pitch ?? 0) / 12) * styleFor(input).f0Mul;
    const voice = engine.speechVoiceFor(input.voices);
    const steps = engine.speakTextSteps(engine.preparedSpeechEngine(), input.text, { ...input, pitchMul }, voice, sr, sink.ready, 0, sink);
    return growingSpeechStream(input, signatureIdFor(input), steps, sink, estimate, opts.signal);
  }
  return streamOf(await runSliced(single(input)), opts);
}

/** The dialogue stream, planned in slices that yield to the event loop (what a server uses). */
export async function synthesizeDialogueStreamSliced(input: DialogueInput, opts: StreamOptions = {}): Promise<SynthStream> {
  await engineReady(input);
  return streamOf(await runSliced(dialogue(input)), opts);
}

export function synthesizeDialogueStream(input: DialogueInput, opts: StreamOptions = {}): SynthStream {
  return streamOf(runSteps(dialogue(input)), opts);
}
