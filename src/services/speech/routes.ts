import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { encodeAudio, encodeAudioStream, type SynthStream } from '../../audio/index.js';
import type { Emulator } from '../../core/emulator.js';
import { admitRequest } from '../../core/admission.js';
import { readerValidator } from '../../core/validation.js';
import { countChunk, faultIgnoredHeader, finishEntry, journalBody, noteSpecCode, takeFault } from '../../core/http.js';
import { refusalError, SpeechError, STATUS_MSG, traceIdOf } from './errors.js';
import { encodeOptionsOf, readRequest, recordSignature, startSynthesis, subtitleSegments, synthesizeAgain, URL_TTL_MS, type SynthesisPlan } from './model.js';
import { fileExtension } from './formats.js';
import { t2aRequestSchema, type T2aRequest } from './schema.js';
import { countingFrames, SubtitleFeed, withSubtitles } from './ws/subtitles.js';
import { speechArea, type SpeechArea } from './state.js';
import { extraInfo, finalEvent, intermediateEvent, MAX_EVENT_AUDIO_BYTES, sseEvent } from './stream.js';

export const T2A_PATH = '/v1/t2a_v2';

/**
 * The admission path before the body (core/admission.ts), as the speech error it renders to, or null
 * when the request may go on. Also used by the app's error handler, so a broken body meets it first.
 */
export function gate(emu: Emulator, req: FastifyRequest): SpeechError | null {
  const admission = admitRequest(emu, req, 'tts');
  return admission.ok ? null : refusalError(admission.refusal);
}

/** `POST /v1/t2a_v2` on the primary and the backup listener (same app, same state). */
export async function speechRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const emu = opts.emu;
  const area = speechArea(emu);
  app.withTypeProvider<ZodTypeProvider>().post(
    T2A_PATH,
    {
      // The admission path first; then the body, read with its schema in the words of A2's 2013 texts.
      preValidation: (req, _reply, done) => {
        const refusal = gate(emu, req);
        if (refusal) return done(refusal);
        journalBody(req);
        done();
      },
      schema: { body: t2aRequestSchema },
      validatorCompiler: readerValidator(readRequest),
    },
    async (req, reply) => {
      const account = req.emu.account!;
      const ac = abortOnClose(reply.raw);
      const { plan, synth } = await startSynthesis(emu, area, account, req.body, ac.signal);
      const traceId = traceIdOf(emu, req);
      // One slot per running synthesis, held until its answer is written (bounds memory under load).
      let release: () => void;
      try {
        release = await emu.synthesis.acquire(ac.signal);
      } catch {
        return leftWhileQueued(req, reply);
      }
      try {
        if (plan.stream) return await streamSynthesis(emu, area, req, reply, plan, traceId, ac, synth);
        return await wholeSynthesis(emu, req, reply, plan, traceId, ac, synth);
      } finally {
        release();
      }
    },
  );
}

/** The client left while its synthesis waited for a slot: nobody is there to answer. */
function leftWhileQueued(req: FastifyRequest, reply: FastifyReply): void {
  reply.hijack();
  finishEntry(req, 200);
  if (req.emu.entry) req.emu.entry.note = 'client disconnected before the answer';
}

/**
 * The audio an answer carries as hex, for the inspector to play: the journal keeps how to make it again
 * (the request; synthesis is deterministic), not the bytes.
 */
function keepAnswerAudio(emu: Emulator, req: FastifyRequest, plan: SynthesisPlan, size: number): void {
  const account = req.emu.account!;
  const request = req.body as T2aRequest;
  emu.journal.keepAnswerAudio(req.emu.entry, {
    size,
    format: plan.format,
    sampleRate: plan.sampleRate,
    channels: plan.channels,
    make: () => synthesizeAgain(emu, account, request, plan.serial),
  });
}

/** Aborts the synthesis when the client goes away before the answer is complete. */
function abortOnClose(res: ServerResponse): AbortController {
  const ac = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) ac.abort(new Error('client disconnected'));
  });
  return ac;
}

function downloadLink(emu: Emulator, req: FastifyRequest, rel: string): string {
  const expires = emu.clock.now() + URL_TTL_MS;
  // A link is served by the listener that handed it out (the backup may be the only one up).
  if (!emu.config.publicUrl && req.emu.listener === 'speech-backup') return emu.urls.speechBackup + emu.blobs.signedPath(rel, expires);
  return emu.downloadUrl('speech', rel, expires);
}

type Synthesis = SynthStream;

async function wholeSynthesis(
  emu: Emulator,
  req: FastifyRequest,
  reply: FastifyReply,
  plan: SynthesisPlan,
  traceId: string,
  ac: AbortController,
  synth: Synthesis,
) {
  let encoded: Awaited<ReturnType<typeof encodeAudio>>;
  try {
    encoded = await encodeAudio(plan.format, synth, encodeOptionsOf(plan));
  } catch (err) {
    if (!ac.signal.aborted) throw err;
    // The client left: the synthesis stopped with it and nobody is there to answer.
    reply.hijack();
    finishEntry(req, 200);
    if (req.emu.entry) req.emu.entry.note = 'client disconnected before the answer';
    return;
  }
  recordSignature(emu, plan, synth);
  emu.metrics.audioSynthesized(plan.format, encoded.meta.durationMs / 1000);
  const account = req.emu.account!;
  let audio = encoded.bytes.toString('hex');
  if (!plan.outputUrl) keepAnswerAudio(emu, req, plan, encoded.bytes.length);
  if (plan.outputUrl) {
    const rel = `speech/${account.id}/${traceId}.${fileExtension(plan.format)}`;
    await emu.blobs.put(rel, encoded.bytes);
    audio = downloadLink(emu, req, rel);
  }
  let subtitleFile: string | undefined;
  if (plan.subtitles) {
    const type = plan.subtitles;
    const rel = `speech/${account.id}/${traceId}-subtitles.json`;
    await emu.blobs.put(rel, JSON.stringify(subtitleSegments(synth, type)));
    subtitleFile = downloadLink(emu, req, rel);
  }
  const body = {
    data: { audio, status: 2, ced: '', ...(subtitleFile ? { subtitle_file: subtitleFile } : {}) },
    extra_info: extraInfo(encoded.meta, plan),
    trace_id: traceId,
    base_resp: { status_code: 0, status_msg: STATUS_MSG[0] },
  };
  noteSpecCode(req, 0);
  return reply.code(200).header('Trace-Id', traceId).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
}

/** Chunks without subtitles, in the shape `withSubtitles` gives. */
async function* plainChunks(chunks: AsyncIterable<Buffer>): AsyncGenerator<[Buffer, undefined]> {
  for await (const chunk of chunks) yield [chunk, undefined];
}

/** Writes and resolves once the bytes were handed to the socket (or the client is gone). */
/** The client went away while its stream was being written: routine, not a failure. */
class ClientGone extends Error {}

function write(res: ServerResponse, text: string): Promise<boolean> {
  return new Promise((resolve) => {
    if (res.destroyed || res.writableEnded) return resolve(false);
    const onClose = () => resolve(false);
    res.once('close', onClose);
    res.write(text, (err) => {
      res.off('close', onClose);
      resolve(!err);
    });
  });
}

/**
 * The event stream, produced as synthesis advances: each encoder chunk leaves as soon as it exists.
 * A `cut_after_chunks` fault destroys the socket after N events; a client that leaves aborts synthesis.
 */
async function streamSynthesis(
  emu: Emulator,
  area: SpeechArea,
  req: FastifyRequest,
  reply: FastifyReply,
  plan: SynthesisPlan,
  traceId: string,
  ac: AbortController,
  synth: Synthesis,
) {
  const cut = takeFault(req, 'cut_after_chunks');
  const res = reply.raw;
  const account = req.emu.account!;
  // Whatever can fail before audio runs before the headers leave: such a failure is plain JSON (A2),
  // never an event stream left open.
  // With subtitle_enable, each chunk carries what its audio completes (rule E16, the socket's rules).
  const feed = plan.subtitles ? new SubtitleFeed(synth.timeline, plan.subtitles, plan.input.text) : null;
  let madeFrames = 0;
  const source = feed ? countingFrames(synth, plan.channels, (n) => (madeFrames += n)) : synth;
  const encoded = encodeAudioStream(plan.format, source, {
    ...encodeOptionsOf(plan),
    // A μ-law WAV's header carries the true sizes from the first chunk (E13).
    ...(plan.format === 'pcmu_wav' ? { totalFrames: synth.frames } : {}),
    maxChunkBytes: MAX_EVENT_AUDIO_BYTES,
    keepWhole: !plan.excludeAggregated,
  });
  // The plan is known up front: even a stream cut short carries a signature the emulator knows.
  recordSignature(emu, plan, synth);
  reply.hijack();
  // The pipeline's onSend hook never runs for a hijacked reply: report ignored fields and a bad header here.
  const ignored = faultIgnoredHeader(req);
  res.writeHead(200, {
    // What the hooks so far set on the reply (CORS headers among them): a hijacked reply skips the send path.
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    'Trace-Id': traceId,
    ...(ignored !== undefined ? { 'x-emulator-fault-ignored': ignored } : {}),
  });
  res.flushHeaders();
  if (req.emu.entry) req.emu.entry.response = { content_type: 'text/event-stream', summary: { stream: true, trace_id: traceId } };

  const run = area.startStream(account.id, traceId);
  let events = 0;
  const cutNow = () => {
    run.end('cut', events);
    ac.abort(new Error('connection cut by fault'));
    finishEntry(req, 200);
    res.socket?.destroy();
  };
  // Shutdown between two events: a final error event, then a clean end of the body (never a cut mid-event).
  const endForShutdown = async () => {
    ac.abort(new Error('emulator shutting down'));
    await write(
      res,
      sseEvent({ data: null, trace_id: traceId, base_resp: { status_code: 1000, status_msg: `${STATUS_MSG[1000]}, the emulator is shutting down` } }),
    );
    events++;
    run.end('aborted', events);
    if (req.emu.entry) req.emu.entry.note = 'stream ended by shutdown';
    finishEntry(req, 200);
    res.end();
  };
  try {
    if (cut === 0) return cutNow();
    const chunks = feed ? withSubtitles(encoded, feed, () => (madeFrames * 1000) / plan.sampleRate) : plainChunks(encoded);
    for await (const [chunk, subtitle] of chunks) {
      if (emu.closing.aborted) return await endForShutdown();
      if (!(await write(res, intermediateEvent(chunk, traceId, subtitle)))) throw new ClientGone('client disconnected');
      events++;
      countChunk(req);
      run.progress(events);
      if (cut !== undefined && events >= cut) return cutNow();
    }
    const meta = await encoded.meta();
    emu.metrics.audioSynthesized(plan.format, meta.durationMs / 1000);
    // The aggregated audio is the whole file, with the true totals a one-shot file has.
    const whole = plan.excludeAggregated ? undefined : await encoded.wholeFile();
    if (whole) keepAnswerAudio(emu, req, plan, whole.length);
    const aggregated = whole ? whole.toString('hex') : '';
    await write(res, finalEvent(aggregated, extraInfo(meta, plan), traceId));
    events++;
    countChunk(req);
    run.end('done', events);
    res.end();
  } catch (err) {
    if (err instanceof ClientGone || ac.signal.aborted || res.destroyed) {
      emu.logger.debug('client left before the end of the speech stream');
      run.end('aborted', events);
      finishEntry(req, 200);
      return;
    }
    emu.logger.error({ err }, 'speech stream failed');
    run.end('failed', events);
    await write(res, sseEvent({ data: null, trace_id: traceId, base_resp: { status_code: 1000, status_msg: STATUS_MSG[1000] } }));
    res.end();
  }
}
