import type { Emulator, StateArea } from '../../core/emulator.js';
import type { SynthesisPlan } from './model.js';

/**
 * The speech service's own state, per account: usage counters and the streams in flight (so a test
 * can see that a client who left stopped the work). Generated files live in the blob store under
 * `speech/<account id>/`; reset removes them.
 */
export type StreamEnd = 'done' | 'aborted' | 'cut' | 'failed';

interface StreamRun {
  trace_id: string;
  status: 'streaming' | StreamEnd;
  events: number;
}

interface AccountUsage {
  requests: number;
  usage_characters: number;
  streams: StreamRun[];
}

const KEEP_STREAMS = 20;

export interface SpeechArea {
  count(accountId: string, plan: SynthesisPlan): void;
  startStream(accountId: string, traceId: string): { progress(events: number): void; end(status: StreamEnd, events: number): void };
}

/** The emulator's speech area: registered by the first caller (HTTP routes or the socket), shared after. */
export function speechArea(emu: Emulator): SpeechArea {
  const existing = emu.areas.get('speech') as (StateArea & Partial<SpeechArea>) | undefined;
  if (existing?.count && existing.startStream) return existing as StateArea & SpeechArea;
  const usage = new Map<string, AccountUsage>();
  const of = (id: string) => {
    let u = usage.get(id);
    if (!u) usage.set(id, (u = { requests: 0, usage_characters: 0, streams: [] }));
    return u;
  };
  const api: SpeechArea = {
    count(accountId, plan) {
      const u = of(accountId);
      u.requests++;
      u.usage_characters += plan.usageCharacters;
      emu.markDirty();
    },
    startStream(accountId, traceId) {
      const u = of(accountId);
      const run: StreamRun = { trace_id: traceId, status: 'streaming', events: 0 };
      u.streams.push(run);
      if (u.streams.length > KEEP_STREAMS) u.streams.splice(0, u.streams.length - KEEP_STREAMS);
      return {
        progress(events) {
          run.events = events;
        },
        end(status, events) {
          run.status = status;
          run.events = events;
          emu.markDirty();
        },
      };
    },
  };
  emu.registerArea({
    name: 'speech',
    reset(accountId) {
      if (accountId === undefined) {
        usage.clear();
        void emu.blobs.removeTree('speech').catch(() => undefined);
      } else {
        usage.delete(accountId);
        void emu.blobs.removeTree(`speech/${accountId}`).catch(() => undefined);
      }
    },
    view(accountId) {
      const u = usage.get(accountId);
      if (!u) return { requests: 0, usage_characters: 0, streams_active: 0, streams: [] };
      return { ...u, streams_active: u.streams.filter((s) => s.status === 'streaming').length, streams: u.streams.map((s) => ({ ...s })) };
    },
    save: () => Object.fromEntries([...usage].map(([id, u]) => [id, { ...u, streams: u.streams.filter((s) => s.status !== 'streaming') }])),
    load(data) {
      usage.clear();
      for (const [id, u] of Object.entries((data ?? {}) as Record<string, AccountUsage>)) usage.set(id, { ...u, streams: [...(u.streams ?? [])] });
    },
    ...api,
  } as StateArea & SpeechArea);
  return api;
}
