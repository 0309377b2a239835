import fc from 'fast-check';
import { request } from 'undici';
import type { Answer, Endpoint } from './endpoints.js';

/**
 * Generated requests for one endpoint: path parameters, queries, headers and bodies (JSON values,
 * objects of the fields the services read, bytes under any content type, deeply nested JSON and
 * multipart shapes, closed or not). `kind` names the family of a body, for the report and for
 * endpoints whose known defects keep one family out for now.
 */
export type BodyKind = 'none' | 'json' | 'fields' | 'bytes' | 'deep' | 'multipart' | 'multipart-open';
/** Input families a known defect can keep out: a body family, or `dot-segment` (a path parameter `.` or `..`). */
export type InputKind = BodyKind | 'dot-segment';

export interface Case {
  path: string;
  headers: Record<string, string>;
  kind: BodyKind;
  body?: Buffer;
}

export const FUZZ_KEY = 'fuzz-key';

/** Field names the services read somewhere: an object of these reaches the validation rules. */
const FIELDS = [
  'model',
  'text',
  'stream',
  'voice_setting',
  'audio_setting',
  'voice_id',
  'speed',
  'vol',
  'pitch',
  'emotion',
  'output_format',
  'language_boost',
  'subtitle_enable',
  'pronunciation_dict',
  'timber_weights',
  'voice_modify',
  'generate_text',
  'format',
  'sample_rate',
  'ref_audio',
  'ref_text',
  'scene',
  'dialogueText',
  'hosts',
  'audio_data',
  'audio_format',
  'language',
  'audio_url',
  'url',
  'object_key',
  'num_speakers',
  'client_nonce',
  'timbre',
  'previous_session_id',
  'session_id',
  'agentId',
  'userIdentifier',
  'clientRequestId',
  'traceId',
  'jsonrpc',
  'method',
  'params',
  'id',
  'name',
  'arguments',
  'apiKey',
  'path',
  'service',
  'account',
  'times',
  'probability',
  'fault',
  'code',
  'status',
  'delay_ms',
  'advance_ms',
  'freeze',
  'set_ms',
  'balance_micro',
  'capabilities',
  'project',
  'disabled',
  'limits',
  'meta',
  'is_final',
  'text_input',
];

const QUERY_KEYS = ['voice_id', 'page_size', 'session_id', 'account', 'limit', 'path', 'api_key', 'expires', 'sig', 'stream', 'x'];

const text = fc.string({ maxLength: 24, unit: 'grapheme' });
// `..` is left out: a client resolves it before sending, so the request is for the parent path, another endpoint.
const segment = fc.oneof(fc.stringMatching(/^[A-Za-z0-9_.-]{1,24}$/), text.filter((s) => s.length > 0).map(encodeURIComponent)).filter((s) => s !== '..');

const fieldValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom('', 'speech-02-hd', 'male-qn-qingse', 'default', 'mp3', 'wav', 'pcm', 'url', 'hex', 'zh', 'en', 'x'),
  fc.integer({ min: -1e6, max: 1e9 }),
  fc.double({ noNaN: false }),
);

const fieldsObject = fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 6 });

/** JSON nested thousands of levels deep, inside a field the services read. */
const deepJson = fc
  .record({ depth: fc.integer({ min: 500, max: 6000 }), field: fc.constantFrom(...FIELDS), open: fc.constantFrom('[', '{"a":') })
  .map(({ depth, field, open }) => {
    const close = open === '[' ? ']' : '}';
    return `{"${field}":${open.repeat(depth)}1${close.repeat(depth)}}`;
  });

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'audio/wav',
  'x/y',
  '',
];

const part = fc.record({
  name: fc.constantFrom('file', 'audio', 'scene', 'purpose', 'x', 'audio_url', ''),
  filename: fc.option(fc.constantFrom('a.wav', 'a.mp3', 'a', '../../etc/passwd', 'ü.wav'), { nil: undefined }),
  content: fc.oneof(
    fc.constantFrom('audio', 'image', 'video', '8', ''),
    fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b).toString('latin1')),
  ),
});

/** A multipart body; `open` ones end without the closing boundary (a client that stopped mid-body). */
const multipart = fc
  .record({ parts: fc.array(part, { maxLength: 3 }), open: fc.boolean(), boundary: fc.constantFrom('B', 'fuzzboundary', '----x') })
  .map(({ parts, open, boundary }) => {
    let body = '';
    for (const p of parts) {
      body += `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}\r\n\r\n${p.content}\r\n`;
    }
    if (!open) body += `--${boundary}--\r\n`;
    return { kind: (open ? 'multipart-open' : 'multipart') as BodyKind, body: Buffer.from(body, 'latin1'), type: `multipart/form-data; boundary=${boundary}` };
  });

const bodyOf = (e: Endpoint, exclude: InputKind[]) => {
  const choices: fc.Arbitrary<{ kind: BodyKind; body?: Buffer; type?: string }>[] = [
    fc.constant({ kind: 'none' as BodyKind }),
    fc.jsonValue({ maxDepth: 3 }).map((v) => ({ kind: 'json' as BodyKind, body: Buffer.from(JSON.stringify(v) ?? 'null'), type: 'application/json' })),
    fieldsObject.map((v) => ({ kind: 'fields' as BodyKind, body: Buffer.from(JSON.stringify(v)), type: 'application/json' })),
    fc
      .record({ bytes: fc.uint8Array({ maxLength: 512 }), type: fc.constantFrom(...CONTENT_TYPES) })
      .map(({ bytes, type }) => ({ kind: 'bytes' as BodyKind, body: Buffer.from(bytes), type })),
    deepJson.map((t) => ({ kind: 'deep' as BodyKind, body: Buffer.from(t), type: 'application/json' })),
    multipart,
  ];
  return fc.oneof(...choices).filter((b) => !exclude.includes(b.kind) && (e.method !== 'GET' || b.kind === 'none'));
};

const headersOf = (e: Endpoint) =>
  fc
    .record(
      {
        auth: fc.constantFrom('valid', 'valid', 'valid', 'missing', 'empty', 'garbage'),
        fault: fc.option(fc.constantFrom('code=abc', 'zzz', 'delay_ms=-1', 'status=99', 'close_ws=1', ';;', 'delay_ms=0'), { nil: undefined }),
        idempotency: fc.option(text, { nil: undefined }),
        accept: fc.option(fc.constantFrom('*/*', 'text/event-stream', 'application/json', 'x'), { nil: undefined }),
        extra: fc.option(fc.tuple(fc.stringMatching(/^x-fuzz-[a-z]{1,8}$/), fc.stringMatching(/^[ -~]{0,40}$/)), { nil: undefined }),
      },
      { requiredKeys: ['auth'] },
    )
    .map((h) => {
      const out: Record<string, string> = {};
      const key = h.auth === 'valid' ? FUZZ_KEY : h.auth === 'garbage' ? 'x'.repeat(300) : '';
      if (h.auth !== 'missing') {
        if (e.service === 'speech') out.authorization = `Bearer ${key}`;
        else out['x-api-key'] = key;
      }
      if (h.fault) out['x-emulator-fault'] = h.fault;
      if (h.idempotency !== undefined) out['idempotency-key'] = h.idempotency.replace(/[^ -~]/g, '');
      if (h.accept) out.accept = h.accept;
      if (h.extra) out[h.extra[0]] = h.extra[1];
      return out;
    });

const queryOf = fc.array(fc.tuple(fc.constantFrom(...QUERY_KEYS), fc.oneof(text, fc.constantFrom('1', '0', '-1', '20', '21', 'abc'))), { maxLength: 3 });

/** Generated requests for an endpoint; `exclude` keeps body families out (known defects only). */
export function caseOf(e: Endpoint, exclude: InputKind[] = []): fc.Arbitrary<Case> {
  const params = (e.url.match(/:[a-z_]+|\*/g) ?? []).length;
  const segs = fc
    .array(segment, { minLength: params, maxLength: params })
    .filter((xs) => !exclude.includes('dot-segment') || !xs.some((x) => x === '.' || x === '..'));
  return fc.record({ segs, query: queryOf, headers: headersOf(e), body: bodyOf(e, exclude) }).map(({ segs, query, headers, body }) => {
    let i = 0;
    const path = e.url.replace(/:[a-z_]+|\*/g, () => segs[i++]!);
    const qs = new URLSearchParams(query).toString();
    if (body.type !== undefined && body.type !== '') headers['content-type'] = body.type;
    return { path: qs ? `${path}?${qs}` : path, headers, kind: body.kind, body: body.body };
  });
}

/** Sends one case; an answer that does not come in `timeoutMs` is reported as a hang. */
export async function send(base: string, method: string, c: Case, timeoutMs: number, stream = false): Promise<Answer | { hang: true } | { error: string }> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(base + c.path, {
      method: method as 'GET',
      headers: c.headers,
      body: method === 'GET' || method === 'HEAD' ? undefined : c.body,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    // A success body may be long audio: keep only what the checks read. JSON is kept whole (up to a
    // bound far above any answer), since its shape is checked: a large state view is still JSON.
    const chunks: Buffer[] = [];
    let size = 0;
    const type = String(res.headers['content-type'] ?? '');
    const keep = type.includes('json') ? 64 * 1024 * 1024 : 65_536;
    // An endless event stream is judged on its first bytes.
    const endless = stream && type.startsWith('text/event-stream');
    for await (const chunk of res.body) {
      if (endless) {
        chunks.push(chunk as Buffer);
        res.body.destroy();
        break;
      }
      if (size < keep) chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') };
  } catch (err) {
    if (signal.aborted) return { hang: true };
    return { error: (err as Error).message };
  }
}
