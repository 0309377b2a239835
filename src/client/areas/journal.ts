/** The journal's calls (`/_emulator/journal`), with verify and speak, which read and make what it records. */
import { ControlClientError } from '../errors.js';
import type { Call, CallOptions } from '../transport.js';
import type { JournalAudio, JournalEntryView, JournalQuery, SpeakRequest, SpokenAudio, VerifyRequest, VerifyResult } from '../types.js';
import { DELETED, isDeleted, seg, type Caller } from './caller.js';

export function journalCalls(caller: Caller) {
  return {
    /** Entries newest first, filtered by path, API key, listener, headers, query, fault and time window. */
    list: async (query: JournalQuery = {}, options?: CallOptions): Promise<JournalEntryView[]> => {
      const call: Call = { method: 'GET', path: '/journal', query: journalParams(query) };
      return (await caller.json<{ entries: JournalEntryView[] }>(call, 'the journal {entries: [...]}', (b) => Array.isArray(b.entries), options)).entries;
    },
    get: (id: string, options?: CallOptions): Promise<JournalEntryView> =>
      caller.json(
        { method: 'GET', path: `/journal/${seg(id)}` },
        'a journal entry {id, path, ...}',
        (b) => typeof b.id === 'string' && typeof b.path === 'string',
        options,
      ),
    clear: (options?: CallOptions): Promise<{ deleted: 'all' }> => caller.json({ method: 'DELETE', path: '/journal' }, DELETED, isDeleted, options),
    /** The audio a client streamed on a socket, as WAV (PCM16 mono at the socket's rate). */
    clientAudio: (id: string, options?: CallOptions): Promise<JournalAudio> => audio(caller, `/journal/${seg(id)}/audio.wav`, options),
    /** The audio an answer carried as hex, in its format (raw PCM as WAV). */
    answerAudio: (id: string, options?: CallOptions): Promise<JournalAudio> => audio(caller, `/journal/${seg(id)}/answer-audio`, options),
  };
}

async function audio(caller: Caller, path: string, options?: CallOptions): Promise<JournalAudio> {
  const reply = await caller.send({ method: 'GET', path }, options);
  const contentType = reply.headers.get('content-type') ?? 'application/octet-stream';
  if (!/^audio\//i.test(contentType)) {
    throw new ControlClientError(reply.status, `expected audio, got ${contentType} — is this the URL of an emulator?`, reply.text, reply.request, reply.url);
  }
  return { bytes: reply.bytes, contentType };
}

/** `POST /_emulator/verify`: the count of the entries the matcher selects, checked. */
export function verifyJournal(caller: Caller, request: VerifyRequest, options?: CallOptions): Promise<VerifyResult> {
  return caller.json(
    { method: 'POST', path: '/verify', body: request },
    'the verification {ok: true, count, expected}',
    (b) => b.ok === true && typeof b.count === 'number',
    options,
  );
}

/** `POST /_emulator/speak`: a caller's audio with its impairments, read from the answer's headers. */
export async function speakAudio(caller: Caller, request: SpeakRequest, options?: CallOptions): Promise<SpokenAudio> {
  const reply = await caller.send({ method: 'POST', path: '/speak', body: request }, options);
  const contentType = reply.headers.get('content-type') ?? '';
  const impairments = reply.headers.get('x-emulator-impairments');
  if (!/^audio\//i.test(contentType) || !impairments) {
    throw new ControlClientError(
      reply.status,
      `expected audio with X-Emulator-Impairments, got ${contentType || 'no content type'} — is this the URL of an emulator?`,
      reply.text,
      reply.request,
      reply.url,
    );
  }
  return {
    bytes: reply.bytes,
    contentType,
    sampleRate: Number(reply.headers.get('x-audio-sample-rate')),
    durationMs: Number(reply.headers.get('x-audio-duration-ms')),
    signatureId: reply.headers.get('x-emulator-signature') ?? '',
    impairments: JSON.parse(impairments) as SpokenAudio['impairments'],
  };
}

/** A journal query as URL parameters: headers and query parameters travel as repeated `name:value` parameters. */
export function journalParams(query: JournalQuery): Call['query'] {
  const { header, query: params, ...plain } = query;
  const asPairs = (o: Record<string, string> | undefined) => (o ? Object.entries(o).map(([k, v]) => `${k}:${v}`) : undefined);
  return { ...plain, header: asPairs(header), query: asPairs(params) };
}
