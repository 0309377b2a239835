/**
 * Writing a socket's tape once it ended: the timeline's files named, the tape's id made from the operation and the
 * client's messages (so the same socket recorded again gets the next `seq`), credentials and the client's key replaced
 * by the marker, the tape written atomically from the timeline's spill, a step at a time (never the whole timeline in
 * memory). A failed write (a full disk) is told in the log and the journal entry, and leaves no tape and no file.
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { parseTape, TAPE_VERSION, tapeText, type Tape, type TapeStep } from '../format.js';
import { matchKey, tapeIdOf } from '../match.js';
import type { TapeStore } from '../store.js';
import { presentedSecrets, withoutCredentials, withoutSecrets } from '../request.js';
import { socketOperation, type SocketKind } from './kinds.js';
import { socketRequest, type SocketTapesHost } from './host.js';
import type { TimelineRecorder } from './timeline.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** A client step as the id's hash reads it: its JSON message, its text, or the file of its audio. */
function clientItem(step: TapeStep): unknown {
  return 'event' in step ? step.event : 'text' in step ? step.text : 'frame' in step ? step.frame.$file : null;
}

/**
 * A step as a tape keeps it, as HTTP tapes are kept: every credential field of a message replaced by the marker, then
 * its text scanned for the key the client presented (its header or query) and for any key it sent inside a message,
 * wherever either was echoed.
 */
function scrubbed(step: TapeStep, secrets: string[]): TapeStep {
  const fields = 'event' in step ? { ...step, event: withoutCredentials(step.event) } : step;
  return JSON.parse(withoutSecrets(JSON.stringify(fields), secrets)) as TapeStep;
}

/** The timeline's steps read back, scrubbed. */
async function* scrubbedSteps(timeline: TimelineRecorder, secrets: string[]): AsyncGenerator<TapeStep> {
  for await (const step of timeline.steps()) yield scrubbed(step, secrets);
}

/**
 * The hash of a timeline's client side: its messages and the files of its audio, in order (the JSON list of them,
 * hashed as it is read, so a long timeline is never held whole).
 */
async function clientSideHash(steps: AsyncIterable<TapeStep>): Promise<string> {
  const hash = createHash('sha256').update('[');
  let first = true;
  for await (const step of steps) {
    if (step.dir !== 'in' || 'close' in step) continue;
    hash.update(`${first ? '' : ','}${JSON.stringify(clientItem(step)) ?? 'null'}`);
    first = false;
  }
  return hash.update(']').digest('hex');
}

/** A new id for a socket tape: the operation's slug, a hash of the path, query and client messages, the next seq. */
export function socketTapeId(store: TapeStore, kind: SocketKind, tape: Pick<Tape, 'request'>, clientHash: string): { id: string; seq: number } {
  const operation = socketOperation(kind);
  const key = matchKey(kind.service, operation, null, tape.request, {});
  key.fields.set('messages', JSON.stringify(clientHash));
  let seq = 1;
  while (store.has(tapeIdOf(kind.service, operation, key, seq, sha))) seq++;
  return { id: tapeIdOf(kind.service, operation, key, seq, sha), seq };
}

/** What recording a socket kept: the upstream it went to, how long the upstream took to accept it (ms), its timeline. */
interface RecordedSocket {
  upstream: string;
  headMs: number;
  timeline: TimelineRecorder;
}

/**
 * Writes the tape of a socket that ended; its id, or null when it could not be written (said in the log and the
 * entry). The folder's close waits for it (`TapeStore.settled`).
 */
export function writeSocketTape(
  host: SocketTapesHost,
  store: TapeStore,
  kind: SocketKind,
  req: FastifyRequest,
  recorded: RecordedSocket,
): Promise<string | null> {
  return store.track(write(host, store, kind, req, recorded));
}

async function write(host: SocketTapesHost, store: TapeStore, kind: SocketKind, req: FastifyRequest, recorded: RecordedSocket): Promise<string | null> {
  const entry = req.ctx?.entry ?? null;
  try {
    const { timeline } = recorded;
    await timeline.finish();
    const secrets = [...presentedSecrets(req.raw), ...timeline.sentKeys];
    const request = socketRequest(req);
    // Read twice from the spill: once for the id (a hash of the client's side), once to write the tape.
    const { id, seq } = socketTapeId(store, kind, { request }, await clientSideHash(scrubbedSteps(timeline, secrets)));
    const head: Tape = {
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
      answer: { status: 101, headers: {}, stream: { kind: 'socket', steps: [] } },
      downloads: [],
    };
    // Under `record-missing` the tape answers the next such socket: its steps are kept as they are written (a tape
    // replayed is held like every tape read for replay). The spill is gone before the tape is renamed into place.
    const kept: TapeStep[] | null = host.recordMode === 'record-missing' ? [] : null;
    async function* steps(): AsyncGenerator<TapeStep> {
      for await (const step of scrubbedSteps(timeline, secrets)) {
        kept?.push(step);
        yield step;
      }
      await timeline.done();
    }
    await store.writeTapeStreamed(parseTape(`${id}.json`, tapeText(head)), steps());
    if (kept) host.recorded({ ...head, answer: { ...head.answer, stream: { kind: 'socket', steps: kept } } });
    entry?.noteTape({ mode: 'forwarded', upstream: recorded.upstream, id, recorded: true });
    return id;
  } catch (err) {
    await recorded.timeline.abandon().catch(() => undefined);
    entry?.noteTape({ mode: 'forwarded', upstream: recorded.upstream, recorded: false, problem: `the tape could not be written: ${(err as Error).message}` });
    host.emu.logger.error({ err }, 'a socket tape could not be written');
    return null;
  }
}
