/**
 * Writing a socket's tape once it ended: the timeline's files named, the tape's id made from the operation and the
 * client's messages (so the same socket recorded again gets the next `seq`), credentials and the client's key replaced
 * by the marker, the tape written atomically. A failed
 * write (a full disk) is told in the log and the journal entry, and leaves no tape and no file.
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { TAPE_VERSION, type Tape, type TapeStep } from '../format.js';
import { matchKey, tapeIdOf } from '../match.js';
import type { TapeStore } from '../store.js';
import { credentialValues, presentedSecrets, withoutCredentials, withoutSecrets } from '../request.js';
import { socketOperation, type SocketKind } from './kinds.js';
import { socketRequest, type SocketTapesHost } from './host.js';
import type { TimelineRecorder } from './timeline.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** The client's side of a timeline, as the id's hash reads it: its JSON messages and the files of its audio. */
function clientSide(steps: TapeStep[]): string {
  return JSON.stringify(
    steps.filter((s) => s.dir === 'in' && !('close' in s)).map((s) => ('event' in s ? s.event : 'text' in s ? s.text : 'frame' in s ? s.frame.$file : null)),
  );
}

/**
 * The steps as a tape keeps them, as HTTP tapes are kept: every credential field of a message replaced by the marker,
 * then the whole text scanned for the key the client presented (its header or query) and for any key it sent inside a
 * message, wherever either was echoed.
 */
function scrubbed(steps: TapeStep[], presented: string[]): TapeStep[] {
  const secrets = [...presented];
  for (const s of steps) if ('event' in s) credentialValues(s.event, secrets);
  const fields = steps.map((s) => ('event' in s ? { ...s, event: withoutCredentials(s.event) } : s));
  return JSON.parse(withoutSecrets(JSON.stringify(fields), secrets)) as TapeStep[];
}

/** A new id for a socket tape: the operation's slug, a hash of the path, query and client messages, the next seq. */
export function socketTapeId(store: TapeStore, kind: SocketKind, tape: Pick<Tape, 'request'>, steps: TapeStep[]): { id: string; seq: number } {
  const operation = socketOperation(kind);
  const key = matchKey(kind.service, operation, null, tape.request, {});
  key.fields.set('messages', JSON.stringify(sha(clientSide(steps))));
  let seq = 1;
  while (store.tapes.has(tapeIdOf(kind.service, operation, key, seq, sha))) seq++;
  return { id: tapeIdOf(kind.service, operation, key, seq, sha), seq };
}

/** Writes the tape of a socket that ended; its id, or null when it could not be written (said in the log and the entry). */
export async function writeSocketTape(
  host: SocketTapesHost,
  store: TapeStore,
  kind: SocketKind,
  req: FastifyRequest,
  recorded: { upstream: string; headMs: number; timeline: TimelineRecorder },
): Promise<string | null> {
  const entry = req.ctx?.entry ?? null;
  try {
    const steps = scrubbed(await recorded.timeline.finish(), presentedSecrets(req.raw));
    const request = socketRequest(req);
    const { id, seq } = socketTapeId(store, kind, { request }, steps);
    const tape: Tape = {
      tape: TAPE_VERSION,
      id,
      service: kind.service,
      operation: socketOperation(kind),
      seq,
      account: host.perAccount ? (req.ctx?.account?.id ?? null) : null,
      // On the emulator clock: a frozen clock gives the same tape bytes for the same exchange.
      recorded_at: new Date(host.emu.clock.now()).toISOString(),
      upstream: recorded.upstream,
      head_ms: recorded.headMs,
      request,
      answer: { status: 101, headers: {}, stream: { kind: 'socket', steps } },
      downloads: [],
    };
    await store.writeTape(tape);
    host.recorded(tape);
    entry?.noteTape({ mode: 'forwarded', upstream: recorded.upstream, id, recorded: true });
    return id;
  } catch (err) {
    await recorded.timeline.abandon().catch(() => undefined);
    entry?.noteTape({ mode: 'forwarded', upstream: recorded.upstream, recorded: false, problem: `the tape could not be written: ${(err as Error).message}` });
    host.emu.logger.error({ err }, 'a socket tape could not be written');
    return null;
  }
}
