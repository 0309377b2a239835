/** The tapes' calls (`/_emulator/tapes`). */
import type { CallOptions } from '../transport.js';
import type { TapesCheckReport, TapesReplayRequest, TapesView } from '../types.js';
import type { Caller } from './caller.js';

/** `POST /_emulator/tapes/check` of a folder on the emulator's machine. */
export function checkTapes(caller: Caller, dir: string, options?: CallOptions): Promise<TapesCheckReport> {
  return caller.json(
    { method: 'POST', path: '/tapes/check', body: { dir } },
    'the tapes check report {summary, tapes, differing, results}',
    (b) => typeof b.summary === 'string' && typeof b.differing === 'number' && Array.isArray(b.results),
    options,
  );
}

const TAPES = 'the tapes in effect {mode, dir, strict, speed, tapes}';
const isTapesView = (b: any) => 'mode' in b && 'dir' in b && typeof b.tapes === 'number';

/** `PUT /_emulator/tapes/replay`: replays a folder of tapes from now on. */
export function replayTapes(caller: Caller, request: TapesReplayRequest, options?: CallOptions): Promise<TapesView> {
  return caller.json({ method: 'PUT', path: '/tapes/replay', body: request }, TAPES, isTapesView, options);
}

/** `DELETE /_emulator/tapes/replay`: the emulator's own answers again. */
export function stopReplay(caller: Caller, options?: CallOptions): Promise<TapesView> {
  return caller.json({ method: 'DELETE', path: '/tapes/replay' }, TAPES, isTapesView, options);
}

/** `GET /_emulator/tapes/replay`: the tapes in effect. */
export function loadedTapes(caller: Caller, options?: CallOptions): Promise<TapesView> {
  return caller.json({ method: 'GET', path: '/tapes/replay' }, TAPES, isTapesView, options);
}
