/**
 * Where the emulator's answer differs from the recorded one, in words a bug report can carry. Values that vary
 * between runs (ids, times, the audio's own bytes) are never compared: fields by presence and type, streams by the
 * sequence of their events, audio by what a decoder reads (format, rate, channels, and duration within a tolerance).
 */
import { probeAudio } from '../../audio/index.js';
import type { ProbeHint } from '../../audio/types.js';
import type { Observed } from './observe.js';

export interface Difference {
  /** What differs: `status`, `code`, `message`, `field`, `events`, `close`, `audio`. */
  what: string;
  /** For a field: its path; for audio: the property. */
  where?: string;
  recorded: unknown;
  emulator: unknown;
}

/** Audio durations this close are the same answer (MP3 encoder delay and padding, a frame either way). */
export function durationTolerance(ms: number): number {
  return Math.max(150, ms * 0.1);
}

export async function compare(recorded: Observed, emulator: Observed, hint: ProbeHint = {}): Promise<Difference[]> {
  const out: Difference[] = [];
  if (recorded.status !== emulator.status) out.push({ what: 'status', recorded: recorded.status, emulator: emulator.status });
  if (recorded.code !== emulator.code) out.push({ what: 'code', recorded: recorded.code ?? null, emulator: emulator.code ?? null });
  else if (recorded.message !== emulator.message) out.push({ what: 'message', recorded: recorded.message ?? null, emulator: emulator.message ?? null });
  if (recorded.fields && emulator.fields) {
    for (const [path, type] of recorded.fields) {
      const other = emulator.fields.get(path);
      if (other !== type) out.push({ what: 'field', where: path, recorded: type, emulator: other ?? 'absent' });
    }
    for (const [path, type] of emulator.fields) if (!recorded.fields.has(path)) out.push({ what: 'field', where: path, recorded: 'absent', emulator: type });
  }
  if (recorded.events && emulator.events && recorded.events.join(' ') !== emulator.events.join(' '))
    out.push({ what: 'events', recorded: recorded.events, emulator: emulator.events });
  if (recorded.close !== undefined && recorded.close !== emulator.close)
    out.push({ what: 'close', recorded: recorded.close, emulator: emulator.close ?? null });
  if (recorded.audio || emulator.audio) out.push(...(await compareAudio(recorded.audio, emulator.audio, hint)));
  return out;
}

async function compareAudio(recorded: Buffer | undefined, emulator: Buffer | undefined, hint: ProbeHint): Promise<Difference[]> {
  if (!recorded || !emulator) return [{ what: 'audio', where: 'present', recorded: !!recorded, emulator: !!emulator }];
  const [a, b] = await Promise.all([probe(recorded, hint), probe(emulator, hint)]);
  if ('error' in a || 'error' in b) {
    const same = 'error' in a && 'error' in b;
    return same ? [] : [{ what: 'audio', where: 'readable', recorded: 'error' in a ? a.error : 'readable', emulator: 'error' in b ? b.error : 'readable' }];
  }
  const out: Difference[] = [];
  if (a.format !== b.format) out.push({ what: 'audio', where: 'format', recorded: a.format, emulator: b.format });
  if (a.sampleRate !== b.sampleRate) out.push({ what: 'audio', where: 'sample_rate', recorded: a.sampleRate, emulator: b.sampleRate });
  if (a.channels !== b.channels) out.push({ what: 'audio', where: 'channels', recorded: a.channels, emulator: b.channels });
  if (Math.abs(a.durationMs - b.durationMs) > durationTolerance(a.durationMs))
    out.push({ what: 'audio', where: 'duration_ms', recorded: a.durationMs, emulator: b.durationMs });
  return out;
}

async function probe(bytes: Buffer, hint: ProbeHint) {
  try {
    return await probeAudio(bytes, hint);
  } catch (err) {
    return { error: (err as Error).message };
  }
}
