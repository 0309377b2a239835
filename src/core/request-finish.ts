/**
 * The last stage of every request: its journal entry is closed (status, duration), the request is
 * counted once in the metrics (route, status, spec code), and the journal's watchers are told.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyRequest } from 'fastify';
import { entryCode } from './journal.js';

/** Closes a request's journal entry (the lifecycle's onResponse; streams and sockets when they end). */
export function finishEntry(req: FastifyRequest, status: number): void {
  const ctx = req.ctx;
  const entry = ctx?.entry;
  if (!entry) return;
  entry.finish(status, Math.round((performance.now() - ctx.startedAt) * 100) / 100);
  if (!ctx.metered && ctx.metrics) {
    ctx.metered = true;
    ctx.metrics.request(entry.service, req.method, ctx.route ?? '(no route)', entry.status ?? status, entryCode(entry), entry.duration_ms! / 1000);
  }
  ctx.journal?.finished(entry);
}
