/**
 * The last stage of every request: its journal entry is closed (status, duration), the request is
 * counted once in the metrics (route, status, spec code), its one log line is written
 * (core/http/request-log.ts) and the journal's watchers are told.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyRequest } from 'fastify';
import { entryCode } from '../journal/journal.js';
import { logRequest, type SocketClose } from './request-log.js';

/**
 * Closes a request's journal entry (the lifecycle's onResponse; streams and sockets when they end).
 * A socket's wire gives how it closed, for its line.
 */
export function finishEntry(req: FastifyRequest, status: number, close?: SocketClose): void {
  const ctx = req.ctx;
  const entry = ctx?.entry;
  if (!entry) return;
  entry.finish(status, Math.round((performance.now() - ctx.startedAt) * 100) / 100);
  // The first finish counts and logs: a stream may be finished again by its response's end.
  if (!ctx.metered) {
    ctx.metered = true;
    if (ctx.metrics)
      ctx.metrics.request(entry.service, req.method, ctx.route ?? '(no route)', entry.status ?? status, entryCode(entry), entry.duration_ms! / 1000);
    // A stream's audio figures are whole once it ended: observed once, as the report counts them.
    if (ctx.metrics && entry.delivery) ctx.metrics.delivery(entry.service, entry.method, entry.path, entry.delivery);
    logRequest(req, entry, entry.status ?? status, close);
  }
  ctx.journal?.finished(entry);
}
