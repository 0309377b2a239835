import { request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** true when the server closed the connection (or answered in full); false when the wait ran out. */
  answered: boolean;
}

/**
 * Sends exact bytes over a TCP socket and reads one HTTP/1.1 answer. The socket stays open after the
 * request (as a client whose body is still "in flight"), so a server that waits for more bytes would
 * never answer: `answered` is false then, after `waitMs`.
 */
export function rawRequest(baseUrl: string, bytes: Buffer | string, opts: { waitMs?: number; endAfterMs?: number } = {}): Promise<RawReply> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname);
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (answered: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.split('\r\n\r\n', 1)[0] ?? '';
      let body = text.slice(head.length + 4);
      const lines = head.split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
      resolve({ status, headers, body: Buffer.from(body, 'latin1').toString('utf8'), answered });
    };
    const complete = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const len = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end));
      if (len) return Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(len[1]);
      return /\r\ntransfer-encoding:\s*chunked/i.test(text.slice(0, end)) && text.endsWith('0\r\n\r\n');
    };
    const timer = setTimeout(() => finish(false), opts.waitMs ?? 5000);
    sock.on('data', (c: Buffer) => {
      chunks.push(c);
      if (complete()) finish(true);
    });
    sock.on('close', () => finish(chunks.length > 0));
    sock.on('error', (err) => (chunks.length ? finish(true) : reject(err)));
    sock.write(bytes);
    if (opts.endAfterMs !== undefined) setTimeout(() => sock.end(), opts.endAfterMs);
  });
}

function dechunk(s: string): string {
  let out = '';
  let i = 0;
  for (;;) {
    const eol = s.indexOf('\r\n', i);
    if (eol < 0) return out;
    const n = parseInt(s.slice(i, eol), 16);
    if (!n) return out;
    out += s.slice(eol + 2, eol + 2 + n);
    i = eol + 2 + n + 2;
  }
}

/** A GET whose path goes on the wire exactly as written (fetch would normalise `..` and escapes): status, headers, body bytes. */
export function rawGet(baseUrl: string, path: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A multipart request with the given body and boundary `B`, as raw bytes. */
export function multipartRequest(path: string, body: string, headers: Record<string, string> = {}): string {
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
}
