/**
 * `POST /v1/text-to-speech` (whole body) and `/v1/text-to-speech/stream` (chunked transfer, rendered
 * while sent). Errors before audio are the envelope with an HTTP status; after audio began, the
 * connection is cut (`cut_after_chunks` fault).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { AUDIO_CHUNK, guardStream, type StreamGuard } from '../../../core/stream-guard.js';
import { planTts, startTtsStream, synthesizeTts, TTS_BIT_DEPTH, TTS_CHANNELS, TTS_SAMPLE_RATE } from './model.js';
import { ttsBody } from './schema.js';

const CHUNK = 8192;
const config = { family: 'tts', capability: 'tts' } as const;

function audioHeaders(reply: FastifyReply, contentType: string): void {
  reply
    .header('content-type', contentType)
    .header('x-audio-sample-rate', String(TTS_SAMPLE_RATE))
    .header('x-audio-channels', String(TTS_CHANNELS))
    .header('x-audio-bit-depth', String(TTS_BIT_DEPTH));
}

/**
 * The guard of one chunked audio body (core/stream-guard.ts): chunk count, `cut_after_chunks`, shutdown
 * after a whole chunk (the chunked body then ends cleanly), a client that left.
 */
function guardBody(emu: Emulator, req: FastifyRequest): StreamGuard<Buffer> {
  const socket = req.raw.socket;
  return guardStream<Buffer>(
    req,
    {
      // The body is pulled (guard.frames): nothing is written through the guard.
      write: () => true,
      // Waits until the socket handed everything written so far to the system, then cuts it.
      cut: async () => {
        for (let i = 0; i < 200 && socket.writableLength > 0 && !socket.destroyed; i++) await new Promise((r) => setTimeout(r, 5));
        socket.destroy();
      },
      endForShutdown: () => undefined,
    },
    { status: 200, closing: emu.closing, logger: emu.logger },
  );
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
    const guard = guardBody(emu, req);
    if (guard.cutAt === undefined) return reply.send(audio.bytes);
    // Sent in slices so the fault can cut it part way, as a failure after audio began would.
    return reply.send(
      Readable.from(
        guard.frames(
          (async function* () {
            yield* slices(audio.bytes);
          })(),
          AUDIO_CHUNK,
        ),
        { highWaterMark: 1 },
      ),
    );
  });

  r.post('/v1/text-to-speech/stream', route, async (req, reply) => {
    const account = req.ctx.account!;
    const plan = planTts(emu, account, req.body);
    const guard = guardBody(emu, req);
    const abort = new AbortController();
    const { stream, chunks } = startTtsStream(emu, account, plan, abort.signal);
    // A client that goes away stops the rendering, and its half-sent response is not kept open.
    const socket = req.raw.socket;
    reply.raw.on('close', () => {
      if (reply.raw.writableFinished) return;
      abort.abort();
      void guard.end('left');
      socket.destroy();
    });
    audioHeaders(reply, plan.contentType);
    reply.header('x-accel-buffering', 'no');
    return reply.send(
      Readable.from(
        guard.frames(
          inSlot(
            emu,
            counted(chunks, () => emu.metrics.audioSynthesized(plan.format, stream.durationMs / 1000)),
            abort.signal,
          ),
          AUDIO_CHUNK,
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
