/**
 * The guard of one request's stream (core/stream/guard.ts is the guard itself): what a request brings to
 * it — its journal entry, its fault's `cut_after_chunks`, its pace and audio faults over the account's and
 * the latency profile's, the entry finished when an HTTP answer's connection is gone, the request's log
 * line told how the stream ended.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { takeFault } from '../http/request-context.js';
import { finishEntry } from '../http/request-finish.js';
import { trackStream } from '../http/request-log.js';
import type { StreamGuardOptions, StreamTransport } from './frames.js';
import { StreamGuard } from './guard.js';
import { REALISTIC_PACE, shapeOf, type AudioCarrier, type StreamShape } from './shaping.js';

/**
 * The guard of one request's stream: its journal entry, its `cut_after_chunks` (taken here, so the
 * fault is read in one place) and, for an HTTP answer (`status`), the entry finished when the
 * connection is gone. A socket leaves `status` out: its entry finishes when the socket closes.
 * A stream of synthesized audio names its `carrier`: its pace and audio faults are read here too,
 * over the account's and the `latency` profile's (`realistic`: REALISTIC_PACE).
 * An HTTP answer that has no `gone` of its own names its `response`: the guard's `gone` fires when
 * its connection closes before the answer is complete. `endWhenLeft` (a pulled body, which no write
 * tells that the client left): the stream then ends `left` at once and the socket is let go.
 */
export function guardStream<F>(
  req: FastifyRequest,
  transport: StreamTransport<F>,
  options: Omit<StreamGuardOptions, 'entry' | 'cutAfterChunks' | 'finish' | 'shape' | 'seed'> & {
    status?: number;
    carrier?: AudioCarrier;
    latency?: 'none' | 'realistic';
    accountPace?: StreamShape;
    response?: ServerResponse;
    endWhenLeft?: boolean;
  } = {},
): StreamGuard<F> {
  const { status, carrier, latency, accountPace, response, endWhenLeft, ...rest } = options;
  const left = response ? new AbortController() : undefined;
  const entry = req.ctx?.entry ?? null;
  // The request's fault over the account's standing stream faults over the latency profile.
  const account = accountPace ?? req.ctx?.account?.streamFaults;
  const base = latency === 'realistic' || account ? { ...(latency === 'realistic' ? REALISTIC_PACE : {}), ...account } : undefined;
  // The account's standing faults on a stream they shape are a fault of its entry (journal, log, verify).
  if (carrier && account && Object.keys(account).length > 0) entry?.noteAccountFaults(account as Record<string, number>);
  const guard = new StreamGuard(transport, {
    ...rest,
    entry,
    cutAfterChunks: takeFault(req, 'cut_after_chunks'),
    finish: status === undefined ? undefined : () => finishEntry(req, status),
    shape: carrier ? shapeOf(req, carrier, base) : undefined,
    seed: entry?.id ?? '',
    // Time to first audio counts from the request's arrival: the moment the pace counts `ttfa_ms` from when the
    // stream names it, so a paced first audio is never measured under the `ttfa_ms` asked.
    answerFrom: rest.answerFrom ?? rest.startedAt ?? req.ctx?.startedAt,
    // A stream given both its own `gone` and its response ends on either.
    ...(left ? { gone: rest.gone ? AbortSignal.any([rest.gone, left.signal]) : left.signal } : {}),
  });
  response?.on('close', () => {
    if (response.writableFinished) return;
    left!.abort();
    if (!endWhenLeft) return;
    void guard.end('left');
    req.raw.socket.destroy();
  });
  // The request's log line says how its stream ended.
  trackStream(req, guard);
  return guard;
}
