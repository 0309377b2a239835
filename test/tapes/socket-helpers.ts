import WebSocket from 'ws';

/** One frame a client received: JSON text parsed, binary kept as bytes. */
export type Got = { json: any } | { binary: Buffer };

export interface Talk {
  got: Got[];
  close: { code: number; reason: string };
}

/**
 * A client that sends `script` in order and collects every frame until the socket closes. A step is a frame to send
 * (a Buffer as binary, anything else as JSON) or a function that waits for something among the frames received so
 * far (`until`) before the next step. `closeWhen`: the client closes (1000) once it holds for the frames so far.
 */
export function talk(
  url: string,
  script: (unknown | ((got: Got[]) => boolean))[],
  opts: { headers?: Record<string, string>; closeWhen?: (got: Got[]) => boolean; timeoutMs?: number } = {},
): Promise<Talk> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: opts.headers });
    const got: Got[] = [];
    let at = 0;
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`no close within ${opts.timeoutMs ?? 20_000} ms; got ${JSON.stringify(got.map(nameOf))}`));
    }, opts.timeoutMs ?? 20_000);
    const advance = () => {
      while (at < script.length && ws.readyState === WebSocket.OPEN) {
        const step = script[at];
        if (typeof step === 'function') {
          if (!(step as (g: Got[]) => boolean)(got)) return;
          at++;
          continue;
        }
        if (Buffer.isBuffer(step)) ws.send(step, { binary: true });
        else ws.send(typeof step === 'string' ? step : JSON.stringify(step));
        at++;
      }
    };
    ws.on('open', advance);
    ws.on('message', (data, binary) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
      got.push(binary ? { binary: bytes } : { json: JSON.parse(bytes.toString('utf8')) });
      advance();
      if (opts.closeWhen?.(got) && ws.readyState === WebSocket.OPEN) ws.close(1000, 'done');
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ got, close: { code, reason: reason.toString() } });
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** A frame by name: its `event` or `type`, or `binary`. */
export function nameOf(g: Got): string {
  return 'binary' in g ? 'binary' : String(g.json.event ?? g.json.type ?? '?');
}

/** Waits until a frame of this name arrived. */
export const until = (name: string) => (got: Got[]) => got.some((g) => nameOf(g) === name);

/** The audio a socket carried: binary frames, or the speech events' hex audio, in order. */
export function audioOf(got: Got[]): Buffer {
  return Buffer.concat(
    got.map((g) =>
      'binary' in g ? g.binary : typeof g.json?.data?.audio === 'string' && !g.json.is_final ? Buffer.from(g.json.data.audio, 'hex') : Buffer.alloc(0),
    ),
  );
}

/** A frame without the fields made fresh on replay. */
export function withoutFresh(g: Got, fresh: string[]): unknown {
  if ('binary' in g) return { binary: g.binary.toString('hex') };
  const copy = { ...g.json };
  for (const f of fresh) if (f in copy) copy[f] = typeof copy[f];
  return copy;
}

export function wsBase(httpUrl: string): string {
  return httpUrl.replace(/^http/, 'ws');
}
