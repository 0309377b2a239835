/**
 * `POST /v1/text-to-speech` (whole body) and `/v1/text-to-speech/stream` (chunked transfer, rendered
 * while sent). Errors before audio are the envelope with an HTTP status; after audio began, the
 * connection is cut (`cut_after_chunks` fault).
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import type { HeldSlot } from '../../../core/state/queue.js';
import { AUDIO_CHUNK, AudioMade, type StreamGuard } from '../../../core/stream/guard.js';
import { guardStream } from '../../../core/stream/request-guard.js';
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
 * The guard of one chunked audio body (core/stream/guard.ts): chunk count, `cut_after_chunks`, shutdown
 * after a whole chunk (the chunked body then ends cleanly), a client that left.
 */
interface GuardedBody {
  /** Frames the guard let through, waiting for the body to take them. */
  out: Buffer[];
  /** Its response: a client that leaves ends the stream at once (the body is pulled, nobody writes to notice). */
  response: ServerResponse;
  onPaceWait: () => void;
  /** Set when the fault cut the stream: the body hands on what was let through, then cuts. */
  cutPending?: boolean;
}

/** Waits until the socket handed everything written so far to the system, then cuts it. */
async function flushThenCut(socket: Socket): Promise<void> {
  for (let i = 0; i < 200 && socket.writableLength > 0 && !socket.destroyed; i++) await new Promise((r) => setTimeout(r, 5));
  socket.destroy();
}

function guardBody(emu: Emulator, req: FastifyRequest, audio?: GuardedBody): StreamGuard<Buffer> {
  const socket = req.raw.socket;
  return guardStream<Buffer>(
    req,
    {
      // The body is pulled: guard.frames writes nothing; a paced stream's frames wait in `out` for the body.
      write: (frame) => (audio?.out.push(frame), true),
      // A pulled body cuts once the frames let through were taken (guardedAudio); the whole answer cuts here.
      cut: () => (audio ? void (audio.cutPending = true) : flushThenCut(socket)),
      endForShutdown: () => undefined,
    },
    {
      status: 200,
      closing: emu.closing,
      logger: emu.logger,
      ...(audio ? { carrier: 'binary' as const, latency: emu.config.latency, response: audio.response, endWhenLeft: true, onPaceWait: audio.onPaceWait } : {}),
    },
  );
}

/**
 * The streamed body through the guard's audio path (pace, faults inside the audio): each chunk the
 * guard let through, in order; each carries the audio `made` when it came out of the encoder.
 */
async function* guardedAudio(
  guard: StreamGuard<Buffer>,
  body: GuardedBody,
  socket: Socket,
  chunks: AsyncIterable<Buffer>,
  made: AudioMade,
): AsyncGenerator<Buffer> {
  for await (const chunk of guard.encodedChunks(chunks)) {
    const ok = await guard.sendAudio({ audio: chunk, ms: made.newMs(made.ms), render: (bytes) => bytes }, AUDIO_CHUNK);
    yield* body.out.splice(0);
    if (body.cutPending) return void (await flushThenCut(socket));
    if (!ok) return;
  }
  await guard.end('done');
}

function* slices(bytes: Buffer): Generator<Buffer> {
  for (let i = 0; i < bytes.length; i += CHUNK) yield bytes.subarray(i, i + CHUNK);
}

/**
 * Renders the stream inside a synthesis slot, taken at the first chunk and freed however it ends, or
 * earlier through `slot.free` (a paced stream waits without its slot).
 */
async function* inSlot(chunks: AsyncIterable<Buffer>, signal: AbortSignal, slot: HeldSlot): AsyncGenerator<Buffer> {
  await slot.take(signal);
  try {
    yield* chunks;
  } finally {
    slot.free();
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
    const slot = emu.synthesis.slot();
    const body: GuardedBody = { out: [], response: reply.raw, onPaceWait: slot.free };
    // A client that goes away stops the rendering (the guard's `gone`), and its half-sent response is not kept open.
    const guard = guardBody(emu, req, body);
    const gone = guard.gone!;
    const made = new AudioMade(TTS_SAMPLE_RATE, TTS_CHANNELS);
    const { stream, chunks } = await startTtsStream(emu, account, plan, gone, (pcm) => made.counting(guard.audioSource(pcm, TTS_SAMPLE_RATE, TTS_CHANNELS)));
    const socket = req.raw.socket;
    audioHeaders(reply, plan.contentType);
    reply.header('x-accel-buffering', 'no');
    const rendered = inSlot(
      counted(chunks, () => emu.metrics.audioSynthesized(plan.format, stream.durationMs / 1000)),
      gone,
      slot,
    );
    return reply.send(Readable.from(guardedAudio(guard, body, socket, rendered, made), { highWaterMark: 1 }));
  });
}

/** Reports the synthesis once its last chunk exists. */
async function* counted(chunks: AsyncIterable<Buffer>, done: () => void): AsyncGenerator<Buffer> {
  yield* chunks;
  done();
}
