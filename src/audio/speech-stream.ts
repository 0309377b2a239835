// A stream of the speech engine that starts before any of its text is spoken: Flite speaks a long
// text at tens of times real time, so a 10,000-character text takes seconds to speak whole. The
// stream renders each block as soon as everything before its end is final (the signature's blocks at
// once: no text sounds before its end; then sentence by sentence, no sentence longer than one bounded
// run of Flite); its duration is an
// estimate (the tone engine's plan of the same text) until the last sentence is spoken, and its
// timeline grows sentence by sentence. The samples are those of the whole synthesis, byte for byte.
import { nextTurn } from './event-loop.js';
import { onceStream } from './once-stream.js';
import { EFFECT_TAIL_S, effectProcessor, softLimit } from './effects.js';
import { signatureSamples } from './marker.js';
import type { FrameSpan, TextPlan } from './plan.js';
import { renderTag, renderWatermark } from './sounds.js';
import type { SpeechSink } from './speech/engine.js';
import type { Steps } from './text/tokens.js';
import type { SynthInput, SynthStream, SynthSummary, Timeline } from './types.js';
import { styleFor } from './voice.js';

const BLOCK_FRAMES = 4096;
const YIELD_AFTER_MS = 8;

const msOf = (frames: number, sr: number) => Math.round((frames * 1e6) / sr) / 1000;

/**
 * The stream of `steps` (the speech engine's plan of `input`, growing into `sink`), rendered as it
 * grows; `estimate` gives `frames` and `durationMs` until the plan is done.
 */
export function growingSpeechStream(
  input: SynthInput,
  signatureId: string,
  steps: Steps<TextPlan>,
  sink: SpeechSink,
  estimate: SynthSummary,
  signal?: AbortSignal,
): SynthStream {
  const sr = input.sampleRate;
  const ch = input.channels;
  const timeline: Timeline = { sentences: [], words: [] };
  const summary: SynthSummary = {
    sampleRate: sr,
    channels: ch,
    frames: estimate.frames,
    durationMs: estimate.durationMs,
    timeline,
    signatureId,
    engine: 'speech',
  };
  const stream = onceStream(summary, render, () => ({ ...summary }));

  async function* render(): AsyncGenerator<Int16Array> {
    const style = styleFor(input);
    const vol = input.vol && input.vol > 0 ? input.vol : 1;
    const effect = input.voiceModify?.soundEffect;
    const fx = effect ? effectProcessor(effect, sr) : null;
    const sig = signatureSamples(signatureId, sr);
    const wm = input.watermark ? renderWatermark(sr) : null;
    const span = (f: FrameSpan) => ({ text: f.text, charStart: f.charStart, charEnd: f.charEnd, startMs: msOf(f.start, sr), endMs: msOf(f.end, sr) });
    let planned = false;
    let total = Infinity;
    let watermarkAt = Infinity;
    const advance = () => {
      const r = steps.next();
      while (timeline.words.length < sink.words.length) timeline.words.push(span(sink.words[timeline.words.length]!));
      while (timeline.sentences.length < sink.sentences.length) timeline.sentences.push(span(sink.sentences[timeline.sentences.length]!));
      if (!r.done) return;
      planned = true;
      watermarkAt = r.value.end + (effect ? Math.round(EFFECT_TAIL_S[effect] * sr) : 0);
      total = watermarkAt + (wm ? wm.length : 0);
      summary.frames = stream.frames = total;
      summary.durationMs = stream.durationMs = (total * 1000) / sr;
    };
    const addAt = (buf: Float32Array, b0: number, src: Float32Array, at: number, gain = 1) => {
      const from = Math.max(b0, at);
      const to = Math.min(b0 + buf.length, at + src.length);
      for (let f = from; f < to; f++) buf[f - b0]! += src[f - at]! * gain;
    };
    let last = performance.now();
    const breathe = async () => {
      if (performance.now() - last > YIELD_AFTER_MS) {
        await nextTurn();
        last = performance.now();
      }
    };
    let firstPiece = 0;
    for (let b0 = 0; ;) {
      while (!planned && sink.ready < b0 + BLOCK_FRAMES) {
        if (signal?.aborted) throw signal.reason ?? new Error('aborted');
        advance();
        await breathe();
      }
      if (b0 >= total) return;
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      const n = Math.min(BLOCK_FRAMES, total - b0);
      const buf = new Float32Array(n);
      // The same sums, in the same order, as the whole synthesis: spoken pieces, then tags.
      while (firstPiece < sink.pieces.length && sink.pieces[firstPiece]!.at + sink.pieces[firstPiece]!.samples.length <= b0) firstPiece++;
      for (let k = firstPiece; k < sink.pieces.length && sink.pieces[k]!.at < b0 + n; k++) {
        const p = sink.pieces[k]!;
        const piece = new Float32Array(Math.min(p.samples.length, b0 + n - p.at));
        for (let j = Math.max(0, b0 - p.at); j < piece.length; j++) piece[j] = p.samples[j]! * style.gain;
        addAt(buf, b0, piece, p.at);
      }
      for (const seg of sink.segments) {
        if (seg.kind !== 'tag' || seg.start >= b0 + n || seg.start + seg.frames <= b0) continue;
        addAt(buf, b0, renderTag(seg.name, seg.frames, sr), seg.start);
      }
      if (fx) fx(buf);
      // As the whole synthesis: the level is kept in the buffer only where marks are added after it.
      const marked = b0 < sig.length || (wm !== null && b0 + n > watermarkAt);
      if (marked) {
        for (let j = 0; j < n; j++) buf[j] = softLimit(buf[j]! * vol);
        if (b0 < sig.length) addAt(buf, b0, sig, 0);
        if (wm && b0 + n > watermarkAt) addAt(buf, b0, wm, watermarkAt);
      }
      const out = new Int16Array(n * ch);
      for (let j = 0; j < n; j++) {
        const level = marked ? buf[j]! : softLimit(buf[j]! * vol);
        const v = Math.max(-32768, Math.min(32767, Math.round(level * 32767)));
        for (let c = 0; c < ch; c++) out[j * ch + c] = v;
      }
      yield out;
      b0 += n;
      await breathe();
    }
  }

  return stream;
}
