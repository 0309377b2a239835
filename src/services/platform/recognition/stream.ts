/**
 * Speech recognition stream `/v1/speech-to-text/stream`: key by `X-API-Key` or `?api_key=`,
 * `{meta:{audio_format, language}}`, binary PCM16 16 kHz chunks, `{is_final:true}` → `asr_partial`…
 * `asr_final` `done`, then the server closes. Admitted once (core/http/admission.ts `admitUpgrade`); a refusal
 * that speaks HTTP (fault status, key, capability) refuses the upgrade, or a plain GET, with the
 * recognition envelope, one that speaks WebSocket (close_ws, fault code) is given after the upgrade.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import type { Account } from '../../../core/state/accounts.js';
import { admitUpgrade, type KeyTexts } from '../../../core/http/admission.js';
import type { Emulator } from '../../../core/emulator.js';
import { sendJson } from '../../../core/http/request-context.js';
import { failure, PlatformError, resolveCode } from '../envelope.js';
import { FAMILIES } from '../families.js';
import { readWorded } from '../issues.js';
import { refusalError } from '../refusal.js';
import { isFinalMessage, parseJsonObject, unwrapMeta } from '../shared/socket-messages.js';
import { EVENT_CHUNK } from '../../../core/stream/guard.js';
import { MAX_FRAME_BYTES } from '../../../core/socket/wire.js';
import { idleRule, SOCKET_IDLE_MS } from '../../../core/socket/idle.js';
import { messageBytes } from '../../../core/socket/protocol.js';
import { openWire } from '../shared/socket-wire.js';
import { appendPcm, durationMs, INPUT_RATE, newUtterance, nextPartial } from '../shared/utterance.js';
import { finishStream, streamAudioRefusal, streamBeforeMeta } from './model.js';
import { streamMetaSchema } from './schema.js';

export const RECOGNITION_STREAM_PATH = '/v1/speech-to-text/stream';
const STREAM_KEY_TEXTS: KeyTexts = {
  missing: 'X-API-Key header (or api_key query parameter) is missing',
  invalid: 'X-API-Key is not a valid API key',
  disabled: 'X-API-Key belongs to a disabled API key',
};

export async function recognitionStreamRoutes(app: FastifyInstance, opts: { emu: Emulator }): Promise<void> {
  const { emu } = opts;
  app.route({
    method: 'GET',
    url: RECOGNITION_STREAM_PATH,
    config: { family: 'recognition', selfAuth: true, messages: { meta: streamMetaSchema } },
    preValidation: async (req: FastifyRequest) => {
      const admission = admitUpgrade(emu, req, 'recognition');
      if (admission.ok) return;
      const kind = admission.refusal.kind;
      // close_ws and a fault code are answered on the socket (wsHandler); a plain GET never takes them.
      if (kind === 'close_ws' || kind === 'fault_code') return;
      throw refusalError(admission.refusal, FAMILIES.recognition, STREAM_KEY_TEXTS);
    },
    handler: (req: FastifyRequest, reply: FastifyReply) =>
      sendJson(reply, 426, failure(10001, `${RECOGNITION_STREAM_PATH} is a WebSocket endpoint: connect with an Upgrade request`)),
    wsHandler: (socket: WebSocket, req: FastifyRequest) => recognitionSocket(emu, socket, req),
  });
}

function recognitionSocket(emu: Emulator, socket: WebSocket, req: FastifyRequest): void {
  const wire = openWire(emu, socket, req, () => {
    event(
      'error',
      { text: '', language: language ?? 'auto', confidence: 0 },
      { code: 10001, message: `message: a frame is at most ${MAX_FRAME_BYTES} bytes (8 MiB)` },
    );
    phase = 'finished';
  });
  let language: string | null = null;
  let phase: 'meta' | 'audio' | 'finished' = 'meta';
  const utterance = newUtterance();

  const event = (type: string, r: { text: string; language: string; confidence: number }, extra: Record<string, unknown> = {}) => {
    if (phase === 'finished' && type === 'asr_partial') return;
    // Each result is a chunk of the stream: the guard counts it (and `cut_after_chunks` drops the connection).
    wire.send(
      {
        type,
        text: r.text,
        asr_text: r.text,
        language: language ?? r.language,
        confidence: r.confidence,
        audio_duration_ms: Math.round(durationMs(utterance)),
        ...extra,
      },
      EVENT_CHUNK,
    );
  };
  const fail = (code: number, message: string, closeCode = 1008) => {
    event('error', { text: '', language: language ?? 'auto', confidence: 0 }, { code, message });
    phase = 'finished';
    wire.close(closeCode, message);
  };

  // Decided before the upgrade (preValidation), read back from the request.
  const admission = admitUpgrade(emu, req, 'recognition');
  if (!admission.ok) {
    const refusal = admission.refusal;
    if (refusal.kind === 'close_ws') return wire.close(refusal.closeCode, 'injected fault: close_ws');
    if (refusal.kind === 'fault_code') return fail(refusal.code, `injected fault: error ${refusal.code}`, 1011);
    // The others refused the upgrade (preValidation): never reached.
    return fail(10000, 'internal error: admission refused after the upgrade', 1011);
  }
  const account: Account = admission.account;

  // A rule's refusal (recognition/model.ts) in the socket's shape: its code, then the close.
  const refuse = (err: PlatformError) => fail(resolveCode(FAMILIES.recognition, err.codeOrKind), err.message);

  const finish = () => {
    phase = 'finished';
    let result;
    try {
      result = finishStream(emu, account, utterance, language ?? undefined);
    } catch (err) {
      if (err instanceof PlatformError) return refuse(err);
      throw err;
    }
    event('asr_final', result);
    event('done', result);
    wire.close(1000, 'recognition finished');
  };

  const onMessage = (data: Buffer, isBinary: boolean) => {
    if (wire.closed || phase === 'finished') return;
    if (isBinary) {
      wire.recordIn(data.length, true);
      if (phase === 'meta') return refuse(streamBeforeMeta('audio'));
      wire.keepAudio(data, INPUT_RATE);
      appendPcm(utterance, data);
      const tooLong = streamAudioRefusal(utterance);
      if (tooLong) return refuse(tooLong);
      const partial = nextPartial(emu, utterance, language ?? undefined);
      if (partial) event('asr_partial', { ...partial.result, text: partial.text });
      return;
    }
    const text = data.toString('utf8');
    const parsed = parseJsonObject(text);
    const frameName = parsed.ok ? (isFinalMessage(parsed.value) ? 'is_final' : phase === 'meta' ? 'meta' : 'message') : 'invalid';
    wire.recordIn(data.length, false, frameName, parsed.ok ? parsed.value : text);
    if (!parsed.ok) return fail(10001, parsed.message);
    if (phase === 'audio') {
      if (isFinalMessage(parsed.value)) finish();
      return;
    }
    if (isFinalMessage(parsed.value)) return refuse(streamBeforeMeta('is_final'));
    const inner = unwrapMeta(parsed.value);
    const prefix = inner === parsed.value ? '' : 'meta.';
    const meta = readWorded(streamMetaSchema, inner, { prefix, whole: prefix.replace(/\.$/, '') || 'message' });
    if (!meta.success) return fail(10001, meta.text);
    language = meta.data.language && meta.data.language !== 'auto' ? meta.data.language : null;
    phase = 'audio';
  };

  // 120 s on the emulator clock without a client message: an `error` event 10001, then close 1001.
  const touch = idleRule(wire, SOCKET_IDLE_MS, 'recognition stream idle timeout', () => {
    const message = `idle timeout: no message from the client for ${SOCKET_IDLE_MS / 1000} s`;
    event('error', { text: '', language: language ?? 'auto', confidence: 0 }, { code: 10001, message });
    phase = 'finished';
    wire.close(1001, message);
  });
  socket.on('message', (data: RawData, isBinary: boolean) => {
    touch();
    try {
      onMessage(messageBytes(data), isBinary);
    } catch (err) {
      emu.logger.error({ err }, 'recognition stream failed');
      fail(10000, 'internal error while recognising', 1011);
    }
  });
}
