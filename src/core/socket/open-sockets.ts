/**
 * Open WebSockets, by account, so the state view can count them and a reset or shutdown can close them.
 */
export interface OpenSocket {
  id: number;
  accountId: string | null;
  path: string;
  openedAtMs: number;
  close: (code: number, reason: string) => void;
  /** Bytes sent that the client has not read yet (the state view shows them). */
  buffered?: () => number;
  /** Its client hears audio that goes outside the socket (a call room's, over UDP): a pause would be heard. */
  media?: boolean;
}

export class Sockets {
  private open = new Map<number, OpenSocket>();
  private counter = 0;

  add(s: Omit<OpenSocket, 'id'>): OpenSocket {
    // The state view shows the path: never a query, where WebSocket clients carry their key.
    const socket = { ...s, path: s.path.split('?')[0]!, id: ++this.counter };
    this.open.set(socket.id, socket);
    return socket;
  }

  remove(socket: OpenSocket | null | undefined): void {
    if (socket) this.open.delete(socket.id);
  }

  list(accountId?: string): OpenSocket[] {
    return [...this.open.values()].filter((s) => accountId === undefined || s.accountId === accountId);
  }

  closeAll(code: number, reason: string, accountId?: string): void {
    for (const s of this.list(accountId)) {
      this.open.delete(s.id);
      try {
        s.close(code, reason);
      } catch {
        // already gone
      }
    }
  }
}
