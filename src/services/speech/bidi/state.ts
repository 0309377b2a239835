/**
 * The open bidirectional sessions, for the state view (rule E22): each account's sockets with their
 * buffer, queue, sentence in progress and timers. Nothing here outlives its socket, so a reset (which
 * closes the sockets) or a restart leaves it empty.
 */
import { areaOf } from '../../../core/state/areas.js';
import type { Emulator, StateArea } from '../../../core/emulator.js';

export interface BidiSessions {
  add(accountId: string, view: () => object): () => void;
}

export function bidiSessions(emu: Emulator): BidiSessions {
  return areaOf(emu, 'speech_bidi', () => newBidiSessions());
}

function newBidiSessions(): StateArea & BidiSessions {
  const open = new Map<number, { accountId: string; view: () => object }>();
  let next = 0;
  return {
    name: 'speech_bidi',
    reset(accountId) {
      for (const [id, s] of open) if (accountId === undefined || s.accountId === accountId) open.delete(id);
    },
    view(accountId) {
      const sockets = [...open.values()].filter((s) => s.accountId === accountId).map((s) => s.view());
      return sockets.length ? { open_sockets: sockets } : undefined;
    },
    add(accountId, view) {
      const id = ++next;
      open.set(id, { accountId, view });
      return () => open.delete(id);
    },
  };
}
