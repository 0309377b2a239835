import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { z } from 'zod';
import type { Account } from '../../../core/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { sendJson, takeFault } from '../../../core/http.js';
import { appendPcm, durationMs, MAX_UTTERANCE_MS, newUtterance, nextPartial, recognizeUtterance } from '../conversation/listen.js';
import { recognitionPrice } from '../conversation/model.js';
import { isFinalMessage, issueText, parseJsonObject, unwrapMeta } from '../conversation/schema.js';
import { toBuffer } from '../conversation/socket.js';
import { openWire } from '../conversation/wire.js';
import { failure, PlatformError } from '../envelope.js';
import { codeOfHttpStatus, FAMILIES } from '../families.js';

/**
 * Speech recognition stream `/v1/speech-to-text/stream`: key by `X-API-Key` or `?api_key=` (checked
 * before the upgrade: HTTP 401 with the envelope), `{meta:{audio_format, language}}`, binary PCM16
 * 16 kHz chunks, `{is_final:true}` → `asr_partial`… `asr_final` `done`, then the server closes.
 */
export const RECOGNITION_STREAM_PATH = '/v1/speech-to-text/stream';
/** The spec's minimum length of recognised PCM. */
export const MIN_AUDIO_MS = 2000;

export const recognitionMetaSchema = z.object({
  audio_format: z.enum(['pcm16', 'pcm_16000'], { error: 'must be "pcm16" or "pcm_16000"' }).nullish(),
  language: z
    .string({ error: 'must be a string' })
    .regex(/^(auto|[a-z]{2,3}([-_][A-Za-z0-9]{2,8})?)$/, 'must be a language code such as "en" or "zh" (or "auto")')
    .nullish(),
});

const AUTH_TEXT = {
  missing: 'X-API-Key header (or api_key query parameter) is missing',
  invalid: 'X-API-Key is not a valid API key',
  disabled: 'X-API-Key belongs to a disabled API key',
} as const;

export async function recognitionStreamRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const { emu } = opts;
  app.route({
    method: 'GET',
    url: RECOGNITION_STREAM_PATH,
    config: { family: 'recognition', selfAuth: true },
    // Before the upgrade: an HTTP fault status or a bad key refuses it with the recognition envelope.
    preValidation: async (req: FastifyRequest) => {
      const status = takeFault(req, 'status');
      if (status !== undefined) throw new PlatformError(codeOfHttpStatus(FAMILIES.recognition, status), `injected fault: HTTP ${status}`, status);
      if (!req.emu.account) throw new PlatformError('auth', AUTH_TEXT[req.emu.accountProblem ?? 'missing']);
      if (!emu.accounts.has(req.emu.account, 'recognition')) throw new PlatformError('auth', 'this API key lacks the recognition capability');
    },
    handler: (req: FastifyRequest, reply: FastifyReply) =>
      sendJson(reply, 426, failure(10001, `${RECOGNITION_STREAM_PATH} is a WebSocket endpoint: connect with an Upgrade request`)),
    wsHandler: (socket: WebSocket, req: FastifyRequest) => recognitionSocket(emu, socket, req),
  });
}

function recognitionSocket(emu: Emulator, socket: WebSocket, req: FastifyRequest): void {
  const account = req.emu.account as Account;
  const wire = openWire(emu, socket, req);
  const cutAfter = takeFault(req, 'cut_after_chunks');
  let language: string | null = null;
  let phase: 'meta' | 'audio' | 'finished' = 'meta';
  let sent = 0;
  const u = newUtterance();

  const event = (type: string, r: { text: string; language: string; confidence: number }, extra: Record<string, unknown> = {}) => {
    if (phase === 'finished' && type === 'asr_partial') return;
    wire.send({
      type,
      text: r.text,
      asr_text: r.text,
      language: language ?? r.language,
      confidence: r.confidence,
      audio_duration_ms: Math.round(durationMs(u)),
      ...extra,
    });
    // `cut_after_chunks` counts the events sent, then drops the connection.
    if (cutAfter !== undefined && ++sent >= cutAfter) wire.terminate();
  };
  const fail = (code: number, message: string, closeCode = 1008) => {
    event('error', { text: '', language: language ?? 'auto', confidence: 0 }, { code, message });
    phase = 'finished';
    wire.close(closeCode, message);
  };

  const closeWs = takeFault(req, 'close_ws');
  if (closeWs !== undefined) return wire.close(closeWs, 'injected fault: close_ws');
  const code = takeFault(req, 'code');
  if (code !== undefined) return fail(code, `injected fault: error ${code}`, 1011);

  const finish = () => {
    phase = 'finished';
    const ms = durationMs(u);
    if (ms < MIN_AUDIO_MS) return fail(20014, `audio is shorter than ${MIN_AUDIO_MS / 1000} seconds (${Math.round(ms)} ms of PCM received)`);
    const price = recognitionPrice(emu, ms / 1000);
    if (!emu.accounts.canAfford(account, price)) return fail(20003, 'insufficient balance for recognition');
    const result = recognizeUtterance(emu, u, language ?? undefined);
    emu.accounts.charge(account, price);
    emu.markDirty();
    event('asr_final', result);
    event('done', result);
    wire.close(1000, 'recognition finished');
  };

  const onMessage = (data: Buffer, isBinary: boolean) => {
    if (wire.closed || phase === 'finished') return;
    if (isBinary) {
      wire.recordIn(data.length, true);
      if (phase === 'meta') return fail(10001, 'binary audio arrived before the meta message');
      appendPcm(u, data);
      if (durationMs(u) > MAX_UTTERANCE_MS) return fail(10001, `audio: a stream may carry at most ${MAX_UTTERANCE_MS / 1000} s`);
      const partial = nextPartial(emu, u, language ?? undefined);
      if (partial) event('asr_partial', { ...partial.result, text: partial.text });
      return;
    }
    const parsed = parseJsonObject(data.toString('utf8'));
    wire.recordIn(data.length, false, parsed.ok ? (isFinalMessage(parsed.value) ? 'is_final' : phase === 'meta' ? 'meta' : 'message') : 'invalid');
    if (!parsed.ok) return fail(10001, parsed.message);
    if (phase === 'audio') {
      if (isFinalMessage(parsed.value)) finish();
      return;
    }
    if (isFinalMessage(parsed.value)) return fail(10001, 'meta: the first message must be {meta:{audio_format, language}}, not is_final');
    const inner = unwrapMeta(parsed.value);
    const meta = recognitionMetaSchema.safeParse(inner);
    if (!meta.success) return fail(10001, issueText(meta.error, inner === parsed.value ? '' : 'meta.'));
    language = meta.data.language && meta.data.language !== 'auto' ? meta.data.language : null;
    phase = 'audio';
  };

  socket.on('message', (data: RawData, isBinary: boolean) => {
    try {
      onMessage(toBuffer(data), isBinary);
    } catch (err) {
      emu.logger.error({ err }, 'recognition stream failed');
      fail(10000, 'internal error while recognising', 1011);
    }
  });
}
