/** The idle rule of a socket: a timer on the emulator clock, through the socket's wire, that dies with the socket. */
import type { SocketWire } from './wire.js';

/** The idle rule of the platform's sockets: this long on the emulator clock without a client message. */
export const SOCKET_IDLE_MS = 120_000;

/**
 * An idle rule on the emulator clock: `onIdle` runs when `ms` pass without `touch()` (call it on every
 * client message and when the server's own work ends). While `busy()` (a reply being made) the rule
 * waits another period instead. The timer dies with the socket.
 */
export function idleRule(wire: SocketWire, ms: number, label: string, onIdle: () => void, busy: () => boolean = () => false): () => void {
  let id: number | null = null;
  const touch = () => {
    wire.cancel(id);
    id = wire.after(
      ms,
      () => {
        id = null;
        if (busy()) touch();
        else onIdle();
      },
      label,
      // A rule of the listener, not the account's state: counted in the state view's total only.
      false,
    );
  };
  touch();
  return touch;
}
