/**
 * Speaker diarization. Emulator audio → its real turns (a podcast: one speaker per voice with its
 * line times; a single synthesis: one speaker over its sentences), shifted by where the audio really
 * starts (MP3 encoder delay, trimming). Other audio → the diarization fixture by SHA-256 of the file,
 * else one speaker over the non-silent stretches of an energy detector. Speaker labels are
 * `SPEAKER_00`, `SPEAKER_01`… in order of first appearance; times are seconds with 3 decimals.
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import type { SignatureRecord } from '../../../core/state/signatures.js';
import { PlatformError } from '../envelope.js';
import { chargeOrRefuse, priceOf } from '../shared/billing.js';
import { fetchObjectKey, fetchUrl, readInputAudio, signatureOffsetMs, type InputAudio } from '../shared/input-audio.js';
import type { DiarizationData, DiarizationSpeaker, DiarizeBody } from './schema.js';

/**
 * The longest audio diarized (its declared duration, refused before decoding): the energy detector
 * reads the whole file, and this keeps one request under a few seconds of work.
 */
export const MAX_DIARIZATION_SECONDS = 3600;

const secs = (ms: number) => Math.round(Math.max(0, ms)) / 1000;

export function speakerLabel(index: number): string {
  return `SPEAKER_${String(index).padStart(2, '0')}`;
}

function speaker(index: number, segments: { start_time: number; end_time: number }[]): DiarizationSpeaker {
  const total = segments.reduce((s, g) => s + (g.end_time - g.start_time), 0);
  return { speaker_id: speakerLabel(index), total_dur: Math.round(total * 1000) / 1000, segments };
}

/** Turns of a signature record grouped by speaker, shifted by `offsetMs` and clipped to the audio. */
export function speakersOfRecord(record: SignatureRecord, offsetMs: number, durationMs: number): DiarizationSpeaker[] {
  const order: number[] = [];
  const bySpeaker = new Map<number, { start_time: number; end_time: number }[]>();
  for (const seg of record.segments) {
    const start = seg.startMs + offsetMs;
    const end = Math.min(seg.endMs + offsetMs, durationMs);
    if (end <= start) continue;
    const who = record.kind === 'dialogue' ? (seg.speaker ?? 1) : 1;
    if (!bySpeaker.has(who)) {
      bySpeaker.set(who, []);
      order.push(who);
    }
    bySpeaker.get(who)!.push({ start_time: secs(start), end_time: secs(end) });
  }
  return order.map((who, i) => speaker(i, bySpeaker.get(who)!));
}

export async function speakersOf(emu: Emulator, audio: InputAudio): Promise<DiarizationSpeaker[]> {
  if (audio.record && audio.record.segments.length > 0) {
    return speakersOfRecord(audio.record, signatureOffsetMs(audio.samples, audio.sampleRate), audio.durationMs);
  }
  const rule = emu.fixtures.data['diarization.json'].rules.find((r) => r.sha256 === audio.sha256);
  if (rule) {
    return rule.speakers.map((s) => {
      const segments = s.segments.map((g) => ({ start_time: g.start_time, end_time: g.end_time }));
      return { ...speaker(0, segments), speaker_id: s.speaker_id };
    });
  }
  const spans = await audio.activity();
  if (spans.length === 0) return [];
  return [
    speaker(
      0,
      spans.map((s) => ({ start_time: secs(s.startMs), end_time: secs(s.endMs) })),
    ),
  ];
}

/** Resolves the source: `url` when given (it wins), else `object_key` of this account; blank is absent. */
async function sourceOf(emu: Emulator, account: Account, input: DiarizeBody): Promise<{ field: string; bytes: Buffer; name: string; contentType?: string }> {
  const url = input.url?.trim() ?? '';
  const key = input.object_key?.trim() ?? '';
  if (url) return { field: 'url', ...(await fetchUrl(emu, 'url', url)) };
  if (key) return { field: 'object_key', ...(await fetchObjectKey(emu, account, 'object_key', key)) };
  throw new PlatformError('param', 'one of object_key or url is required');
}

/**
 * Diarizes the audio of `object_key` or `url` for `account` (the route's schema typed the fields).
 * In order: one of url / object_key (10001), the source readable (10001 naming the field), the audio
 * readable and at most MAX_DIARIZATION_SECONDS long (10001), the balance for `diarization_audio_second` (20003); answers `{trace_id, speakers}`.
 * Throws PlatformError (usable without HTTP, e.g. by the /mcp tool `diarize`).
 */
export async function diarize(emu: Emulator, account: Account, input: DiarizeBody): Promise<DiarizationData> {
  const src = await sourceOf(emu, account, input);
  const audio = await readInputAudio(emu, src.field, src.bytes, { filename: src.name, contentType: src.contentType }, undefined, MAX_DIARIZATION_SECONDS);
  const price = priceOf(emu.fixtures.data['billing.json'].prices_micro.diarization_audio_second, audio.durationMs);
  const speakers = await speakersOf(emu, audio); // a file broken past its head is refused before the charge
  chargeOrRefuse(emu, account, price, 'diarization');
  return { trace_id: emu.ids.traceId(account.id), speakers };
}
