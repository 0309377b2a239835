/**
 * `POST /_emulator/hear`: what a listener heard in a recording (what a client under test played).
 * The body is the audio (audio/mpeg, audio/wav, audio/flac, audio/ogg with Opus or Vorbis, audio/pcm;rate=N);
 * the answer lists the emulator's own syntheses found in it (by their signatures, anywhere in the
 * recording), the words of each that were heard with their times, and what differs from what was
 * synthesized (gaps, repeats, skips, cuts). Audio without a signature gets the recognition fixture's text.
 */
import type { FastifyInstance } from 'fastify';
import { ActivityMeter } from '../audio/activity.js';
import { SLICE_FRAMES } from '../audio/decode-slices.js';
import { nextTurn } from '../audio/event-loop.js';
import { alignUtterance, BRIDGE_MS, type HeardAnomaly, type TimedWord } from '../audio/hear/align.js';
import { alignSpeech, isContinuous } from '../audio/hear/align-speech.js';
import { decodeHeard, HEAR_MAX_BYTES, HeardAudioError, heardFormat } from '../audio/hear/input.js';
import { findSignatures, type FoundSignature } from '../audio/hear/scan.js';
import { analyzeLine } from '../audio/hear/line.js';
import { werWords, wordEdits } from '../audio/hear/wer.js';
import { SIGNATURE_SECONDS } from '../audio/marker.js';
import type { Emulator } from '../core/emulator.js';
import { entryCode } from '../core/journal/journal.js';
import type { SignatureRecord } from '../core/state/signatures.js';
import { recognizeInSlices } from '../services/shared/recognize.js';
import { ControlError, input } from './common.js';

/** The words of a record with their planned times (its sentences when it kept no words). */
function timedWords(record: SignatureRecord): TimedWord[] {
  return (record.words ?? record.segments).map((w) => ({ text: w.text, startMs: w.startMs, endMs: w.endMs }));
}

/** The journal keeps a long text as its first 64 characters and its length (core/journal/entry.ts summarize). */
function sameText(kept: unknown, text: string): boolean {
  return typeof kept === 'string' && (kept === text || (text.length > 256 && kept === `${text.slice(0, 64)}…(${text.length} chars)`));
}

type SynthesisBody = { text?: unknown; voice_id?: unknown; voice_setting?: { voice_id?: unknown } };

/** False when the request names a voice the synthesis did not use (same text, another voice: another audio). */
function sameVoice(body: SynthesisBody, record: SignatureRecord): boolean {
  const named = [body.voice_setting?.voice_id, body.voice_id].filter((v): v is string => typeof v === 'string');
  return !named.length || named.some((v) => record.speakers.some((s) => s.voices.includes(v)));
}

/**
 * The newest journal entry that answered this synthesis (its request's text and voice, an answer
 * without an error code), with the trace id its answer showed.
 */
function synthesisEntry(emu: Emulator, record: SignatureRecord): { journalId: string | null; traceId: string | null } {
  for (const entry of emu.journal.list({})) {
    if ((entry.status !== null && entry.status >= 400) || (entryCode(entry) ?? 0) !== 0) continue;
    const body = entry.request.toJSON().body as SynthesisBody | undefined;
    if (!body || typeof body !== 'object' || !sameText(body.text, record.text) || !sameVoice(body, record)) continue;
    const summary = entry.response.summary as { trace_id?: unknown } | undefined;
    const trace = typeof summary?.trace_id === 'string' ? summary.trace_id : null;
    return { journalId: entry.id, traceId: trace };
  }
  return { journalId: null, traceId: null };
}

/**
 * Silences each signature burst in place (the samples are not read again once signatures are found):
 * its 50 ms tail is too short for the activity detector to keep the burst apart from the first word.
 */
function silenceSignatures(samples: Float32Array, sampleRate: number, found: readonly FoundSignature[]): Float32Array {
  for (const f of found) {
    const a = Math.round((f.startMs * sampleRate) / 1000);
    samples.fill(0, a, Math.min(samples.length, a + Math.round((SIGNATURE_SECONDS - 0.025) * sampleRate)));
  }
  return samples;
}

/** The speech activity of the recording, measured slice by slice with a turn of the event loop between. */
async function activityInSlices(samples: Float32Array, sampleRate: number, minRms?: number) {
  const meter = new ActivityMeter(sampleRate);
  for (let from = 0; from < samples.length; from += SLICE_FRAMES) {
    meter.push(samples.subarray(from, from + SLICE_FRAMES));
    await nextTurn();
  }
  return meter.spans({ minGapMs: BRIDGE_MS, minSpanMs: 20, rangeDb: 30, minRms });
}

const rate4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * On a noisy line, a word is sound above the noise: the activity threshold sits 6 dB over the noise
 * floor, or halfway (in dB) between the noise and the speech when they are closer than 12 dB.
 */
function aboveNoise(line: { level_dbfs: number | null; noise_dbfs: number | null }): number | undefined {
  if (line.noise_dbfs === null || line.level_dbfs === null) return undefined;
  return 10 ** ((line.noise_dbfs + Math.min(6, (line.level_dbfs - line.noise_dbfs) / 2)) / 20);
}

export async function hear(emu: Emulator, samples: Float32Array, sampleRate: number) {
  const durationMs = (samples.length * 1000) / sampleRate;
  const found = (await findSignatures(samples, sampleRate)).filter((f) => emu.signatures.get(f.id));
  // What the line did, measured before the signatures are silenced below.
  const line = analyzeLine(
    samples,
    sampleRate,
    found.map((f) => ({ startMs: f.startMs, words: timedWords(emu.signatures.get(f.id)!) })),
  );
  const spans = await activityInSlices(silenceSignatures(samples, sampleRate, found), sampleRate, found.length ? aboveNoise(line) : undefined);
  const utterances = [];
  const anomalies: (HeardAnomaly & { trace_id: string | null })[] = [];
  let edits = 0;
  let saidWords = 0;
  for (const [k, f] of found.entries()) {
    const record = emu.signatures.get(f.id)!;
    const limitMs = found[k + 1]?.startMs ?? durationMs;
    // The speech engine's continuous speech is read through the plan's offset; the tone engine's separated words one by one.
    // (A record saved before records named their engine: continuous when its words touch.)
    const timed = timedWords(record);
    const heard = (record.engine === 'speech' || isContinuous(timed) ? alignSpeech : alignUtterance)(timed, record.durationMs, f.startMs, limitMs, spans);
    const { journalId, traceId } = synthesisEntry(emu, record);
    const heardText = heard.words.map((w) => w.word).join(' ');
    const said = werWords(record.text);
    const wrong = wordEdits(said, werWords(heardText));
    edits += wrong;
    saidWords += said.length;
    utterances.push({
      trace_id: traceId,
      journal_id: journalId,
      signature_id: record.id,
      full_text: record.text,
      heard_text: heardText,
      /** Word error rate of what was heard against what was synthesized. */
      word_error_rate: rate4(said.length ? wrong / said.length : 0),
      complete: heard.complete,
      start_ms: Math.round(f.startMs),
      end_ms: heard.endMs,
      words: heard.words,
    });
    for (const a of heard.anomalies) anomalies.push({ ...a, trace_id: traceId });
  }
  if (found.length === 0) {
    // Audio the emulator did not make (replayed from a tape of the real service, or made elsewhere): no words to
    // align, but its gaps and a cut are measured from the sound.
    anomalies.push(...soundAnomalies(spans, durationMs));
    const text = (await recognizeInSlices(emu, samples, sampleRate)).text;
    return { duration_ms: Math.round(durationMs), text, word_error_rate: null, utterances, anomalies, line, own: false, note: NOT_OWN };
  }
  const text = utterances
    .map((u) => u.heard_text)
    .filter(Boolean)
    .join(' ');
  // Over every utterance found.
  const wordErrorRate = rate4(saidWords ? edits / saidWords : 0);
  return { duration_ms: Math.round(durationMs), text, word_error_rate: wordErrorRate, utterances, anomalies, line, own: true };
}

const NOT_OWN =
  "this audio carries no signature of this emulator's own synthesis (audio replayed from a tape of the real service, or made elsewhere): its words are not aligned, its text is the recognition fixture's; its duration and gaps are measured from the sound";

/** A silence inside audio of unknown making this long or longer is a gap (speech pauses are shorter). */
const FOREIGN_GAP_MS = 1200;
/** Gaps of audio the emulator did not make, from its speech activity alone (a cut shows in its shorter duration). */
function soundAnomalies(spans: { startMs: number; endMs: number }[], durationMs: number): (HeardAnomaly & { trace_id: null })[] {
  const out: (HeardAnomaly & { trace_id: null })[] = [];
  for (let i = 1; i < spans.length; i++) {
    const gap = spans[i]!.startMs - spans[i - 1]!.endMs;
    if (gap >= FOREIGN_GAP_MS) out.push({ kind: 'gap', at_ms: Math.round(spans[i - 1]!.endMs), duration_ms: Math.round(gap), trace_id: null });
  }
  return out;
}

/** Reads the body as bytes, refusing more than 50 MB with a 400 as soon as it is over. */
function readBody(payload: NodeJS.ReadableStream, done: (err: Error | null, body?: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  payload.on('data', (c: Buffer) => {
    if (over) return;
    size += c.length;
    if (size > HEAR_MAX_BYTES) {
      over = true;
      chunks.length = 0;
      // Reads on (and drops) the rest, so the client gets the answer instead of a reset.
      done(new ControlError(400, `the body is over 50 MB (${HEAR_MAX_BYTES} bytes): send at most 50 MB of audio`));
      return;
    }
    chunks.push(c);
  });
  payload.on('end', () => {
    if (!over) done(null, Buffer.concat(chunks));
  });
  payload.on('error', (err: Error) => {
    if (!over) done(err);
  });
}

export function hearRoutes(app: FastifyInstance, emu: Emulator): void {
  // Audio bodies are for hear alone: other control routes answer them as before (they read JSON only).
  app.addContentTypeParser(/^audio\//i, (req, payload, done) => {
    if (req.routeOptions.url?.endsWith('/hear')) return readBody(payload, done as never);
    done(new ControlError(400, `body must be JSON (Content-Type: application/json), not ${req.headers['content-type']}`), undefined);
  });
  app.post(
    '/hear',
    {
      ...input({ body: true, what: 'hear' }),
      bodyLimit: HEAR_MAX_BYTES * 2,
      schema: {
        summary: 'What a listener heard in a recording',
        description:
          'Body: the audio (Content-Type audio/mpeg, audio/wav, audio/flac, audio/ogg with Opus or Vorbis, or audio/pcm;rate=N of 16-bit little-endian mono), at most 50 MB. ' +
          'Answer: {duration_ms, text, word_error_rate, utterances: [{trace_id, journal_id, signature_id, full_text, heard_text, word_error_rate, complete, start_ms, end_ms, words: [{word, start_ms, end_ms}]}], anomalies: [{kind: gap|repeat|missing|cut, at_ms, duration_ms, trace_id}], ' +
          'line: {level_dbfs, noise_dbfs, snr_db, clipped_samples, leading_silence_ms, impairments: [{kind: noise|low_level|clipping|dropout|leading_silence, at_ms, duration_ms?, value?}]}, own, note?}: own is false for audio without a signature of this emulator (replayed from a tape, made elsewhere), whose duration and gaps are measured from the sound.',
      },
      // The format is checked before the body is read: a JSON or form body is refused naming the formats.
      onRequest: async (req) => {
        try {
          heardFormat(req.headers['content-type']);
        } catch (err) {
          if (err instanceof HeardAudioError) throw new ControlError(400, err.message);
          throw err;
        }
      },
    },
    async (req) => {
      const format = heardFormat(req.headers['content-type']);
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      try {
        const { samples, sampleRate } = await decodeHeard(body, format);
        return await hear(emu, samples, sampleRate);
      } catch (err) {
        if (err instanceof HeardAudioError) throw new ControlError(400, err.message);
        throw err;
      }
    },
  );
}
