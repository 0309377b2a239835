import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { countChunk, takeFault } from '../../../core/request-context.js';
import { finishEntry } from '../../../core/request-finish.js';
import { planTts, startTtsStream, synthesizeTts, TTS_BIT_DEPTH, TTS_CHANNELS, TTS_SAMPLE_RATE } from './model.js';
import { ttsBody } from './schema.js';

/**
 * `POST /v1/text-to-speech` (whole body) and `/v1/text-to-speech/stream` (chunked transfer, rendered
 * while sent). Errors before audio are the envelope with an HTTP status; after audio began, the
 * connection is cut (`cut_after_chunks` fault).
 */
const CHUNK = 8192;
const config = { family: 'tts', capability: 'tts' } as const;

function audioHeaders(reply: FastifyReply, contentType: string): void {
  reply
    .header('content-type', contentType)
    .header('x-audio-sample-rate', String(TTS_SAMPLE_RATE))
    .header('x-audio-channels', String(TTS_CHANNELS))
    .header('x-audio-bit-depth', String(TTS_BIT_DEPTH));
}

/** Waits until the socket handed everything written so far to the system, then cuts it. */
async function cut(req: FastifyRequest, chunks: number): Promise<void> {
  const socket = req.raw.socket;
  for (let i = 0; i < 200 && socket.writableLength > 0 && !socket.destroyed; i++) await new Promise((r) => setTimeout(r, 5));
  req.ctx.entry?.setNote(`connection cut after ${chunks} chunks (fault)`);
  finishEntry(req, 200);
  socket.destroy();
}

/**
 * Passes chunks on, counting them in the journal and cutting the connection after `cutAfter`. On
 * shutdown the chunked body ends cleanly after a whole chunk (never a cut in the middle of one).
 */
async function* sent(req: FastifyRequest, chunks: AsyncIterable<Buffer>, cutAfter: number | undefined, closing?: AbortSignal): AsyncGenerator<Buffer> {
  let sentChunks = 0;
  if (cutAfter === 0) return void (await cut(req, 0));
  for await (const chunk of chunks) {
    if (closing?.aborted) {
      req.ctx.entry?.setNote('stream ended by shutdown');
      return;
    }
    countChunk(req);
    yield chunk;
    if (cutAfter !== undefined && ++sentChunks >= cutAfter) {
      await cut(req, sentChunks);
      return;
    }
  }
}

function* slices(bytes: Buffer): Generator<Buffer> {
  for (let i = 0; i < bytes.length; i += CHUNK) yield bytes.subarray(i, i + CHUNK);
}

/** Renders the stream inside a synthesis slot, taken at the first chunk and freed however it ends. */
async function* inSlot(emu: Emulator, chunks: AsyncIterable<Buffer>, signal: AbortSignal): AsyncGenerator<Buffer> {
  const release = await emu.synthesis.acquire(signal);
  try {
    yield* chunks;
  } finally {
    release();
  }
}

export async function ttsRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const route = { config, schema: { body: ttsBody } };

  r.post('/v1/text-to-speech', route, async (req, reply) => {
    const audio = await emu.synthesis.run(() => synthesizeTts(emu, req.ctx.account!, req.body));
    audioHeaders(reply, audio.contentType);
    reply.header('content-length', String(audio.bytes.length));
    const cutAfter = takeFault(req, 'cut_after_chunks');
    if (cutAfter === undefined) return reply.send(audio.bytes);
    // Sent in slices so the fault can cut it part way, as a failure after audio began would.
    return reply.send(
      Readable.from(
        sent(
          req,
          (async function* () {
            yield* slices(audio.bytes);
          })(),
          cutAfter,
        ),
        { highWaterMark: 1 },
      ),
    );
  });

  r.post('/v1/text-to-speech/stream', route, async (req, reply) => {
    const account = req.ctx.account!;
    const plan = planTts(emu, account, req.body);
    const cutAfter = takeFault(req, 'cut_after_chunks');
    const abort = new AbortController();
    const { stream, chunks } = startTtsStream(emu, account, plan, abort.signal);
    // A client that goes away stops the rendering, and its half-sent response is not kept open.
    const socket = req.raw.socket;
    reply.raw.on('close', () => {
      if (reply.raw.writableFinished) return;
      abort.abort();
      req.ctx.entry?.noteOnce('client left before the end of the stream');
      finishEntry(req, 200);
      socket.destroy();
    });
    audioHeaders(reply, plan.contentType);
    reply.header('x-accel-buffering', 'no');
    return reply.send(
      Readable.from(
        sent(
          req,
          inSlot(
            emu,
            counted(chunks, () => emu.metrics.audioSynthesized(plan.format, stream.durationMs / 1000)),
            abort.signal,
          ),
          cutAfter,
          emu.closing,
        ),
        { highWaterMark: 1 },
      ),
    );
  });
}

/** Reports the synthesis once its last chunk exists. */
async function* counted(chunks: AsyncIterable<Buffer>, done: () => void): AsyncGenerator<Buffer> {
  yield* chunks;
  done();
}
