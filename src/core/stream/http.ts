/**
 * What the streamed HTTP answers share around the stream guard (core/stream/guard.ts): the client that
 * leaves before its answer, and the opening of a server-sent event stream (T2A and speech-to-text).
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { faultIgnoredHeader } from '../http/request-context.js';
import { finishEntry } from '../http/request-finish.js';

/**
 * Aborts when the client goes away before the answer is complete (the work for it stops). The route
 * may abort it too: its own cut or shutdown stops that work the same way.
 */
export function abortWhenClientLeaves(res: ServerResponse): AbortController {
  const ac = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) ac.abort(new Error('client disconnected'));
  });
  return ac;
}

/** The client left while its answer waited for a slot or was made: nobody is there to answer. */
export function leftBeforeAnswer(req: FastifyRequest, reply: FastifyReply): void {
  reply.hijack();
  // Noted before the entry finishes: the live journal shows a finished entry as it is then.
  req.ctx.entry?.setNote('client disconnected before the answer');
  finishEntry(req, 200);
}

export interface EventStreamHead {
  /** The two streams name their type differently (T2A without a charset, speech-to-text with one). */
  contentType: 'text/event-stream' | 'text/event-stream; charset=utf-8';
  traceId: string;
  /** What the journal entry says of the stream besides its trace id. */
  details?: Record<string, unknown>;
}

/**
 * Opens an event stream: what the request changed is on disk before the first byte (a failed write is
 * still answered as JSON), then the reply is taken over and its head leaves at once (a paced stream
 * may wait before its first event), and the journal entry is marked as a stream.
 */
export async function openEventStream(
  emu: { persist(): Promise<void> },
  req: FastifyRequest,
  reply: FastifyReply,
  head: EventStreamHead,
): Promise<ServerResponse> {
  await emu.persist();
  const res = reply.raw;
  reply.hijack();
  // The pipeline's onSend hook never runs for a hijacked reply: report ignored fields and a bad header here.
  const ignored = faultIgnoredHeader(req);
  res.writeHead(200, {
    // What the hooks so far set on the reply (CORS headers among them): a hijacked reply skips the send path.
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': head.contentType,
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    'Trace-Id': head.traceId,
    ...(ignored !== undefined ? { 'x-emulator-fault-ignored': ignored } : {}),
  });
  res.flushHeaders();
  req.ctx.entry?.markStream('text/event-stream', { trace_id: head.traceId, ...head.details });
  return res;
}
