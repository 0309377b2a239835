import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** An answer in the shape of the service a listener serves (status, extra headers, JSON body). */
export type ShapedAnswer = (message: string) => { status: number; headers?: Record<string, string>; body: unknown };

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
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
    const { status: parserStatus, message } = describeParserError(err.code);
    const shaped = answer(message);
    // The service's own status for a bad request, except where HTTP has a more precise one.
    const status = parserStatus === 400 ? shaped.status : parserStatus;
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
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\n${head}\r\n${body}`);
  };
}
