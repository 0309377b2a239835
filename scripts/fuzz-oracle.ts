import { ENDPOINTS, nameOf, problemOf, type Answer, type Endpoint } from '../test/properties/endpoints.js';
import { FUZZ_KEY, send } from '../test/properties/inputs.js';

/**
 * What the input families of `npm run fuzz` share: the target, an attack and its outcome, and the
 * oracle of one request (the fuzzer's: an answer in time, in the endpoint's shape, with a listed
 * status; and the families': no internal error for a client's input, an error answer of bounded size).
 */
export interface Target {
  speechUrl: string;
  platformUrl: string;
  timeoutMs: number;
  /** The listener's body timeout: a stalled body is answered (408) after it. */
  bodyTimeoutMs: number;
  /** A loopback listener no input may make the emulator connect to; counts its connections. */
  sentinel: { url: string; connections: () => number };
}
export interface Outcome {
  status: string;
  problem: string | null;
}
export interface Attack {
  what: string;
  run(t: Target): Promise<Outcome>;
}

/** A service, a route and the field an attack fills. */
export type T3 = ['speech' | 'platform', string, string];

export const endpoint = (service: 'speech' | 'platform', method: string, url: string): Endpoint => {
  const e = ENDPOINTS.find((x) => x.service === service && x.method === method && x.url === url);
  if (!e) throw new Error(`no endpoint ${service} ${method} ${url}`);
  return e;
};
const baseOf = (t: Target, service: 'speech' | 'platform') => (service === 'speech' ? t.speechUrl : t.platformUrl);
export const authOf = (service: 'speech' | 'platform'): Record<string, string> =>
  service === 'speech' ? { authorization: `Bearer ${FUZZ_KEY}` } : { 'x-api-key': FUZZ_KEY };

/** The internal error of an answer's shape, if it is one (a client's input must never cause one). */
function internalError(e: Endpoint, a: Answer, json: any): string | null {
  if (e.shape === 'speech' && json?.base_resp?.status_code === 1000) return `internal error 1000: ${json.base_resp.status_msg}`;
  if (e.shape === 'platform' && (json?.error_code === 10000 || json?.error_code === 50000)) return `internal error ${json.error_code}: ${json.error_message}`;
  if (e.shape === 'jsonrpc' && JSON.stringify(json ?? '').includes('-32603')) return `JSON-RPC internal error: ${a.text.slice(0, 160)}`;
  if (a.status >= 500 && a.status !== 503) return `HTTP ${a.status}`;
  return null;
}

/** An error answer echoes at most a short picture of the input (docs/robustness.md, limits). */
const ERROR_BYTES_MAX = 8 * 1024;
function isError(e: Endpoint, a: Answer, json: any): boolean {
  if (e.shape === 'speech') return json?.base_resp?.status_code !== 0;
  if (e.shape === 'platform') return json?.succeed === false;
  return a.status >= 400;
}

export interface Hit extends Outcome {
  json?: any;
}

/** One request judged by the fuzzer's oracle and the families' rules. */
export async function hit(t: Target, e: Endpoint, path: string, headers: Record<string, string>, body?: Buffer | AsyncIterable<Buffer>): Promise<Hit> {
  const a = await send(baseOf(t, e.service), e.method, { path, headers, kind: 'bytes', body: body as Buffer }, t.timeoutMs, e.stream);
  if ('hang' in a) return { status: 'hang', problem: `${nameOf(e)}: no answer within ${t.timeoutMs} ms` };
  if ('error' in a) return { status: 'error', problem: `${nameOf(e)}: connection failed: ${a.error}` };
  let json: any;
  try {
    json = a.contentType.includes('json') ? JSON.parse(a.text) : undefined;
  } catch {
    json = undefined;
  }
  // Recognition's success is its own object (README, "Voice platform service"), not the envelope.
  const recognized = e.url === '/v1/speech-to-text' && a.status === 200 && typeof json?.text === 'string';
  const problem =
    (recognized ? null : problemOf(e, a)) ??
    internalError(e, a, json) ??
    (json !== undefined && isError(e, a, json) && a.text.length > ERROR_BYTES_MAX ? `error answer of ${a.text.length} bytes (echo not bounded)` : null);
  return { status: String(a.status), problem: problem && `${nameOf(e)}: ${problem}`, json };
}

/** Audio and archives near the caps are real work: five times the time limit on a loaded machine (still answered, never left waiting). */
export const slow = (t: Target): Target => ({ ...t, timeoutMs: 5 * t.timeoutMs });

export const jsonHeaders = (service: 'speech' | 'platform') => ({ ...authOf(service), 'content-type': 'application/json' });
