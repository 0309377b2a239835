import fc from 'fast-check';
import { connect } from 'node:net';
import WebSocket from 'ws';
import { FUZZ_KEY } from '../test/properties/inputs.js';
import { ALLOWED_CLOSE } from '../test/properties/ws.js';
import type { Attack, Outcome, Target } from './fuzz-oracle.js';

/**
 * Wire-level families of `npm run fuzz`: raw HTTP requests no client library would send (no Host,
 * CONNECT, oversize headers, bad escapes, lying or doubled lengths, broken chunking, stalled bodies),
 * and WebSocket sequences in the wrong order, binary where text is expected, invalid UTF-8, frames
 * over the 8 MiB cap, floods, and a clock advanced past the idle rule. The emulator runs with a short
 * body timeout here (fuzz.ts) so a stalled body is answered within the fuzz timeout.
 */

/** Sends raw bytes to a listener and reads until the server closes or `waitMs` passes. */
function raw(base: string, bytes: Buffer, waitMs: number, halfClose: boolean): Promise<{ answer: string; closed: boolean }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const sock = connect(Number(port), hostname);
    let answer = '';
    const done = (closed: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ answer, closed });
    };
    const timer = setTimeout(() => done(false), waitMs);
    sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    sock.on('close', () => done(true));
    sock.on('error', () => undefined);
    sock.write(bytes, () => halfClose && sock.end());
  });
}

/** The first answer of a raw exchange judged: a status line, not a server error, a JSON body (never bare). */
function judgeRaw(answer: string, expect: RegExp | null): string | null {
  const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(answer);
  if (!m) return expect ? `no HTTP answer (got ${JSON.stringify(answer.slice(0, 80))})` : null;
  const status = Number(m[1]);
  if (status >= 500 && status !== 503) return `HTTP ${status}`;
  if (expect && !expect.test(String(status))) return `HTTP ${status}, expected ${expect.source}`;
  const length = /content-length: *(\d+)/i.exec(m[2]!)?.[1];
  const chunked = /transfer-encoding: *chunked/i.test(m[2]!);
  const body = chunked ? m[3]!.replace(/^[0-9a-f]+\r\n/i, '') : m[3]!.slice(0, Number(length ?? m[3]!.length));
  if (status >= 400 && !/^[[{]/.test(body.trim())) return `HTTP ${status} answered bare: ${JSON.stringify(body.slice(0, 80))}`;
  return null;
}

const PATHS = ['/v1/t2a_v2', '/v1/voice/list', '/_emulator/health', '/mcp', '/v1/audio/ai-detect', '/api/v1/audio/sessions/x'];

/** Raw requests: [what, bytes, expected status (null: an answer is not required), half-close after sending]. */
const rawRequest = fc
  .record({
    kind: fc.constantFrom(
      'no-host',
      'connect',
      'big-header',
      'bad-escape',
      'stalled',
      'cl-and-te',
      'bad-chunk',
      'chunk-overflow',
      'cl-bad',
      'cl-twice',
      'cl-short',
      'cl-over-limit',
      'garbage-line',
      'http-9',
      'absolute-form',
      'options-star',
      'trace',
      'folded-header',
      'nul-header',
      'many-headers',
      'half-closed',
    ),
    path: fc.constantFrom(...PATHS),
    service: fc.constantFrom<'speech' | 'platform'>('speech', 'platform'),
  })
  .map(({ kind, path, service }) => {
    const auth = service === 'speech' ? `Authorization: Bearer ${FUZZ_KEY}\r\n` : `X-API-Key: ${FUZZ_KEY}\r\n`;
    const post = (headers: string, body = '') => `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n${headers}\r\n${body}`;
    const cases: Record<string, [string, RegExp | null, boolean]> = {
      'no-host': [`GET ${path} HTTP/1.1\r\n${auth}\r\n`, /400/, false],
      connect: [`CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`, /405/, false],
      'big-header': [`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`, /431/, false],
      'bad-escape': [`DELETE ${path.replace(/\/[^/]*$/, '/%zz%')} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, null, false],
      stalled: [post('Content-Length: 1000\r\n', '{"text":'), /408/, false],
      'cl-and-te': [post('Content-Length: 5\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n'), /400/, false],
      'bad-chunk': [post('Transfer-Encoding: chunked\r\n', 'zz\r\nabc\r\n0\r\n\r\n'), /400/, false],
      'chunk-overflow': [post('Transfer-Encoding: chunked\r\n', 'ffffffffffffffffffff\r\nabc\r\n'), /400|413/, false],
      'cl-bad': [post('Content-Length: -1\r\n', '{}'), /400/, false],
      'cl-twice': [post('Content-Length: 2\r\nContent-Length: 3\r\n', '{} '), /400/, false],
      'cl-short': [post('Content-Length: 2\r\n', '{}GARBAGE / HTTP/1.1\r\n\r\n'), null, false],
      'cl-over-limit': [post('Content-Length: 900000000\r\n', '{"text":"'), /413|200|400|404|408/, false],
      'garbage-line': ['GARBAGE\r\n\r\n', /400/, false],
      'http-9': [`GET ${path} HTTP/9.9\r\nHost: x\r\n\r\n`, null, false],
      'absolute-form': [`GET http://evil.test${path} HTTP/1.1\r\nHost: evil.test\r\n${auth}\r\n`, null, false],
      'options-star': ['OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n', null, false],
      trace: [`TRACE ${path} HTTP/1.1\r\nHost: x\r\n\r\n`, null, false],
      'folded-header': [`GET ${path} HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n`, /400/, false],
      'nul-header': [`GET ${path} HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n`, /400/, false],
      'many-headers': [`GET ${path} HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-${i}: v\r\n`).join('')}\r\n`, /431|400/, false],
      'half-closed': [post('Content-Length: 100\r\n', '{"te'), null, true],
    };
    const [text, expect, halfClose] = cases[kind]!;
    return { kind, service, path, text, expect, halfClose };
  });

/** How a socket sequence may move: each step a frame the client sends, a pause or a clock advance. */
type Move = 'start' | 'continue' | 'final' | 'audio' | 'binary-json' | 'text-audio' | 'invalid-utf8' | 'oversize' | 'flood' | 'ping' | 'pause' | 'advance-idle';
const MOVES: Move[] = [
  'start',
  'continue',
  'final',
  'audio',
  'binary-json',
  'text-audio',
  'invalid-utf8',
  'oversize',
  'flood',
  'ping',
  'pause',
  'advance-idle',
];

const SOCKETS: [service: 'speech' | 'platform', path: string][] = [
  ['speech', '/ws/v1/t2a_v2'],
  ['speech', '/ws/v1/t2a_v2_bidi'],
  ['platform', '/api/v1/audio/conversation/stream'],
  ['platform', '/api/v1/audio/conversation/stream-text'],
  ['platform', '/v1/speech-to-text/stream'],
];

function frameOf(service: 'speech' | 'platform', move: Move): { data: Buffer | string; binary: boolean } | null {
  const speech = service === 'speech';
  switch (move) {
    case 'start':
      return {
        data: JSON.stringify(
          speech
            ? {
                event: 'task_start',
                model: 'speech-2.8-turbo',
                voice_setting: { voice_id: 'male-qn-qingse' },
                audio_setting: { format: 'pcm', sample_rate: 8000 },
              }
            : { meta: { voice_id: 'default', audio_format: 'pcm16', language: 'en' }, voice_id: 'default', text_input: 'Hello there.' },
        ),
        binary: false,
      };
    case 'continue':
      return { data: JSON.stringify(speech ? { event: 'task_continue', text: 'Hello.' } : { text_input: 'And again.' }), binary: false };
    case 'final':
      return { data: speech ? '{"event":"task_finish"}' : '{"is_final":true}', binary: false };
    case 'audio':
      return { data: Buffer.alloc(3200), binary: true };
    case 'binary-json':
      return { data: Buffer.from(speech ? '{"event":"task_finish"}' : '{"is_final":true}'), binary: true };
    case 'text-audio':
      return { data: Buffer.alloc(3200, 7).toString('base64'), binary: false };
    case 'invalid-utf8':
      return { data: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), binary: false };
    case 'oversize':
      return { data: Buffer.alloc(8 * 1024 * 1024 + 1), binary: true };
    default:
      return null;
  }
}

const socketCase = fc.record({
  socket: fc.constantFrom(...SOCKETS),
  moves: fc.array(fc.constantFrom(...MOVES), { minLength: 1, maxLength: 6 }),
});

/** Runs one socket sequence: every text frame a JSON event, a close code the services use, the expected one after a frame that breaks the protocol. */
function runSocket(t: Target, service: 'speech' | 'platform', path: string, moves: Move[]): Promise<Outcome> {
  const base = service === 'speech' ? t.speechUrl : t.platformUrl;
  const url = new URL(path, base.replace(/^http/, 'ws'));
  if (service === 'platform') url.searchParams.set('api_key', FUZZ_KEY);
  const eventKey = service === 'speech' ? 'event' : 'type';
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: service === 'speech' ? { authorization: `Bearer ${FUZZ_KEY}` } : {} });
    let problem: string | null = null;
    let expected: number | undefined;
    let sent = false;
    let done = false;
    let quiet: NodeJS.Timeout | undefined;
    const finish = (status: string) => {
      if (done) return;
      done = true;
      clearTimeout(overall);
      clearTimeout(quiet);
      resolve({ status, problem: problem && `${service} ${path}: ${problem}` });
    };
    const overall = setTimeout(() => {
      problem ??= `no end within ${t.timeoutMs} ms`;
      ws.terminate();
      finish('timeout');
    }, t.timeoutMs);
    const rearm = () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => ws.readyState === WebSocket.OPEN && ws.close(1000), 150);
    };
    ws.on('unexpected-response', (_req, res) => {
      problem ??= `upgrade refused with HTTP ${res.statusCode}`;
      res.resume();
      finish(`refused ${res.statusCode}`);
    });
    ws.on('message', (data, isBinary) => {
      rearm();
      if (isBinary) return;
      try {
        const e = JSON.parse(data.toString()) as Record<string, unknown>;
        if (typeof e?.[eventKey] !== 'string') problem ??= `event without a ${eventKey}: ${data.toString().slice(0, 100)}`;
      } catch {
        problem ??= `text frame is not JSON: ${data.toString().slice(0, 100)}`;
      }
    });
    ws.on('error', () => undefined);
    ws.on('close', (code) => {
      if (!ALLOWED_CLOSE.has(code)) problem ??= `closed with ${code}`;
      else if (expected !== undefined && code !== expected && code !== 1000 && code !== 1001) problem ??= `closed with ${code} where ${expected} was due`;
      finish(`close ${code}`);
    });
    ws.on('open', async () => {
      for (const move of moves) {
        if (ws.readyState !== WebSocket.OPEN) break;
        if (move === 'pause') await new Promise((r) => setTimeout(r, 30));
        else if (move === 'ping') ws.ping();
        else if (move === 'flood') {
          for (let i = 0; i < 300; i++) ws.send('{}');
          sent = true;
        } else if (move === 'advance-idle') {
          // Past the 120 s idle rule on the emulator clock: the socket closes (1001) unless it is busy.
          await fetch(`${t.platformUrl}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"advance_ms":121000}' });
        } else {
          const f = frameOf(service, move)!;
          // The close a broken frame is due is known when it is the first frame: an earlier one may have closed the socket already (1008).
          if (!sent && move === 'oversize') expected = 1009;
          if (!sent && move === 'invalid-utf8') expected = 1007;
          sent = true;
          ws.send(f.data, { binary: f.binary });
        }
      }
      rearm();
    });
  });
}

export const WIRE_FAMILIES: Record<string, fc.Arbitrary<Attack>> = {
  'raw HTTP: framing, lengths, headers': rawRequest.map((r) => ({
    what: `${r.service} ${r.kind} ${JSON.stringify(r.text.slice(0, 70))}`,
    run: async (t: Target): Promise<Outcome> => {
      const base = r.service === 'speech' ? t.speechUrl : t.platformUrl;
      // A stalled body waits for the listener's body timeout, set short by the fuzzer.
      const { answer } = await raw(base, Buffer.from(r.text, 'latin1'), t.timeoutMs + t.bodyTimeoutMs, r.halfClose);
      const problem = judgeRaw(answer, r.expect);
      return { status: /^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 'closed', problem: problem && `${r.service} ${r.kind}: ${problem}` };
    },
  })),
  'socket sequences: order, types, sizes, idle': socketCase.map(({ socket: [service, path], moves }) => ({
    what: `${service} ${path}: ${moves.join(', ')}`,
    run: (t: Target) => runSocket(t, service, path, moves),
  })),
};
