/**
 * `POST /v1/speech_to_text` on both speech listeners: admission before the body, the multipart parts
 * read as a stream, the model's checks in order, the answer by `response_format` or as an event stream.
 * Unlike the rest of the speech service, every error has its real HTTP status and the body of
 * speech-current.md 1.6 (never HTTP 200 with `base_resp`).
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Refusal } from '../../../core/http/admission.js';
import type { Emulator } from '../../../core/emulator.js';
import { StorageError } from '../../../core/state/storage.js';
import { openEventStream } from '../../../core/stream/http.js';
import { noteSpecCode } from '../../../core/http/request-context.js';
import { EVENT_CHUNK, FINAL_EVENT_CHUNK } from '../../../core/stream/guard.js';
import { guardStream } from '../../../core/stream/request-guard.js';
import type { ContainerInfo } from '../../../audio/container.js';
import { REQUEST_ID_HEADER, traceIdOf } from '../errors.js';
import { jsonBody, sseLine, srtBody, streamEvents, verboseBody, vttBody, type StreamEvent } from './format.js';
import {
  admitAudio,
  badParams,
  charge,
  checkContent,
  checkForm,
  codeOfStatus,
  errorType,
  MESSAGES,
  readAudio,
  statusOfCode,
  SttError,
  sttArea,
  tooLarge,
  transcribe,
  MAX_FILE_BYTES,
  type SttRequest,
} from './model.js';
import { STT_PATH, sttRouteSchema } from './schema.js';
import type { Transcript } from './transcript.js';
import { dropForm, fileSource, receiveForm, type ReceivedForm } from './upload.js';

/** An admission refusal in this endpoint's terms. */
function sttRefusal(refusal: Refusal): SttError {
  switch (refusal.kind) {
    case 'fault_code':
      return new SttError(statusOfCode(refusal.code), refusal.code, MESSAGES[refusal.code] ?? MESSAGES[1000]!);
    case 'fault_status': {
      const code = codeOfStatus(refusal.status);
      return new SttError(refusal.status, code, code === null ? 'request body too large' : (MESSAGES[code] ?? MESSAGES[1000]!));
    }
    case 'key':
      return new SttError(401, 1004, MESSAGES[1004]!);
    case 'capability':
      return new SttError(401, 1004, `login fail: the API secret key has no access to speech to text (capability ${refusal.capability})`);
    case 'upstream':
      return new SttError(refusal.status, codeOfStatus(refusal.status) ?? 1000, refusal.message);
    case 'close_ws':
      return new SttError(500, 1000, MESSAGES[1000]!);
  }
}

/** Section 1.6: `{type:"error", error:{type, message, http_code}, request_id}` with the real status. */
function sendSttError(emu: Emulator, req: FastifyRequest, reply: FastifyReply, err: SttError): FastifyReply {
  const traceId = traceIdOf(emu, req);
  if (err.code !== null) noteSpecCode(req, err.code, err.message);
  const message = err.code === null ? err.message : `${err.message} (${err.code})`;
  const body = { type: 'error', error: { type: errorType(err.status), message, http_code: String(err.status) }, request_id: traceId };
  return reply.code(err.status).header('Trace-Id', traceId).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
}

export async function speechToTextRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  sttArea(emu);
  // Parts are read as a stream by the handler; the size limit is the model's (413 with the true size).
  await app.register(multipart, { limits: { fileSize: Number.MAX_SAFE_INTEGER, files: 8, fields: 32, parts: 64, fieldSize: 64 * 1024 } });
  // The declared schemas feed the OpenAPI document; the model checks the parts in its own order.
  app.setValidatorCompiler(() => (data: unknown) => ({ value: data }));
  app.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));

  app.setErrorHandler((err: Error & { code?: string }, req, reply) => {
    if (err instanceof SttError) return sendSttError(emu, req, reply, err);
    if (err instanceof StorageError) return sendSttError(emu, req, reply, new SttError(500, 1000, err.message));
    // A body the framework refused (a JSON body that does not parse, an unknown media type) was admitted
    // before it was read (the lifecycle), and is the endpoint's 2013: only multipart/form-data is read.
    if (/^FST_(ERR_CTP|ERR_INVALID_MULTIPART|INVALID_MULTIPART|PARTS_LIMIT|FILES_LIMIT|FIELDS_LIMIT|REQ_FILE_TOO_LARGE|PROTO_VIOLATION)/.test(err.code ?? ''))
      return sendSttError(emu, req, reply, notMultipart());
    emu.logger.error({ err }, 'speech to text failed');
    return sendSttError(emu, req, reply, new SttError(500, 1000, MESSAGES[1000]!));
  });

  app.withTypeProvider<ZodTypeProvider>().post(
    STT_PATH,
    {
      schema: sttRouteSchema,
      // Admitted by the lifecycle before any part is read, refused in this endpoint's own shape.
      config: { capability: 'tts', refusal: (_req, refusal) => sttRefusal(refusal) },
    },
    async (req, reply) => {
      const account = req.ctx.account!;
      if (!req.isMultipart()) throw notMultipart();
      let form: ReceivedForm;
      try {
        form = await receiveForm(req);
      } catch (err) {
        if (err instanceof SttError) throw err;
        throw badParams(`multipart body could not be read (${(err as Error).message})`);
      }
      let info: ContainerInfo | undefined;
      let journaled = false;
      const journal = (source?: Transcript['source']) => {
        if (!journaled) journalForm(req, form, info, source);
        journaled = true;
      };
      try {
        // The size rule fires as soon as the file part passes the limit: the body was not read further,
        // so the parts after it are unknown and the connection closes with the answer.
        if (form.overLimit) {
          reply.header('connection', 'close');
          throw tooLarge(form.fileSize);
        }
        const request = checkForm({ fields: form.fields, fileParts: form.fileParts, languageHeader: header(req, 'language') });
        if (!form.file) throw tooLarge(form.fileSize);
        const src = fileSource(form.file.path, form.file.size);
        let transcript: Transcript;
        let price: number;
        try {
          info = readAudio(src);
          price = admitAudio(emu, account, info.duration * 1000);
          transcript = await transcribe(emu, src, info, form.file.sha256, request.language);
          journal(transcript.source);
        } finally {
          src.close();
        }
        checkContent(emu, transcript);
        charge(emu, account, price, info.duration * 1000);
        return answer(emu, req, reply, request, transcript, info.duration * 1000);
      } finally {
        journal();
        await dropForm(form);
      }
    },
  );
}

const notMultipart = () => badParams('request body must be multipart/form-data with the parts model and file');

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The journal's view of the body: the text parts, then the file's size, container, duration and transcript source. */
function journalForm(req: FastifyRequest, form: ReceivedForm, info: ContainerInfo | undefined, source: Transcript['source'] | undefined): void {
  const file = form.fileParts
    ? {
        filename: form.filename,
        bytes: form.fileSize,
        ...(form.fileSize > MAX_FILE_BYTES ? { over_limit: true } : {}),
        ...(info ? { container: info.container, codec: info.codec, duration: Math.round(info.duration * 1000) / 1000 } : {}),
        // Which rule gave the transcript: the emulator's own audio, the fixture, or none.
        ...(source ? { transcript: source } : {}),
      }
    : undefined;
  // The pipeline noted the multipart body by its size (it is read as a stream): this is its record.
  req.ctx.entry?.replaceRequestBody({ ...Object.fromEntries(form.fields), ...(file ? { file } : {}) });
}

function answer(emu: Emulator, req: FastifyRequest, reply: FastifyReply, request: SttRequest, transcript: Transcript, durationMs: number) {
  const traceId = traceIdOf(emu, req);
  const pieces = request.level === 'word' ? transcript.words : transcript.sentences;
  if (request.stream) return writeEventStream(emu, req, reply, traceId, streamEvents(transcript.sentences, durationMs));
  reply.code(200).header('Trace-Id', traceId);
  switch (request.responseFormat) {
    case 'json':
      return reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(jsonBody(transcript.sentences, durationMs, traceId)));
    case 'verbose_json':
      return reply
        .header('content-type', 'application/json; charset=utf-8')
        .send(JSON.stringify(verboseBody(transcript.sentences, pieces, durationMs, traceId)));
    case 'srt':
      return reply.header('content-type', 'text/plain; charset=utf-8').send(srtBody(pieces));
    case 'vtt':
      return reply.header('content-type', 'text/vtt; charset=utf-8').send(vttBody(pieces));
  }
}

/**
 * The event stream (rule E3): every check is done before the status line; then each event goes through
 * the stream guard (core/stream/guard.ts). A `cut_after_chunks=N` fault ends the body after N events,
 * cleanly and without the final event; the emulator's shutdown ends it at an event boundary.
 */
async function writeEventStream(emu: Emulator, req: FastifyRequest, reply: FastifyReply, traceId: string, events: StreamEvent[]) {
  const startedMs = emu.clock.now();
  const pace = req.ctx.account?.speechSettings?.stt?.stream_pace ?? 0;
  const res = reply.raw;
  // Waits for the socket to take more when it asks to; false when the client is gone.
  const write = (text: string): boolean | Promise<boolean> => {
    if (res.destroyed || res.writableEnded) return false;
    if (res.write(text)) return true;
    return new Promise((resolve) => {
      const done = () => resolve(!res.destroyed);
      res.once('drain', done);
      res.once('close', done);
    });
  };
  const guard = guardStream<string>(
    req,
    { write, cut: () => void res.end(), endForShutdown: () => void res.end() },
    { status: 200, closing: emu.closing, logger: emu.logger, response: res },
  );
  // The head leaves before the first event: a paced stream may wait on the emulator clock before it.
  reply.header(REQUEST_ID_HEADER, traceId); // a hijacked reply skips the send hook
  await openEventStream(emu, req, reply, { contentType: 'text/event-stream; charset=utf-8', traceId, details: { events: events.length } });
  for (const [i, event] of events.entries()) {
    // stt.stream_pace: the event leaves once the emulator clock stands that fraction of its audio time past the request.
    if (pace > 0 && !(await emu.clock.reaches(startedMs + Math.round(pace * event.atMs), guard.gone!, 'speech-to-text stream pace')))
      return void guard.end('left');
    if (!(await guard.send(sseLine(event.body), i === events.length - 1 ? FINAL_EVENT_CHUNK : EVENT_CHUNK))) return;
  }
  guard.end('done');
  res.end();
}
