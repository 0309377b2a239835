/**
 * A small proxy that routes by API key with consistent hashing, as docs/scaling.md configures nginx or
 * HAProxy to do: plain HTTP and WebSocket upgrades pass through to the emulator the key hashes to. One
 * ring, over the emulators' names (not their addresses), serves every listener, so a key lands on the
 * same emulator on the speech and the platform port.
 */
import { createHash } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';

/** The key the speech service reads (src/services/speech/app.ts): `Authorization: Bearer <key>`, HTTP and sockets. */
export function speechRouteKey(req: IncomingMessage): string {
  return /^Bearer\s+(.*)$/i.exec((req.headers.authorization ?? '').trim())?.[1]?.trim() ?? '';
}

/** The key the platform reads (src/services/platform/app.ts): `X-API-Key`, else `?api_key=` (sockets, browsers). */
export function platformRouteKey(req: IncomingMessage): string {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  return new URL(req.url ?? '/', 'http://proxy').searchParams.get('api_key') ?? '';
}

const hash32 = (text: string) => createHash('md5').update(text).digest().readUInt32BE(0);

/** A consistent-hash ring: each name owns `points` places; a key goes to the first place at or after its hash. */
export class HashRing {
  private readonly places: { at: number; index: number }[] = [];

  constructor(names: string[], points = 160) {
    names.forEach((name, index) => {
      for (let p = 0; p < points; p++) this.places.push({ at: hash32(`${name}-${p}`), index });
    });
    this.places.sort((a, b) => a.at - b.at);
  }

  /** The index (in the names given) of the emulator that owns `key`. */
  pick(key: string): number {
    const h = hash32(key);
    let lo = 0;
    let hi = this.places.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.places[mid]!.at < h) lo = mid + 1;
      else hi = mid;
    }
    return this.places[lo % this.places.length]!.index;
  }
}

export interface RoutingProxy {
  url: string;
  close(): Promise<void>;
}

/** Starts a proxy in front of `targets` (base URLs of one listener, in the ring's order of names), routing by `keyOf`. */
export async function startRoutingProxy(ring: HashRing, targets: string[], keyOf: (req: IncomingMessage) => string): Promise<RoutingProxy> {
  const upstream = targets.map((t) => new URL(t));
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const to = upstream[ring.pick(keyOf(req))]!;
    const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  // An upgrade is passed on as it came (request line, headers, any bytes already read), then both ways as bytes.
  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const to = upstream[ring.pick(keyOf(req))]!;
    const back = connect(Number(to.port), to.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      back.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) back.write(head);
      back.pipe(client).pipe(back);
    });
    for (const s of [client, back]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => (s === client ? back : client).destroy());
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
