/**
 * `/_emulator/journal`: entries newest first (filtered by path and account), one entry, the audio a
 * client streamed on a socket as a WAV file (PCM16 mono at the socket's rate), and the audio an answer
 * carried as hex.
 */
import { attachment } from '../core/http/content-disposition.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as z from 'zod';
import { mulawWavHeader } from '../audio/encode/mulaw.js';
import { wavHeader } from '../audio/encode/pcm.js';
import { accountId } from '../core/state/accounts.js';
import type { Emulator } from '../core/emulator.js';
import { entryCode, type JournalEntry } from '../core/journal/journal.js';
import { ControlError, input, keyParam } from './common.js';
import { differences, matcherFields, type Matcher } from './journal-match.js';

/** `name:value` pairs of a query parameter that may repeat (`?header=x-request-id:7&header=…`). */
const pairs = z
  .union([z.string(), z.array(z.string())])
  .transform((v, ctx) => {
    const out: Record<string, string> = {};
    for (const item of [v].flat()) {
      const at = item.indexOf(':');
      if (at <= 0) {
        // What was given is not echoed: it may be a credential (`authorization Bearer …` without its colon).
        ctx.addIssue({ code: 'custom', message: `expected name:value, got ${at < 0 ? 'no colon' : 'no name before the colon'}` });
        return z.NEVER;
      }
      out[item.slice(0, at).trim()] = item.slice(at + 1).trim();
    }
    return out;
  })
  .optional();

export const journalQuery = z
  .object({
    limit: z.coerce.number().int().min(1).optional(),
    path: z.string().optional(),
    account: z.string().optional(),
    listener: matcherFields.listener,
    method: z.string().min(1).optional(),
    status: z.coerce.number().int().min(100).max(599).optional(),
    code: z.string().min(1).optional(),
    /** Request headers the entries carry (`name:value`, repeatable; names case-insensitive). */
    header: pairs,
    /** Query parameters the entries carry (`name:value`, repeatable). */
    query: pairs,
    fault: z
      .enum(['true', 'false'])
      .transform((v) => v === 'true')
      .optional(),
    since_ms: z.coerce.number().int().min(0).optional(),
    until_ms: z.coerce.number().int().min(0).optional(),
  })
  .strict();
export type JournalQueryInput = z.output<typeof journalQuery>;

export const JOURNAL_QUERY_KEYS = Object.keys(journalQuery.shape);

/**
 * An entry as the control plane shows it (list, one entry, the live feed, verify's near misses): the
 * account's id (a hash of the key) stays inside; `response.code` is the entry's one code reading.
 */
export function entryView(e: JournalEntry) {
  const { accountId: _hidden, frameBytes: _bytes, response, request, fault, stream, delivery, ...view } = e;
  return {
    ...view,
    ...(fault ? { fault: fault.toJSON() } : {}),
    ...(stream ? { stream: stream.toJSON() } : {}),
    ...(delivery ? { delivery: delivery.figures() } : {}),
    request: request.toJSON(),
    response: { summary: response.summary, content_type: response.content_type, code: entryCode(e) },
  };
}

/** The entries a journal query selects, newest first (the journal's list and the report read the same). */
export function selectEntries(emu: Emulator, q: JournalQueryInput, what: string): JournalEntry[] {
  const { limit, path, account, header, ...rest } = q;
  if (q.since_ms !== undefined && q.until_ms !== undefined && q.since_ms >= q.until_ms) {
    throw new ControlError(400, `${what} field since_ms: must be before until_ms (${q.since_ms} >= ${q.until_ms})`);
  }
  const matcher: Matcher = { ...rest, headers: header };
  const filtered = Object.values(matcher).some((v) => v !== undefined);
  return emu.journal.list({
    limit,
    path,
    accountId: account !== undefined ? accountId(keyParam(account, `${what} account`)) : undefined,
    match: filtered ? (e) => differences(matcher, undefined, e).length === 0 : undefined,
  });
}

const idParams = z.object({ id: z.string() });

const ANSWER_TYPES: Record<string, string> = { mp3: 'audio/mpeg', wav: 'audio/wav', flac: 'audio/flac', opus: 'audio/ogg' };
type IdRequest = FastifyRequest<{ Params: { id: string } }>;

/** Answer audio as a file a player opens: raw samples get their WAV header (μ-law WAVs carry format tag 7). */
function playable(format: string, raw: Buffer, rate: number, channels: number): { bytes: Buffer; ext: string } {
  if (format === 'pcm') return { bytes: Buffer.concat([wavHeader(rate, channels, raw.length), raw]), ext: 'wav' };
  if (format === 'pcmu_raw') {
    const pad = raw.length & 1 ? Buffer.alloc(1) : Buffer.alloc(0);
    return { bytes: Buffer.concat([mulawWavHeader(rate, channels, raw.length / channels), raw, pad]), ext: 'wav' };
  }
  if (format === 'pcmu_wav') return { bytes: raw, ext: 'wav' };
  return { bytes: raw, ext: format };
}

export function journalRoutes(app: FastifyInstance, emu: Emulator): void {
  app.get('/journal', { ...input({ query: JOURNAL_QUERY_KEYS, what: 'journal query' }), schema: { querystring: journalQuery } }, async (req) => {
    const entries = selectEntries(emu, req.query as JournalQueryInput, 'journal query');
    return { entries: entries.map(entryView) };
  });
  app.delete('/journal', input({}), async (_req, reply: FastifyReply) => {
    emu.journal.clear();
    return reply.code(200).send({ deleted: 'all' });
  });

  const entryOf = (id: string) => {
    const entry = emu.journal.get(id);
    if (!entry) throw new ControlError(404, `no journal entry ${id} (the journal keeps the last ${emu.config.journalLimit})`);
    return entry;
  };
  app.get('/journal/:id', { ...input({}), schema: { params: idParams } }, async (req: IdRequest) => entryView(entryOf(req.params.id)));
  app.get('/journal/:id/audio.wav', { ...input({}), schema: { params: idParams } }, async (req: IdRequest, reply) => {
    entryOf(req.params.id);
    const audio = emu.journal.audioOf(req.params.id);
    if (!audio)
      throw new ControlError(
        404,
        `journal entry ${req.params.id} holds no client audio (only audio streamed on the conversation and recognition sockets is kept)`,
      );
    const wav = Buffer.concat([wavHeader(audio.sampleRate, 1, audio.pcm.length), audio.pcm]);
    return reply
      .code(200)
      .header('content-type', 'audio/wav')
      .header('content-disposition', attachment(`${req.params.id}.wav`))
      .send(wav);
  });
  app.get('/journal/:id/answer-audio', { ...input({}), schema: { params: idParams } }, async (req: IdRequest, reply) => {
    entryOf(req.params.id);
    const audio = emu.journal.answerAudioOf(req.params.id);
    if (!audio) throw new ControlError(404, `journal entry ${req.params.id} holds no answer audio (kept for answers that carry their audio as hex)`);
    let raw: Buffer;
    try {
      raw = audio.bytes ?? (await audio.make!());
    } catch (err) {
      // Made again from its request: a voice since deleted or expired cannot speak it any more.
      throw new ControlError(404, `the audio of journal entry ${req.params.id} cannot be made again: ${(err as Error).message}`);
    }
    // Raw PCM and raw μ-law cannot be played as they are: each is served as the WAV of the same samples.
    const { bytes, ext } = playable(audio.format, raw, audio.sampleRate, audio.channels);
    return reply
      .code(200)
      .header('content-type', ANSWER_TYPES[ext] ?? 'application/octet-stream')
      .header('content-disposition', attachment(`${req.params.id}-answer.${ext}`))
      .send(bytes);
  });
}
