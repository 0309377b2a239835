/**
 * Forwarding to the real service: the client's request as it came (its own credentials, its body's bytes), over
 * kept-alive connections, the answer handed back as a stream so its bytes reach the client as they arrive.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { HOP_HEADERS } from './request.js';

/** How long the upstream may take to send its answer's head (wall time). */
const HEAD_TIMEOUT_MS = 120_000;

/** The upstream could not be reached, or broke before its answer's head: in words, for the error shape. */
export class UpstreamError extends Error {}

export class Upstream {
  private readonly http = new HttpAgent({ keepAlive: true });
  private readonly https = new HttpsAgent({ keepAlive: true });

  /**
   * Sends the request to `base` + its path and query; the answer once its head arrived. A body given as a stream goes
   * on as it arrives (its length when known, else chunked); the stream is let go if the upstream goes first.
   */
  send(
    base: string,
    method: string,
    url: string,
    headers: IncomingMessage['headers'],
    body: Buffer | { stream: Readable; length?: number },
  ): Promise<IncomingMessage> {
    const target = new URL(base.replace(/\/+$/, '') + url);
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_HEADERS.has(name)) out[name] = value;
    out.host = target.host;
    if (!Buffer.isBuffer(body)) {
      if (body.length !== undefined) out['content-length'] = String(body.length);
    } else if (body.length || !['GET', 'HEAD'].includes(method)) out['content-length'] = String(body.length);
    const secure = target.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(target, { method, headers: out, agent: secure ? this.https : this.http }, resolve);
      req.setTimeout(HEAD_TIMEOUT_MS, () => req.destroy(new UpstreamError(`no answer within ${HEAD_TIMEOUT_MS / 1000} s`)));
      req.on('error', (err: NodeJS.ErrnoException) => reject(err instanceof UpstreamError ? err : new UpstreamError(`${err.code ?? 'error'}: ${err.message}`)));
      if (Buffer.isBuffer(body)) return void req.end(body);
      body.stream.once('error', (err) => req.destroy(new UpstreamError(`the request body broke off (${err.message})`)));
      req.once('close', () => body.stream.destroy());
      body.stream.pipe(req);
    });
  }

  /** Fetches a link a recorded answer handed out: its status, type and bytes; null when it cannot be fetched. */
  async download(url: string): Promise<{ status: number; contentType: string; bytes: Buffer } | null> {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(HEAD_TIMEOUT_MS) });
      if (!res.ok) return null;
      return { status: res.status, contentType: res.headers.get('content-type') ?? 'application/octet-stream', bytes: Buffer.from(await res.arrayBuffer()) };
    } catch {
      return null;
    }
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
