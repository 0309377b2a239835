import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * An answer in the shape of the service a listener serves (status, extra headers, JSON body); the
 * path, when known, picks the shape of what it reached (the control plane, a JSON-RPC endpoint).
 */
export type ShapedAnswer = (message: string, url?: string) => { status: number; headers?: Record<string, string>; body: unknown };

/** The path of the request line in the bytes the parser refused, when they hold one. */
function pathOf(raw: unknown): string | undefined {
  if (!Buffer.isBuffer(raw)) return undefined;
  const m = /^[A-Z]+ (\S+) HTTP\/1\.[01]\r?\n/.exec(raw.subarray(0, 8192).toString('latin1'));
  return m?.[1];
}

/** The raw bytes of a whole JSON answer that closes the connection. */
function rawAnswer(status: number, shaped: { headers?: Record<string, string>; body: unknown }): string {
  const body = JSON.stringify(shaped.body);
  const headers = {
    ...shaped.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\n${head}\r\n${body}`;
}

/** `CONNECT` (a proxy request) is not served: 405 in the listener's shape, then the connection closes. */
export function connectHandler(answer: ShapedAnswer): (req: IncomingMessage, socket: Duplex) => void {
  return (_req, socket) => {
    socket.on('error', () => {});
    socket.end(rawAnswer(405, answer('the CONNECT method is not supported: this is not a proxy; send GET, POST or DELETE to a path')));
  };
}

/**
 * A request handler that first refuses an HTTP/1.1 request without a Host header (required by HTTP/1.1)
 * in the listener's shape; the server must be created with `requireHostHeader: false`, or Node answers
 * a bare 400 itself.
 */
export function requireHost(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  answer: ShapedAnswer,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (req.headers.host !== undefined || req.httpVersionMinor === 0) return handler(req, res);
    const shaped = answer('the Host header is required in HTTP/1.1', req.url);
    const body = JSON.stringify(shaped.body);
    res.shouldKeepAlive = false;
    res.writeHead(400, {
      ...shaped.headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
    req.resume();
  };
}

/** What the HTTP parser refused, in words a client can act on. */
function describeParserError(code: string | undefined): { status: number; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'the request headers are larger than 16 KB' };
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { status: 400, message: 'the request has both Content-Length and Transfer-Encoding' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return { status: 400, message: 'the Transfer-Encoding header cannot be used here (it comes with Content-Length, or does not end in chunked)' };
    case 'HPE_INVALID_URL':
      return { status: 400, message: 'the request path holds a character that is not allowed (encode it with %XX)' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'the request was not received in time' };
    default:
      return { status: 400, message: `the request is not valid HTTP/1.1 (${code ?? 'parse error'})` };
  }
}

/**
 * The `clientError` handler of a listener: a request the HTTP parser refuses (before any route or
 * hook can run) is answered in the listener's service shape, then the connection is closed.
 */
export function parserErrorHandler(answer: ShapedAnswer): (err: Error & { code?: string }, socket: Duplex) => void {
  return (err: Error & { code?: string; rawPacket?: unknown }, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
    // An answer already under way (a body timeout after the headers left) cannot get another one.
    if ((socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) return void socket.destroy();
    const { status, message } = describeParserError(err.code);
    // The path picks the shape (control plane, JSON-RPC); the status is the parser's.
    socket.end(rawAnswer(status, answer(message, pathOf(err.rawPacket))));
  };
}
