/**
 * The rules of `POST /v1/speech_to_text` (speech-current.md E1-E4), in the order they are checked:
 * 1. the form: `model`, `file` once, `response_format`, `timestamp_level`, `stream`, `stream` with the
 *    format, the `language` header (400/2013);
 * 2. the file part's size (413), then its container from the bytes (400/2013 unsupported or
 *    undecodable), then its duration (400/2013 over 500 s);
 * 3. the balance at 2.50 yuan per audio hour (402/1008), the account's `speech_to_text_per_minute`
 *    window when one is configured (429/1002);
 * 4. the transcript (own audio, fixture, or nothing), then the content-safety terms (422/1026);
 * 5. the charge and the usage in seconds.
 * Nothing here knows HTTP: a refusal is an SttError with its status, code and text.
 */
import type { Account } from '../../../core/state/accounts.js';
import * as z from 'zod';
import { accountArea, areaOf } from '../../../core/state/areas.js';
import type { Emulator, StateArea } from '../../../core/emulator.js';
import { ExpectedError } from '../../../core/http/expected-error.js';
import { ContainerError, readContainer, type ByteSource, type ContainerInfo } from '../../../audio/container.js';
import { decodeHead } from '../../../audio/head.js';
import { findRecord, isSilent, signatureOffsetMs } from '../../shared/recognize.js';
import { LANGUAGES, RESPONSE_FORMATS, STT_MODEL, TIMESTAMP_LEVELS, type ResponseFormat } from './schema.js';
import { EMPTY, fixtureTranscript, joinText, recordTranscript, type Transcript } from './transcript.js';
import { describeValue } from '../../../core/http/describe.js';

/** A refusal: HTTP status, spec code (none for 413) and the text before ` (<code>)`. */
export class SttError extends ExpectedError {
  constructor(
    readonly status: number,
    readonly code: number | null,
    message: string,
  ) {
    super(message);
  }
}

export const MAX_FILE_BYTES = 52_428_800;
export const MAX_DURATION_S = 500;
/** 2.50 yuan per hour of audio, in micro-units. */
export const PRICE_MICRO_PER_HOUR = 2_500_000;
const MINUTE_MS = 60_000;

export const badParams = (detail: string) => new SttError(400, 2013, `invalid params, ${detail}`);

/** The documented texts of the codes this endpoint answers with. */
export const MESSAGES: Record<number, string> = {
  1000: 'internal error',
  1001: 'request timeout',
  1002: 'rate limit, please retry later',
  1004: "login fail: Please carry the API secret key in the 'Authorization' field of the request header",
  1008: 'insufficient balance',
  1026: 'audio content contains sensitive content',
  1039: 'token limit',
  2013: 'invalid params',
};

/** HTTP status of a spec code (an injected `code=N` fault answers with it). */
export function statusOfCode(code: number): number {
  return ({ 1001: 504, 1002: 429, 1004: 401, 1008: 402, 1026: 422, 1039: 429, 2013: 400 } as Record<number, number>)[code] ?? 500;
}

/** Spec code of an HTTP status (an injected `status=N` fault). */
export function codeOfStatus(status: number): number | null {
  if (status === 413) return null;
  return ({ 400: 2013, 401: 1004, 403: 1004, 402: 1008, 408: 1001, 504: 1001, 422: 1026, 429: 1002 } as Record<number, number>)[status] ?? 1000;
}

/** `error.type` of a status (section 1.6). */
export function errorType(status: number): string {
  const types: Record<number, string> = {
    400: 'bad_request_error',
    401: 'authorized_error',
    403: 'authorized_error',
    402: 'insufficient_balance_error',
    404: 'not_found_error',
    413: 'invalid_request_error',
    422: 'unprocessable_entity_error',
    429: 'rate_limit_error',
  };
  return types[status] ?? (status >= 500 ? 'server_error' : 'bad_request_error');
}

/** What the route read from the multipart body and the headers. */
export interface SttForm {
  /** Text parts by name (the first of each name). */
  fields: ReadonlyMap<string, string>;
  fileParts: number;
  languageHeader: string | undefined;
}

export interface SttRequest {
  responseFormat: ResponseFormat;
  level: 'sentence' | 'word';
  stream: boolean;
  /** The language hint, lower case; undefined in mixed mode. */
  language: string | undefined;
}

const listed = (values: readonly string[]) => values.map((v) => (v === '' ? '""' : v)).join(', ');

/** Step 1: the form and the language header. */
export function checkForm(form: SttForm): SttRequest {
  const model = form.fields.get('model');
  if (model === undefined || model === '') throw badParams(`model is required; use ${STT_MODEL}`);
  if (model !== STT_MODEL) throw badParams(`model ${describeValue(model)} is not supported; use ${STT_MODEL}`);
  if (form.fileParts === 0) throw badParams('file is required (one file part named file)');
  if (form.fileParts > 1) throw badParams(`file must be sent exactly once (got ${form.fileParts} file parts)`);
  const responseFormat = form.fields.get('response_format') ?? 'json';
  if (!(RESPONSE_FORMATS as readonly string[]).includes(responseFormat))
    throw badParams(`response_format ${describeValue(responseFormat)} is not supported; use one of ${listed(RESPONSE_FORMATS)}`);
  const level = form.fields.get('timestamp_level') ?? 'sentence';
  if (!(TIMESTAMP_LEVELS as readonly string[]).includes(level))
    throw badParams(`timestamp_level ${describeValue(level)} is not supported; use one of ${listed(TIMESTAMP_LEVELS)}`);
  const streamText = form.fields.get('stream') ?? 'false';
  if (!/^(true|false)$/i.test(streamText)) throw badParams(`stream ${describeValue(streamText)} must be true or false`);
  const stream = streamText.toLowerCase() === 'true';
  if (stream && responseFormat !== 'json') throw badParams(`stream=true requires response_format json (got response_format ${describeValue(responseFormat)})`);
  const header = form.languageHeader?.trim() ?? '';
  const language = header ? header.toLowerCase() : undefined;
  if (language !== undefined && !(LANGUAGES as readonly string[]).includes(language))
    throw badParams(`language header ${describeValue(header)} is not supported; use one of ${LANGUAGES.join(', ')}, or none for mixed mode`);
  return { responseFormat: responseFormat as ResponseFormat, level: level === 'word' ? 'word' : 'sentence', stream, language };
}

/** Step 2a: the file part's size (the text of the real service's 413). */
export function tooLarge(size: number): SttError {
  return new SttError(413, null, `request body too large: ${size} bytes exceeds limit of ${MAX_FILE_BYTES} bytes`);
}

/** Step 2b: the container and its duration. */
export function readAudio(src: ByteSource): ContainerInfo {
  if (!src.size) throw badParams('file is empty');
  let info: ContainerInfo;
  try {
    info = readContainer(src);
  } catch (err) {
    // A header that ends where a field should be is a broken file too, whatever the reader threw.
    throw badParams(err instanceof ContainerError && err.kind === 'unsupported' ? 'unsupported audio format' : 'audio could not be decoded');
  }
  if (!Number.isFinite(info.duration)) throw badParams('audio could not be decoded');
  // Compared at 0.1 s, as the message states it: 500.0 s is accepted.
  const tenths = Math.round(info.duration * 10) / 10;
  if (tenths > MAX_DURATION_S) throw badParams(`audio duration ${tenths.toFixed(1)}s exceeds the limit of ${MAX_DURATION_S}s`);
  return info;
}

/** Step 3: the price of the audio against the balance, then the account's request window. */
export function admitAudio(emu: Emulator, account: Account, durationMs: number): number {
  const price = Math.ceil((PRICE_MICRO_PER_HOUR * durationMs) / 3_600_000);
  if (account.balanceMicro <= 0 || !emu.accounts.canAfford(account, price)) throw new SttError(402, 1008, MESSAGES[1008]!);
  const perMinute = account.limits.speech_to_text_per_minute;
  if (perMinute && !emu.limits.hit(emu.windowKey(account, 'speech:speech_to_text'), MINUTE_MS, perMinute).allowed)
    throw new SttError(429, 1002, MESSAGES[1002]!);
  return price;
}

/** Step 4: what the file says (own audio, fixture by file hash, else nothing). */
export async function transcribe(emu: Emulator, src: ByteSource, info: ContainerInfo, sha256: string, language: string | undefined): Promise<Transcript> {
  const durationMs = info.duration * 1000;
  const head = await decodeHead(src, info);
  if (head && !isSilent(head.samples)) {
    const record = findRecord(emu, head.samples, head.sampleRate);
    if (record) {
      // Where the emulator's audio starts in the file (decoder delay, padding): times shift by it.
      // Under 3 ms is the onset detector's own spread (a WAV of the emulator's starts at 0).
      const found = Math.round(signatureOffsetMs(head.samples, head.sampleRate));
      const offsetMs = found < 3 ? 0 : found;
      return recordTranscript(record, durationMs - offsetMs, offsetMs);
    }
  }
  return fixtureTranscript(emu, sha256, durationMs, language) ?? EMPTY;
}

/** Step 4b: a transcript holding a content-safety term is 422/1026. */
export function checkContent(emu: Emulator, transcript: Transcript): void {
  const text = joinText(transcript.sentences).toLowerCase();
  if (!text) return;
  const term = emu.fixtures.data['content-safety.json'].terms.find((t) => text.includes(t.toLowerCase()));
  if (term !== undefined) throw new SttError(422, 1026, MESSAGES[1026]!);
}

/** Step 5: charge and count. */
export function charge(emu: Emulator, account: Account, price: number, durationMs: number): void {
  emu.accounts.charge(account, price);
  sttArea(emu).count(account.id, durationMs);
}

interface SttUsage {
  requests: number;
  audio_seconds: number;
}

export interface SttArea extends StateArea {
  count(accountId: string, durationMs: number): void;
}

/** Usage of speech to text per account (seconds of audio, as billed), in the state view and snapshots. */
export function sttArea(emu: Emulator): SttArea {
  return areaOf(emu, 'speech_to_text', () => {
    const area = accountArea<SttUsage>({
      name: 'speech_to_text',
      savedByAccount: { value: z.looseObject({ requests: z.number(), audio_seconds: z.number() }), restore: (u) => ({ ...u }) },
      show: (u) => u ?? { requests: 0, audio_seconds: 0 },
    });
    return {
      ...area,
      count(accountId, durationMs) {
        const u = area.byAccount.get(accountId) ?? { requests: 0, audio_seconds: 0 };
        u.requests++;
        u.audio_seconds = Math.round((u.audio_seconds + durationMs / 1000) * 1000) / 1000;
        area.byAccount.set(accountId, u);
        emu.markDirty('speech_to_text', accountId);
      },
    };
  });
}
