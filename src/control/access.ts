/**
 * Who may drive the control plane from a browser. The emulated APIs stay open to browser apps (that is
 * what `--cors-origins` is for); the control plane can reset state, read every request body and queue
 * faults, so a web page on another origin must not reach it, and neither may a DNS-rebinding name:
 * - `Origin`: only the emulator's own origin (the Host the request came to, or `--public-url`) and the
 *   origins of `--cors-origins` (when it lists any).
 * - `Sec-Fetch-Site`: a browser's cross-site request is refused even when it sends no `Origin`.
 * - a state-changing request's body is never of a type a page may send without a preflight (a "simple
 *   request": a form, `text/plain`, or no Content-Type): JSON, or audio for `hear`.
 * - `Host`, in the token-less mode: loopback names, IP literals, `--host`, the `--public-url` host and
 *   `--allowed-hosts`; with a control token set, the token is the guard (a rebinding page cannot know it).
 * The token itself is compared in constant time, and the `Bearer` scheme in any case.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

export interface AccessConfig {
  host: string;
  publicUrl?: string | undefined;
  corsOrigins: string[];
  allowedHosts: string[];
  controlToken?: string | undefined;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The body types a page may send to another origin without a preflight (and so without being asked). */
const SIMPLE_TYPES = new Set(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']);

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** `Bearer <token>` with the scheme in any case; the comparison takes the same time whatever the guess. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^bearer[ \t]+(.*)$/is.exec(header ?? '');
  return tokenMatches(m ? m[1]!.trim() : undefined, token);
}

export function tokenMatches(presented: string | undefined, token: string): boolean {
  // Digests of equal length, so neither the length nor the first differing byte shows in the time taken.
  return timingSafeEqual(digest(presented ?? ''), digest(token)) && presented !== undefined;
}

/** The host name of a Host header, without its port and brackets, lower case. */
export function hostName(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  const colon = h.lastIndexOf(':');
  return colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}

function urlHost(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
}

/** True when the Host names this emulator in a way no rebinding domain can (see the module comment). */
export function hostAllowed(config: AccessConfig, hostHeader: string | undefined): boolean {
  if (config.controlToken) return true;
  if (config.allowedHosts.includes('*')) return true;
  // No Host at all (HTTP/1.0, a probe): no browser sends that, so no rebinding page can.
  if (!hostHeader) return true;
  const name = hostName(hostHeader).replace(/\.$/, '');
  if (isIP(name) !== 0) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (name === config.host.toLowerCase()) return true;
  if (name === urlHost(config.publicUrl)) return true;
  return config.allowedHosts.some((h) => h.toLowerCase() === name);
}

function originOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Why a control-plane request is refused (403), or undefined when it may go on. `hostHeader` is the
 * request's Host; the emulator's own origin is that host on the request's scheme.
 */
export function controlRefusal(config: AccessConfig, req: FastifyRequest): string | undefined {
  const hostHeader = typeof req.headers.host === 'string' ? req.headers.host : undefined;
  if (!hostAllowed(config, hostHeader)) {
    return (
      `Host ${JSON.stringify(String(hostHeader ?? '').slice(0, 100))} is not allowed on the control plane ` +
      '(loopback names, IP addresses, --host, --public-url and --allowed-hosts / EMULATOR_ALLOWED_HOSTS are)'
    );
  }
  const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
  const own = hostHeader ? [`${req.protocol}://${hostHeader.toLowerCase()}`, originOf(config.publicUrl)] : [originOf(config.publicUrl)];
  const allowed = (o: string) => own.includes(o.toLowerCase()) || config.corsOrigins.includes(o);
  if (origin !== undefined && !allowed(origin)) {
    return `Origin ${JSON.stringify(origin.slice(0, 100))} may not use the control plane (only the emulator's own origin and --cors-origins may)`;
  }
  const site = req.headers['sec-fetch-site'];
  if (origin === undefined && (site === 'cross-site' || site === 'same-site')) {
    return `a ${site} browser request may not use the control plane`;
  }
  if (STATE_CHANGING.has(req.method) && hasBody(req)) {
    const type = String(req.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    if (type === '' || SIMPLE_TYPES.has(type)) {
      return `${req.method} on the control plane takes a JSON body (Content-Type: application/json), not ${type || 'a body without a Content-Type'}`;
    }
  }
  return undefined;
}

function hasBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] !== undefined) return true;
  return length !== undefined && length !== '0';
}

/** Headers of the inspector's files: never framed, scripts and styles only from the emulator itself. */
export const INSPECTOR_HEADERS: Record<string, string> = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; " +
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};
