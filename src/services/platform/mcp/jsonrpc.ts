/**
 * JSON-RPC 2.0 framing of /mcp, nothing of HTTP: classify a parsed body (single message or batch),
 * dispatch each request to a method table and build responses that carry exactly
 * `{jsonrpc, id, result}` or `{jsonrpc, id, error}` (addendum B1: an extra `error: null` breaks clients).
 */
export type RpcId = string | number;

export const RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
} as const;

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type RpcResponse = { jsonrpc: '2.0'; id: RpcId | null; result: unknown } | { jsonrpc: '2.0'; id: RpcId | null; error: RpcError };

/** A body the transport could not parse as JSON (kept so the dispatcher answers -32700). */
export class UnparseableBody {
  constructor(
    readonly reason: string,
    readonly bytes: number,
  ) {}
}

/** Thrown by a method to answer a JSON-RPC error instead of a result. */
export class RpcFault extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export interface RpcRequest {
  id: RpcId;
  method: string;
  params: Record<string, unknown> | unknown[] | undefined;
}

/** A method: answers a result, or throws RpcFault. Unknown methods are not in the table. */
export type RpcMethod = (params: RpcRequest['params'], req: RpcRequest) => Promise<unknown> | unknown;

export interface Dispatcher {
  methods: Record<string, RpcMethod>;
  /** Called for every notification (a message without `id`): nothing is answered. */
  onNotification?(method: string): void;
  /** Unexpected exceptions of a method (logged by the caller); the client sees -32603. */
  onInternalError?(err: unknown, method: string): void;
}

export function success(id: RpcId | null, result: unknown): RpcResponse {
  return { jsonrpc: '2.0', id, result };
}

export function rpcFailure(id: RpcId | null, code: number, message: string, data?: unknown): RpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is RpcId => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

type Classified =
  | { kind: 'request'; request: RpcRequest }
  | { kind: 'notification'; method: string }
  /** A JSON-RPC response sent by the client (to a server request): accepted, never answered. */
  | { kind: 'response' }
  | { kind: 'invalid'; id: RpcId | null; message: string };

/** Sorts one message: request (has an `id` key, which may be 0), notification (no `id` key), or invalid. */
function classify(msg: unknown): Classified {
  if (!isObject(msg)) return { kind: 'invalid', id: null, message: `invalid request: a message must be a JSON object, got ${describe(msg)}` };
  const hasId = Object.prototype.hasOwnProperty.call(msg, 'id');
  const id = hasId && isId(msg.id) ? msg.id : null;
  if (msg.jsonrpc !== '2.0') return { kind: 'invalid', id, message: 'invalid request: "jsonrpc" must be the string "2.0"' };
  if (hasId && !isId(msg.id)) return { kind: 'invalid', id: null, message: 'invalid request: "id" must be a string or a number' };
  if (!('method' in msg)) {
    if (hasId && ('result' in msg || 'error' in msg)) return { kind: 'response' };
    return { kind: 'invalid', id, message: 'invalid request: "method" is missing' };
  }
  if (typeof msg.method !== 'string' || msg.method === '') return { kind: 'invalid', id, message: 'invalid request: "method" must be a non-empty string' };
  if ('params' in msg && msg.params !== undefined && typeof msg.params !== 'object') {
    return { kind: 'invalid', id, message: 'invalid request: "params" must be an object or an array' };
  }
  if ('params' in msg && msg.params === null) return { kind: 'invalid', id, message: 'invalid request: "params" must be an object or an array' };
  if (!hasId) return { kind: 'notification', method: msg.method };
  return { kind: 'request', request: { id: msg.id as RpcId, method: msg.method, params: msg.params as RpcRequest['params'] } };
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string' ? 'a string' : typeof v === 'number' ? 'a number' : typeof v === 'boolean' ? 'a boolean' : typeof v;
}

/** Answers one message; null when nothing is answered (notification, client response). */
export async function handleMessage(msg: unknown, d: Dispatcher): Promise<RpcResponse | null> {
  const c = classify(msg);
  if (c.kind === 'response') return null;
  if (c.kind === 'notification') {
    d.onNotification?.(c.method);
    return null;
  }
  if (c.kind === 'invalid') return rpcFailure(c.id, RPC_ERRORS.invalidRequest, c.message);
  const { request } = c;
  const method = Object.prototype.hasOwnProperty.call(d.methods, request.method) ? d.methods[request.method] : undefined;
  if (!method) return rpcFailure(request.id, RPC_ERRORS.methodNotFound, `method not found: ${request.method}`);
  try {
    return success(request.id, await method(request.params, request));
  } catch (err) {
    if (err instanceof RpcFault) return rpcFailure(request.id, err.code, err.message, err.data);
    d.onInternalError?.(err, request.method);
    return rpcFailure(request.id, RPC_ERRORS.internal, `internal error while handling ${request.method}`);
  }
}

/** The most messages one batch may hold: a longer batch is refused whole, before any of it runs. */
export const MAX_BATCH_MESSAGES = 20;
/**
 * The most one answer (a batch's responses together) may hold, in bytes of JSON: once the responses so
 * far reach it, the batch's remaining requests are refused each, without running (nothing charged).
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** A response's size in the answer (its JSON text, as the answer is written). */
function sizeOf(response: RpcResponse): number {
  return Buffer.byteLength(JSON.stringify(response));
}

/**
 * Answers a whole body: a single message, or a batch answered as a batch (in order, one at a time so
 * state changes keep their order). Null means "nothing to answer" (HTTP 202, empty body). A batch over
 * MAX_BATCH_MESSAGES is one -32600 error; within a batch, requests after the answer reached
 * MAX_ANSWER_BYTES are each a -32600 error, not run.
 */
export async function handleBody(body: unknown, d: Dispatcher): Promise<RpcResponse | RpcResponse[] | null> {
  if (body instanceof UnparseableBody) return rpcFailure(null, RPC_ERRORS.parse, `parse error: ${body.reason}`);
  if (!Array.isArray(body)) return handleMessage(body, d);
  if (body.length === 0) return rpcFailure(null, RPC_ERRORS.invalidRequest, 'invalid request: an empty batch');
  if (body.length > MAX_BATCH_MESSAGES)
    return rpcFailure(
      null,
      RPC_ERRORS.invalidRequest,
      `invalid request: a batch holds at most ${MAX_BATCH_MESSAGES} messages, this one holds ${body.length}; nothing in it was run: send it in smaller batches`,
    );
  const out: RpcResponse[] = [];
  let bytes = 0;
  for (const msg of body) {
    if (bytes >= MAX_ANSWER_BYTES) {
      // Not run: a request gets its refusal, a notification nothing (as ever).
      const id = isObject(msg) && isId(msg.id) ? msg.id : null;
      if (id !== null)
        out.push(
          rpcFailure(
            id,
            RPC_ERRORS.invalidRequest,
            `invalid request: not run, the batch's answer already holds ${bytes} bytes, over the ${MAX_ANSWER_BYTES} bytes one answer may hold: send it again in its own request`,
          ),
        );
      continue;
    }
    const r = await handleMessage(msg, d);
    if (!r) continue;
    out.push(r);
    bytes += sizeOf(r);
  }
  return out.length ? out : null;
}

/** Parses a raw body as JSON; an empty or broken body becomes UnparseableBody (answered -32700). */
export function parseBody(raw: string): unknown {
  if (raw.trim() === '') return new UnparseableBody('the request body is empty', 0);
  try {
    return JSON.parse(raw);
  } catch (err) {
    return new UnparseableBody(`the request body is not valid JSON (${(err as Error).message})`, Buffer.byteLength(raw));
  }
}
