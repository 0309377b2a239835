/**
 * One utterance of PCM16 16 kHz mono arriving in binary frames: the samples, a small energy detector
 * (for the trailing-silence rule) and the progressive reveal of partial recognition.
 */
import type { Emulator } from '../../../core/emulator.js';
import type { SignatureRecord } from '../../../core/state/signatures.js';
import { findRecord, recognizePcm, toFloat, type Recognition } from '../../shared/recognize.js';

export const INPUT_RATE = 16_000;
/** A partial is considered after every 200 ms of new audio, or 10% of the audio so far when that is more
 * (each look recognises all of the audio: the growing step keeps long streams from costing O(n²)). */
export const PARTIAL_STEP_MS = 200;
const PARTIAL_STEP_RATIO = 0.1;
/** Longest utterance kept (emulator rule): 5 minutes of audio. */
export const MAX_UTTERANCE_MS = 300_000;
/** Energy detector: 20 ms windows whose RMS exceeds 0.01 of full scale (about −40 dBFS) are voiced. */
const WINDOW = 320;
const VOICED_RMS = 0.01;
/** The signature sits in the first 0.56 s; it is looked for until this much audio has arrived. */
const SIGNATURE_SEARCH_MS = 1700;
/** Speaking rates used to reveal text of audio the emulator did not make (docs/audio.md, the duration model): chars per second. */
const LATIN_CPS = 14;
const HAN_CPS = 4;

export interface Utterance {
  /** Samples received, in a buffer that doubles when full. */
  pcm: Int16Array;
  samples: number;
  /** An odd byte left over from the previous frame (frames need not be sample-aligned). */
  carry: number | null;
  winSum: number;
  winCount: number;
  heardVoice: boolean;
  trailingSilent: number;
  lastPartialAt: number;
  lastPartial: string;
  signature: { settled: boolean; record?: SignatureRecord };
}

export function newUtterance(): Utterance {
  return {
    pcm: new Int16Array(16_000),
    samples: 0,
    carry: null,
    winSum: 0,
    winCount: 0,
    heardVoice: false,
    trailingSilent: 0,
    lastPartialAt: 0,
    lastPartial: '',
    signature: { settled: false },
  };
}

export function durationMs(u: Utterance): number {
  return (u.samples * 1000) / INPUT_RATE;
}

export function trailingSilenceMs(u: Utterance): number {
  return u.heardVoice ? (u.trailingSilent * 1000) / INPUT_RATE : 0;
}

/** Appends little-endian 16-bit samples; keeps an odd trailing byte for the next frame. */
export function appendPcm(u: Utterance, data: Buffer): void {
  let bytes = data;
  if (u.carry !== null) {
    bytes = Buffer.concat([Buffer.from([u.carry]), data]);
    u.carry = null;
  }
  const n = bytes.length >> 1;
  if (bytes.length & 1) u.carry = bytes[bytes.length - 1]!;
  if (n === 0) return;
  if (u.samples + n > u.pcm.length) {
    const grown = new Int16Array(Math.max(u.pcm.length * 2, u.samples + n));
    grown.set(u.pcm.subarray(0, u.samples));
    u.pcm = grown;
  }
  const block = u.pcm.subarray(u.samples, u.samples + n);
  for (let i = 0; i < n; i++) {
    const v = bytes.readInt16LE(i * 2);
    block[i] = v;
    const f = v / 32768;
    u.winSum += f * f;
    if (++u.winCount === WINDOW) {
      const voiced = Math.sqrt(u.winSum / WINDOW) > VOICED_RMS;
      if (voiced) {
        u.heardVoice = true;
        u.trailingSilent = 0;
      } else u.trailingSilent += WINDOW;
      u.winSum = 0;
      u.winCount = 0;
    }
  }
  u.samples += n;
}

/** The utterance's samples (a view, no copy). */
export function samplesOf(u: Utterance): Int16Array {
  return u.pcm.subarray(0, u.samples);
}

/** Final recognition of the whole utterance by the platform recognizer. */
export function recognizeUtterance(emu: Emulator, u: Utterance, language?: string): Recognition {
  return recognizePcm(emu, samplesOf(u), INPUT_RATE, language ? { language } : {});
}

/**
 * A new partial when at least PARTIAL_STEP_MS of audio came since the last look and the revealed text
 * grew; else null. The accumulated audio is recognised again each time, and the text is revealed in
 * proportion to the audio heard: for the emulator's own speech up to the sentence times of its
 * signature record, otherwise at the design's speaking rate; never cutting a word in two.
 */
export function nextPartial(emu: Emulator, u: Utterance, language?: string): { text: string; result: Recognition } | null {
  const step = Math.max((PARTIAL_STEP_MS * INPUT_RATE) / 1000, u.lastPartialAt * PARTIAL_STEP_RATIO);
  if (u.samples - u.lastPartialAt < step) return null;
  u.lastPartialAt = u.samples;
  if (!u.heardVoice) return null;
  const samples = samplesOf(u);
  if (!u.signature.settled) {
    const head = samples.subarray(0, Math.round((SIGNATURE_SEARCH_MS / 1000) * INPUT_RATE));
    u.signature.record = findRecord(emu, toFloat(head), INPUT_RATE);
    u.signature.settled = u.signature.record !== undefined || durationMs(u) >= SIGNATURE_SEARCH_MS;
    // Until we know whether this is the emulator's own speech, a guess could contradict later partials.
    if (!u.signature.settled) return null;
  }
  const result = recognizePcm(emu, samples, INPUT_RATE, language ? { language } : {});
  // The emulator's own speech: its whole text (what the recognizer gives once the audio is complete),
  // revealed up to the sentence times of its record.
  const record = u.signature.record;
  const text = record ? revealed(record.text.trim(), durationMs(u), record) : revealed(result.text, durationMs(u));
  if (!text || text.length <= u.lastPartial.length) return null; // partials only ever grow
  u.lastPartial = text;
  return { text, result };
}

/** The part of `text` heard after `heardMs` of audio. */
export function revealed(text: string, heardMs: number, record?: SignatureRecord): string {
  const chars = [...text];
  if (record && record.segments.length) {
    let cursor = 0;
    let count = 0;
    for (const seg of record.segments) {
      const at = text.indexOf(seg.text, cursor);
      if (at < 0) break;
      const segStart = [...text.slice(0, at)].length;
      const segLen = [...seg.text].length;
      cursor = at + seg.text.length;
      if (heardMs >= seg.endMs) count = segStart + segLen;
      else {
        if (heardMs > seg.startMs) count = segStart + Math.floor((segLen * (heardMs - seg.startMs)) / (seg.endMs - seg.startMs));
        break;
      }
    }
    return cutAtWord(chars, count);
  }
  const han = /\p{Script=Han}/u.test(text);
  return cutAtWord(chars, Math.floor((heardMs / 1000) * (han ? HAN_CPS : LATIN_CPS)));
}

const WORDISH = /[\p{L}\p{N}'’]/u;
const HAN = /\p{Script=Han}/u;

/** The first `n` code points, moved back so no Latin word is cut, trailing spaces removed. */
function cutAtWord(chars: string[], n: number): string {
  if (n >= chars.length) return chars.join('');
  let cut = Math.max(0, n);
  while (cut > 0 && WORDISH.test(chars[cut]!) && WORDISH.test(chars[cut - 1]!) && !HAN.test(chars[cut - 1]!)) cut--;
  return chars.slice(0, cut).join('').trimEnd();
}
