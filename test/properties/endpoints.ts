import type { RegisteredRoute } from '../../src/core/emulator.js';

/**
 * The table of every HTTP endpoint of both services and the control plane: the shape its answers take
 * and the HTTP statuses the specs list for it. Built by hand, checked against the routes the services
 * registered (a route with no entry fails the suite), so a new route cannot go unfuzzed.
 */
export type Shape =
  /** speech service: JSON with base_resp {status_code, status_msg} (addendum A2). */
  | 'speech'
  /** voice platform: the envelope {error_code, error_message, succeed, data}. */
  | 'platform'
  /** control plane: any JSON on success, {error: {message}} on failure. */
  | 'control'
  /** /mcp: JSON-RPC 2.0 bodies (202 with no body for notifications). */
  | 'jsonrpc'
  /** speech to text: real HTTP statuses with {type: "error", error: {type, message, http_code}, request_id}. */
  | 'speech-to-text'
  /** answers the spec gives without a body shape (detection's 405). */
  | 'raw';

export interface Endpoint {
  service: 'speech' | 'platform';
  method: string;
  url: string;
  shape: Shape;
  statuses: number[];
  /** A WebSocket route: plain HTTP gets 426 once admitted; message sequences are fuzzed by the socket properties. */
  websocket?: boolean;
  /** Reads multipart bodies too. */
  multipart?: boolean;
  /** An endless event stream on success: judged on its status and first bytes. */
  stream?: boolean;
}

/** 403: a request a web page may send on its own (a form or text/plain body, another origin), refused (docs/robustness.md). */
const CONTROL_OK_OR_ERROR = [200, 201, 400, 401, 403, 404];

/** Control-plane routes, mounted on every listener. */
const CONTROL: [string, string][] = [
  ['GET', '/_emulator/health'],
  ['POST', '/_emulator/reset'],
  ['GET', '/_emulator/clock'],
  ['POST', '/_emulator/clock'],
  ['PUT', '/_emulator/accounts/:key'],
  ['GET', '/_emulator/accounts/:key'],
  ['GET', '/_emulator/state'],
  ['POST', '/_emulator/faults'],
  ['GET', '/_emulator/faults'],
  ['DELETE', '/_emulator/faults'],
  ['DELETE', '/_emulator/faults/:id'],
  ['GET', '/_emulator/journal'],
  ['GET', '/_emulator/report'],
  ['DELETE', '/_emulator/journal'],
  ['GET', '/_emulator/openapi/:name'],
  ['GET', '/_emulator/asyncapi.json'],
  ['GET', '/_emulator/livez'],
  ['GET', '/_emulator/journal/:id'],
  ['GET', '/_emulator/fixtures'],
  ['GET', '/_emulator/fixtures/:name'],
  ['PUT', '/_emulator/fixtures/:name'],
  ['GET', '/_emulator/faults/fields'],
];

/** Control routes with answers of their own: readiness 503, verify's 409, text and audio bodies. */
const CONTROL_OWN: Omit<Endpoint, 'service'>[] = [
  { method: 'GET', url: '/_emulator/readyz', shape: 'control', statuses: [200, 400, 401, 503] },
  { method: 'POST', url: '/_emulator/verify', shape: 'control', statuses: [...CONTROL_OK_OR_ERROR, 409] },
  { method: 'GET', url: '/_emulator/metrics', shape: 'raw', statuses: [200, 400, 401] },
  { method: 'GET', url: '/_emulator/journal/:id/audio.wav', shape: 'raw', statuses: [200, 400, 401, 404] },
  { method: 'GET', url: '/_emulator/journal/:id/answer-audio', shape: 'raw', statuses: [200, 400, 401, 404] },
  { method: 'POST', url: '/_emulator/hear', shape: 'control', statuses: [200, 400, 401, 403] },
  { method: 'POST', url: '/_emulator/speak', shape: 'raw', statuses: [200, 400, 401, 403] },
  // 409 on an emulator that records or replays (its answers would not be its own rules').
  { method: 'POST', url: '/_emulator/tapes/check', shape: 'control', statuses: [200, 400, 401, 403, 409] },
  // 409 while recording (the replay routes leave the start's recording alone).
  { method: 'GET', url: '/_emulator/tapes/replay', shape: 'control', statuses: [200, 400, 401] },
  { method: 'PUT', url: '/_emulator/tapes/replay', shape: 'control', statuses: [200, 400, 401, 403, 409] },
  { method: 'DELETE', url: '/_emulator/tapes/replay', shape: 'control', statuses: [200, 400, 401, 403, 409] },
];

/** Control routes that answer something else than JSON: the inspector's files, the live journal feed. */
const CONTROL_PAGES: Omit<Endpoint, 'service'>[] = [
  { method: 'GET', url: '/_emulator', shape: 'raw', statuses: [200, 400] },
  { method: 'GET', url: '/_emulator/inspector/:file', shape: 'raw', statuses: [200, 400, 404] },
  { method: 'GET', url: '/_emulator/journal/live', shape: 'raw', statuses: [200, 400], stream: true },
];

/** `GET /` on each listener: a browser is sent to the inspector, anything else gets a JSON index. */
const ROOT: Omit<Endpoint, 'service'> = { method: 'GET', url: '/', shape: 'raw', statuses: [200, 302] };

/** Synthesis and recognition carry HTTP statuses (400, 401, 402, 429; README, "Voice platform service"). */
const WITH_STATUSES = [200, 400, 401, 402, 429];

const PLATFORM: Omit<Endpoint, 'service'>[] = [
  { method: 'POST', url: '/v1/text-to-speech', shape: 'platform', statuses: WITH_STATUSES },
  { method: 'POST', url: '/v1/text-to-speech/stream', shape: 'platform', statuses: WITH_STATUSES },
  { method: 'POST', url: '/v1/voice/save', shape: 'platform', statuses: [200] },
  { method: 'GET', url: '/v1/voice/list', shape: 'platform', statuses: [200] },
  { method: 'DELETE', url: '/v1/voice/:voice_id', shape: 'platform', statuses: [200] },
  { method: 'DELETE', url: '/v1/voice', shape: 'platform', statuses: [200] },
  { method: 'POST', url: '/v1/files/upload', shape: 'platform', statuses: [200], multipart: true },
  { method: 'POST', url: '/v1/audio/podcast', shape: 'platform', statuses: [200] },
  { method: 'POST', url: '/v1/speech-to-text', shape: 'platform', statuses: WITH_STATUSES },
  // Detection: HTTP 200 with the envelope; 413 (oversize) and 405 (wrong method) without it.
  { method: 'POST', url: '/v1/audio/ai-detect', shape: 'platform', statuses: [200, 413], multipart: true },
  ...['GET', 'PUT', 'DELETE', 'PATCH'].map((method) => ({ method, url: '/v1/audio/ai-detect', shape: 'raw' as const, statuses: [405] })),
  { method: 'POST', url: '/v1/diarize', shape: 'platform', statuses: [200] },
  { method: 'POST', url: '/v1/audio/assistant/start', shape: 'platform', statuses: [200] },
  { method: 'POST', url: '/v1/audio/assistant/heartbeat', shape: 'platform', statuses: [200] },
  { method: 'POST', url: '/v1/audio/assistant/stop', shape: 'platform', statuses: [200] },
  { method: 'POST', url: '/api/v1/audio/sessions', shape: 'platform', statuses: [200] },
  { method: 'DELETE', url: '/api/v1/audio/sessions', shape: 'platform', statuses: [200] },
  { method: 'DELETE', url: '/api/v1/audio/sessions/:session_id', shape: 'platform', statuses: [200] },
  { method: 'GET', url: '/api/v1/audio/characters', shape: 'platform', statuses: [200] },
  // A plain GET is admitted before its 426: without a valid key, the call family's 20001 with HTTP 200.
  { method: 'GET', url: '/api/v1/audio/conversation/stream', shape: 'platform', statuses: [200, 426], websocket: true },
  { method: 'GET', url: '/api/v1/audio/conversation/stream-text', shape: 'platform', statuses: [200, 426], websocket: true },
  // The recognition family carries HTTP statuses: a plain GET without a valid key is 401 before 426.
  { method: 'GET', url: '/v1/speech-to-text/stream', shape: 'platform', statuses: [400, 401, 402, 426, 429], websocket: true },
  { method: 'POST', url: '/api/v1/agents/openapi/sessions/create', shape: 'platform', statuses: [200] },
  { method: 'GET', url: '/api/v1/agents/openapi/sessions/check', shape: 'platform', statuses: [200] },
  { method: 'POST', url: '/api/v1/agents/openapi/sessions/heartbeat', shape: 'platform', statuses: [200] },
  { method: 'DELETE', url: '/api/v1/agents/openapi/sessions/end', shape: 'platform', statuses: [200] },
  { method: 'POST', url: '/mcp', shape: 'jsonrpc', statuses: [200, 202] },
  ...['GET', 'DELETE', 'PUT', 'PATCH'].map((method) => ({ method, url: '/mcp', shape: 'jsonrpc' as const, statuses: [405] })),
  { method: 'GET', url: '/download/*', shape: 'platform', statuses: [200, 403, 404] },
  // The call room at LiveKit's paths: LiveKit's own statuses and plain-text refusals.
  { method: 'GET', url: '/rtc', shape: 'raw', statuses: [400, 401, 404], websocket: true },
  { method: 'GET', url: '/rtc/validate', shape: 'raw', statuses: [200, 400, 401, 404] },
  { method: 'GET', url: '/rtc/v1', shape: 'raw', statuses: [404], websocket: true },
  { method: 'GET', url: '/rtc/v1/validate', shape: 'raw', statuses: [404], websocket: true },
];

const SPEECH: Omit<Endpoint, 'service'>[] = [
  // A2: every answer of the operation is HTTP 200 with base_resp.
  { method: 'POST', url: '/v1/t2a_v2', shape: 'speech', statuses: [200] },
  // A plain GET is admitted before its 426: without a valid key, 1004 with HTTP 200.
  { method: 'GET', url: '/ws/v1/t2a_v2', shape: 'speech', statuses: [200, 426], websocket: true },
  { method: 'GET', url: '/ws/v1/t2a_v2_bidi', shape: 'speech', statuses: [200, 426], websocket: true },
  { method: 'GET', url: '/download/*', shape: 'speech', statuses: [200, 403, 404] },
  // Voices, files, cloning, design and async synthesis (speech-beyond.md): HTTP 200 with base_resp.
  { method: 'POST', url: '/v1/get_voice', shape: 'speech', statuses: [200] },
  { method: 'POST', url: '/v1/delete_voice', shape: 'speech', statuses: [200] },
  // A refused video upload is HTTP 400 with base_resp 2013 (rule E18).
  { method: 'POST', url: '/v1/files/upload', shape: 'speech', statuses: [200, 400], multipart: true },
  { method: 'GET', url: '/v1/files/list', shape: 'speech', statuses: [200] },
  { method: 'GET', url: '/v1/files/retrieve', shape: 'speech', statuses: [200] },
  // The bytes of a file on success (its own content type); the envelope on failure.
  { method: 'GET', url: '/v1/files/retrieve_content', shape: 'speech', statuses: [200] },
  { method: 'POST', url: '/v1/files/delete', shape: 'speech', statuses: [200], multipart: true },
  { method: 'POST', url: '/v1/voice_clone', shape: 'speech', statuses: [200] },
  { method: 'POST', url: '/v1/voice_design', shape: 'speech', statuses: [200] },
  { method: 'POST', url: '/v1/t2a_async_v2', shape: 'speech', statuses: [200] },
  { method: 'GET', url: '/v1/query/t2a_async_query_v2', shape: 'speech', statuses: [200] },
  { method: 'POST', url: '/v1/query/t2a_async_query_v2', shape: 'speech', statuses: [200] },
  // speech-current.md 1.6: errors with their real statuses.
  { method: 'POST', url: '/v1/speech_to_text', shape: 'speech-to-text', statuses: [200, 400, 401, 402, 413, 422, 429, 500], multipart: true },
];

function withControl(service: 'speech' | 'platform', own: Omit<Endpoint, 'service'>[]): Endpoint[] {
  const control = [...CONTROL.map(([method, url]) => ({ method, url, shape: 'control' as const, statuses: CONTROL_OK_OR_ERROR })), ...CONTROL_OWN];
  return [...own, ROOT, ...control, ...CONTROL_PAGES].map((e) => ({ ...e, service }));
}

export const ENDPOINTS: Endpoint[] = [...withControl('speech', SPEECH), ...withControl('platform', PLATFORM)];

/** The table entry of a registered route (HEAD routes are GET's twins and answer as GET without a body). */
export function entryOf(route: RegisteredRoute): Endpoint | undefined {
  const method = route.method === 'HEAD' ? 'GET' : route.method;
  return ENDPOINTS.find((e) => e.service === route.service && e.method === method && e.url === route.url);
}

export const nameOf = (e: Pick<Endpoint, 'service' | 'method' | 'url'>) => `${e.service} ${e.method} ${e.url}`;

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Why an answer breaks the endpoint's contract, or null when it keeps it. */
export function problemOf(e: Endpoint, a: Answer, method = e.method): string | null {
  if (!e.statuses.includes(a.status)) return `HTTP ${a.status} is not listed (${e.statuses.join(', ')})`;
  if (method === 'HEAD' || e.shape === 'raw') return null;
  if (a.status === 200 && !a.contentType.includes('json')) {
    // Audio, event streams and downloads are success bodies; errors are always JSON.
    return e.shape === 'control' ? 'control answer is not JSON' : null;
  }
  if (e.shape === 'jsonrpc' && a.status === 202) return a.text === '' ? null : '202 with a body';
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return `body is not JSON: ${a.text.slice(0, 80)}`;
  }
  switch (e.shape) {
    case 'speech': {
      const base = isObject(body) ? body.base_resp : undefined;
      if (!isObject(base) || !Number.isInteger(base.status_code) || typeof base.status_msg !== 'string') return `no base_resp: ${a.text.slice(0, 120)}`;
      return null;
    }
    case 'platform': {
      if (
        !isObject(body) ||
        !Number.isInteger(body.error_code) ||
        typeof body.error_message !== 'string' ||
        typeof body.succeed !== 'boolean' ||
        !('data' in body)
      ) {
        return `not the envelope: ${a.text.slice(0, 120)}`;
      }
      if (body.succeed !== (body.error_code === 0)) return `succeed ${String(body.succeed)} with error_code ${String(body.error_code)}`;
      return null;
    }
    case 'control':
      if (a.status >= 400 && !(isObject(body) && isObject(body.error) && typeof body.error.message === 'string'))
        return `control error without {error:{message}}: ${a.text.slice(0, 120)}`;
      return null;
    case 'speech-to-text': {
      if (a.status === 200) return isObject(body) && typeof body.text === 'string' ? null : `no text: ${a.text.slice(0, 120)}`;
      const error = isObject(body) ? body.error : undefined;
      if (!isObject(body) || body.type !== 'error' || !isObject(error) || typeof error.message !== 'string' || error.http_code !== String(a.status))
        return `not the error body of 1.6: ${a.text.slice(0, 120)}`;
      return null;
    }
    case 'jsonrpc': {
      const items = Array.isArray(body) ? body : [body];
      return items.every((x) => isObject(x) && x.jsonrpc === '2.0') ? null : `not JSON-RPC 2.0: ${a.text.slice(0, 120)}`;
    }
  }
  return null;
}
