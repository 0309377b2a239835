/**
 * The speech service's own state, per account: usage counters and the streams in flight (so a test
 * can see that a client who left stopped the work). Generated files live in the blob store under
 * `speech/<account id>/`; reset removes them.
 */
import * as z from 'zod';
import { accountArea, areaOf } from '../../core/state/areas.js';
import type { Emulator, StateArea } from '../../core/emulator.js';
import type { TextNormalizationMode } from './schema.js';

/** How a speech stream's record ends (the state view's `status`); the stream guard's own ending is core's `StreamEnd`. */
export type StreamRecordEnd = 'done' | 'aborted' | 'cut' | 'failed';

interface StreamRun {
  trace_id: string;
  status: 'streaming' | StreamRecordEnd;
  events: number;
}

interface AccountUsage {
  requests: number;
  usage_characters: number;
  /** Requests (socket pieces included) by the text normalisation they got (rule E10); absent until one asks. */
  text_normalization_modes?: Partial<Record<'basic' | 'quality', number>>;
  streams: StreamRun[];
}

const KEEP_STREAMS = 20;

/** Streams still running whose events are read when shown, not told one by one. */
const liveEvents = new WeakMap<StreamRun, () => number>();

export interface SpeechArea {
  /** Counts one synthesis: what the usage record reads of its plan (model.ts `SynthesisPlan`). */
  count(accountId: string, plan: { usageCharacters: number; textNormalizationMode: TextNormalizationMode | undefined }): void;
  /**
   * A stream begins. Its events so far are told with `progress`, or read from `events` when the state view
   * is shown (a stream whose chunks are counted elsewhere, by its guard, is not told of each one).
   */
  startStream(
    accountId: string,
    traceId: string,
    events?: () => number,
  ): { progress(events: number): void; end(status: StreamRecordEnd, events: number): void };
}

/** The emulator's speech area: made by the first caller (HTTP routes or the socket), shared after. */
export function speechArea(emu: Emulator): SpeechArea {
  return areaOf(emu, 'speech', () => newSpeechArea(emu));
}

/** A stream as the state view shows it: a running one with its events so far. */
function shownRun(run: StreamRun): StreamRun {
  const live = liveEvents.get(run);
  return live ? { ...run, events: live() } : { ...run };
}

/** What is saved of an account's usage: streams still running are not (they end with the process). */
function saved(record: AccountUsage): AccountUsage {
  return { ...record, streams: record.streams.filter((s) => s.status !== 'streaming') };
}

function newSpeechArea(emu: Emulator): StateArea & SpeechArea {
  const area = accountArea<AccountUsage>({
    name: 'speech',
    savedByAccount: {
      value: z.looseObject({
        requests: z.number(),
        usage_characters: z.number(),
        text_normalization_modes: z.record(z.string(), z.number()).optional(),
        streams: z.array(z.looseObject({})).optional(),
      }),
      saved,
      restore: (record) => ({ ...record, streams: [...(record.streams ?? [])] }),
    },
    show(record) {
      if (!record) return { requests: 0, usage_characters: 0, streams_active: 0, streams: [] };
      return { ...record, streams_active: record.streams.filter((s) => s.status === 'streaming').length, streams: record.streams.map(shownRun) };
    },
    dropFiles: (accountId) => void emu.blobs.removeTree(accountId === undefined ? 'speech' : `speech/${accountId}`).catch(() => undefined),
  });
  const usage = area.byAccount;
  const usageOf = (id: string) => {
    let record = usage.get(id);
    if (!record) usage.set(id, (record = { requests: 0, usage_characters: 0, streams: [] }));
    return record;
  };
  return {
    ...area,
    count(accountId, plan) {
      const record = usageOf(accountId);
      record.requests++;
      record.usage_characters += plan.usageCharacters;
      const mode = plan.textNormalizationMode;
      if (mode) {
        const modes = (record.text_normalization_modes ??= {});
        modes[mode] = (modes[mode] ?? 0) + 1;
      }
      emu.markDirty('speech', accountId);
    },
    startStream(accountId, traceId, events) {
      const record = usageOf(accountId);
      const run: StreamRun = { trace_id: traceId, status: 'streaming', events: 0 };
      if (events) liveEvents.set(run, events);
      record.streams.push(run);
      if (record.streams.length > KEEP_STREAMS) record.streams.splice(0, record.streams.length - KEEP_STREAMS);
      return {
        progress(events) {
          run.events = events;
        },
        end(status, events) {
          liveEvents.delete(run);
          run.status = status;
          run.events = events;
          emu.markDirty('speech', accountId);
        },
      };
    },
  };
}
