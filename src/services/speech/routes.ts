import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { encodeAudio, encodeAudioStream, type SynthStream } from '../../audio/index.js';
import type { Emulator } from '../../core/emulator.js';
import { readerValidator } from '../../core/http/validation.js';
import { abortWhenClientLeaves, leftBeforeAnswer } from '../../core/stream/http.js';
import { AudioEventStream } from '../../core/stream/event-stream.js';
import type { HeldSlot } from '../../core/state/queue.js';
import { noteSpecCode } from '../../core/http/request-context.js';
import { refusalError, REQUEST_ID_HEADER, SpeechError, STATUS_MSG, traceIdOf } from './errors.js';
import {
  encodeOptionsOf,
  readRequest,
  recordSignature,
  recordSignatureTimes,
  startSynthesis,
  subtitleSegments,
  synthesizeAgain,
  URL_TTL_MS,
  type SynthesisPlan,
} from './model.js';
import { fileExtension } from './formats.js';
import { synthesizeToBlob } from './url-audio.js';
import { t2aRequestSchema, type T2aRequest } from './schema.js';
import { SubtitleFeed } from './ws/subtitles.js';
import { signedLink } from './reply.js';
import { speechArea, type SpeechArea } from './state.js';
import { audioHex, extraInfo, finalEvent, inflatedInfo, intermediateEvent, MAX_EVENT_AUDIO_BYTES, sseEvent } from './stream.js';

export const T2A_PATH = '/v1/t2a_v2';

/** `POST /v1/t2a_v2` on the primary and the backup listener (same app, same state). */
export async function speechRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const emu = opts.emu;
  const area = speechArea(emu);
  app.withTypeProvider<ZodTypeProvider>().post(
    T2A_PATH,
    {
      // Admitted by the lifecycle before the body is read; the body is read with its schema in the words of A2's 2013 texts.
      config: { capability: 'tts' },
      schema: { body: t2aRequestSchema },
      validatorCompiler: readerValidator(readRequest),
    },
    async (req, reply) => {
      const account = req.ctx.account!;
      // The synthesis stops when the client goes away before the answer is complete.
      const ac = abortWhenClientLeaves(reply.raw);
      const { plan, synth } = await startSynthesis(emu, area, account, req.body, ac.signal, { growing: true });
      const traceId = traceIdOf(emu, req);
      // One slot per running synthesis, held until its answer is written (bounds memory under load).
      const slot = emu.synthesis.slot();
      try {
        await slot.take(ac.signal);
      } catch {
        return leftBeforeAnswer(req, reply);
      }
      const call: SynthesisCall = { emu, area, req, reply, plan, traceId, ac, synth, slot };
      try {
        if (plan.stream) return await streamSynthesis(call);
        return await wholeSynthesis(call);
      } finally {
        slot.free();
      }
    },
  );
}

/** One synthesis being answered: what the whole answer and the event stream are made from. */
interface SynthesisCall {
  emu: Emulator;
  area: SpeechArea;
  req: FastifyRequest;
  reply: FastifyReply;
  plan: SynthesisPlan;
  traceId: string;
  /** Aborts the synthesis: the client left, or the stream was cut or ended by shutdown. */
  ac: AbortController;
  synth: SynthStream;
  /** Its synthesis slot: a paced stream frees it before it waits. */
  slot: HeldSlot;
}

/**
 * The audio an answer carries as hex, for the inspector to play: the journal keeps how to make it again
 * (the request; synthesis is deterministic), not the bytes.
 */
function keepAnswerAudio(emu: Emulator, req: FastifyRequest, plan: SynthesisPlan, size: number): void {
  const account = req.ctx.account!;
  const request = req.body as T2aRequest;
  emu.journal.keepAnswerAudio(req.ctx.entry, {
    size,
    format: plan.format,
    sampleRate: plan.sampleRate,
    channels: plan.channels,
    make: () => synthesizeAgain(emu, account, request, plan.serial),
  });
}

async function wholeSynthesis({ emu, req, reply, plan, traceId, ac, synth }: SynthesisCall) {
  const account = req.ctx.account!;
  let meta: Awaited<ReturnType<typeof encodeAudio>>['meta'];
  let audio: string;
  try {
    if (plan.outputUrl) {
      // Streamed to disk as it is encoded: a URL-mode file is never held whole (url-audio.ts).
      const rel = `speech/${account.id}/${traceId}.${fileExtension(plan.format)}`;
      meta = await synthesizeToBlob(emu, rel, plan, synth);
      audio = signedLink(emu, req, rel, emu.clock.now() + URL_TTL_MS);
    } else {
      const encoded = await encodeAudio(plan.format, synth, encodeOptionsOf(plan));
      meta = encoded.meta;
      audio = encoded.bytes.toString('hex');
      keepAnswerAudio(emu, req, plan, encoded.bytes.length);
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
    // The client left: the synthesis stopped with it and nobody is there to answer.
    return leftBeforeAnswer(req, reply);
  }
  recordSignature(emu, plan, synth);
  emu.metrics.audioSynthesized(plan.format, meta.durationMs / 1000);
  let subtitleFile: string | undefined;
  if (plan.subtitles) {
    const type = plan.subtitles;
    const rel = `speech/${account.id}/${traceId}-subtitles.json`;
    await emu.blobs.put(rel, JSON.stringify(subtitleSegments(synth, type)));
    subtitleFile = signedLink(emu, req, rel, emu.clock.now() + URL_TTL_MS);
  }
  const body = {
    data: { audio, status: 2, ced: '', ...(subtitleFile ? { subtitle_file: subtitleFile } : {}) },
    extra_info: extraInfo(meta, plan),
    trace_id: traceId,
    base_resp: { status_code: 0, status_msg: STATUS_MSG[0] },
  };
  noteSpecCode(req, 0);
  return reply.code(200).header('Trace-Id', traceId).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
}

/** How a guarded stream's end reads in the speech area's stream view. */
const RUN_STATUS = { done: 'done', cut: 'cut', left: 'aborted', shutdown: 'aborted', failed: 'failed', stalled: 'aborted' } as const;

/**
 * The event stream, produced as synthesis advances: each encoder chunk leaves as soon as it exists.
 * The stream is described to core once (core/stream/event-stream.ts): its events go through the
 * stream guard (chunk count, `cut_after_chunks`, pace and audio faults, a client that left, which also
 * aborts the synthesis, shutdown between two events); this handler only says what each event is.
 */
async function streamSynthesis({ emu, area, req, reply, plan, traceId, ac, synth, slot }: SynthesisCall) {
  const account = req.ctx.account!;
  let run: ReturnType<SpeechArea['startStream']> | undefined;
  const stream = new AudioEventStream(emu, req, reply, {
    traceId,
    work: ac,
    source: synth,
    sampleRate: plan.sampleRate,
    channels: plan.channels,
    shutdownEvent: sseEvent({
      data: null,
      trace_id: traceId,
      base_resp: { status_code: 1000, status_msg: `${STATUS_MSG[1000]}, the emulator is shutting down` },
    }),
    onEnd: (end, events) => run?.end(RUN_STATUS[end], events),
    // A paced stream waits without its synthesis slot; what is left of the synthesis follows the pace.
    onPaceWait: slot.free,
  });
  // Whatever can fail before audio runs before the headers leave: such a failure is plain JSON (A2),
  // never an event stream left open.
  // With subtitle_enable, each chunk carries what its audio completes (rule E16, the socket's rules): a
  // chunk waits for the next, so the last one carries the rest.
  const feed = plan.subtitles ? new SubtitleFeed(synth.timeline, plan.subtitles, plan.input.text) : null;
  const encoded = encodeAudioStream(plan.format, stream.pcm, {
    ...encodeOptionsOf(plan),
    // A μ-law WAV's header carries the true sizes from the first chunk (E13).
    ...(plan.format === 'pcmu_wav' ? { totalFrames: synth.frames + stream.addedFrames } : {}),
    maxChunkBytes: MAX_EVENT_AUDIO_BYTES,
    keepWhole: !plan.excludeAggregated,
  });
  // The plan is known up front: even a stream cut short carries a signature the emulator knows.
  recordSignature(emu, plan, synth);
  // The charge and the records above are on disk before the first byte (a failed write is answered as JSON).
  reply.header(REQUEST_ID_HEADER, traceId); // a hijacked reply skips the send hook
  await stream.open();
  run = area.startStream(account.id, traceId, () => stream.guard.chunks);

  try {
    const render = (audio: Buffer, d: { oddHex: boolean }, madeMs: number, last: boolean) =>
      intermediateEvent(audio, traceId, feed ? (last ? feed.rest() : feed.take(madeMs)) : undefined, d.oddHex);
    if (!(await stream.send(encoded, { render, holdOne: feed !== null }))) return;
    const meta = await encoded.meta();
    // A growing stream's timeline and duration are final now: the signature record gets them.
    recordSignatureTimes(emu, plan, synth);
    emu.metrics.audioSynthesized(plan.format, meta.durationMs / 1000);
    // The aggregated audio is the whole file, with the true totals a one-shot file has.
    const whole = plan.excludeAggregated ? undefined : await encoded.wholeFile();
    if (whole) keepAnswerAudio(emu, req, plan, whole.length);
    const extra = extraInfo(meta, plan);
    // With drop_final the guard keeps the final event back: the body still ends cleanly.
    await stream.finish({
      audio: whole ?? Buffer.alloc(0),
      ms: 0,
      render: (audio: Buffer, d: { oddHex: boolean; inflate: number }) => finalEvent(audioHex(audio, d.oddHex), inflatedInfo(extra, d.inflate), traceId),
    });
  } catch (err) {
    // The synthesis stops with the connection (a client that left, a cut, shutdown): routine, not a failure.
    await stream.failed(
      err,
      'speech stream failed',
      sseEvent({ data: null, trace_id: traceId, base_resp: { status_code: 1000, status_msg: STATUS_MSG[1000] } }),
    );
  }
}
