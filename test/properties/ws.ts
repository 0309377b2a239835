import fc from 'fast-check';
import WebSocket from 'ws';
import { FUZZ_KEY } from './inputs.js';

/**
 * Generated message sequences for the WebSockets: meta messages (flat and wrapped, valid and not),
 * `is_final`, any JSON, text that is not JSON, binary frames of any length, short pauses; keys valid,
 * missing or wrong. What the socket answers is judged: every text frame a JSON event with a `type`,
 * a close code the services use for client errors or a finished turn, all within a bounded time.
 */
export type Step = { text: string } | { binary: Buffer } | { pause: number };

export interface WsCase {
  auth: 'valid' | 'missing' | 'garbage';
  steps: Step[];
}

/** Close codes a socket may end with: normal, going away, unsupported, bad data, policy, too big, reset. */
export const ALLOWED_CLOSE = new Set([1000, 1001, 1003, 1007, 1008, 1009, 1012]);

const meta = fc.record(
  {
    voice_id: fc.oneof(fc.constantFrom('default', 'english_tutor', ''), fc.string({ maxLength: 12 })),
    audio_format: fc.constantFrom('pcm16', 'mp3', 'pcm', 7),
    language: fc.constantFrom('zh', 'en', 'auto', 'xx', null),
    text_input: fc.oneof(fc.string({ maxLength: 40 }), fc.constant('Hello, how are you today?'), fc.integer()),
    session_id: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('x'.repeat(200))),
  },
  { requiredKeys: [] },
);

const step: fc.Arbitrary<Step> = fc.oneof(
  meta.map((m) => ({ text: JSON.stringify(m) })),
  meta.map((m) => ({ text: JSON.stringify({ type: 'meta', meta: m }) })),
  fc.constantFrom({ text: '{"is_final":true}' }, { text: '{"meta":{"is_final":true}}' }, { text: 'not json' }, { text: '' }, { text: '[]' }, { text: 'null' }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => ({ text: JSON.stringify(v) ?? 'null' })),
  fc.uint8Array({ maxLength: 4000 }).map((b) => ({ binary: Buffer.from(b) })),
  fc.integer({ min: 1, max: 8 }).map((n) => ({ binary: Buffer.alloc(n * 3200) })),
  fc.integer({ min: 0, max: 40 }).map((ms) => ({ pause: ms })),
);

/** A meta every socket accepts (unknown fields are ignored), so later steps reach the audio and turn logic. */
const VALID_META = { text: JSON.stringify({ meta: { voice_id: 'default', audio_format: 'pcm16', language: 'en' } }) };
const VALID_TEXT_META = { text: JSON.stringify({ voice_id: 'default', text_input: 'Hello, how are you today?' }) };

/** The speech socket's own events, valid and not, so sequences reach its session rules too. */
const SPEECH_START = {
  event: 'task_start',
  model: 'speech-2.8-turbo',
  voice_setting: { voice_id: 'male-qn-qingse' },
  audio_setting: { format: 'pcm', sample_rate: 8000 },
};
const speechStep: fc.Arbitrary<Step> = fc.oneof(
  step,
  fc.constantFrom(
    { text: JSON.stringify(SPEECH_START) },
    { text: '{"event":"task_finish"}' },
    { text: '{"event":"task_continue","text":""}' },
    { text: '{"event":"task_continue"}' },
    { text: '{"event":"task_cancel"}' },
  ),
  fc.string({ maxLength: 40 }).map((t) => ({ text: JSON.stringify({ event: 'task_continue', text: t }) })),
  fc
    .record(
      { model: fc.string({ maxLength: 12 }), voice_setting: fc.jsonValue({ maxDepth: 2 }), audio_setting: fc.jsonValue({ maxDepth: 2 }) },
      { requiredKeys: [] },
    )
    .map((r) => ({
      text: JSON.stringify({ ...SPEECH_START, ...r }),
    })),
);

export const speechWsCase: fc.Arbitrary<WsCase> = fc.record({
  auth: fc.constantFrom('valid', 'valid', 'valid', 'valid', 'missing', 'garbage'),
  steps: fc.oneof(
    fc.array(speechStep, { minLength: 1, maxLength: 6 }),
    fc.array(speechStep, { maxLength: 5 }).map((rest) => [{ text: JSON.stringify(SPEECH_START) }, ...rest]),
  ),
});

export const wsCase: fc.Arbitrary<WsCase> = fc.record({
  auth: fc.constantFrom('valid', 'valid', 'valid', 'valid', 'missing', 'garbage'),
  steps: fc.oneof(
    fc.array(step, { minLength: 1, maxLength: 6 }),
    fc
      .tuple(fc.constantFrom(VALID_META, VALID_TEXT_META), fc.array(step, { maxLength: 5 }), fc.boolean())
      .map(([first, rest, final]) => [first, ...rest, ...(final ? [{ text: '{"is_final":true}' }] : [])]),
  ),
});

export interface WsOutcome {
  problem: string | null;
  /** How it ended: `close 1000`, `refused 401`, `left open`. */
  end: string;
}

/**
 * Runs one sequence against `ws://…path`: sends the steps, waits until the server closes or has been
 * quiet for `quietMs`, then closes from the client side. `timeoutMs` bounds the whole exchange.
 */
export function runWsCase(
  base: string,
  path: string,
  c: WsCase,
  timeoutMs: number,
  quietMs = 150,
  service: 'speech' | 'platform' = 'platform',
  /** `raw`: a route of another protocol's own (the call room's LiveKit paths) refuses in plain text. */
  shape: 'raw' | 'envelope' = 'envelope',
): Promise<WsOutcome> {
  const url = new URL(path, base.replace(/^http/, 'ws'));
  const key = c.auth === 'valid' ? FUZZ_KEY : 'x'.repeat(300);
  // The speech socket takes its key as a Bearer header and names its events by `event`.
  const headers: Record<string, string> = service === 'speech' && c.auth !== 'missing' ? { authorization: `Bearer ${key}` } : {};
  if (service === 'platform' && c.auth !== 'missing') url.searchParams.set('api_key', key);
  const eventKey = service === 'speech' ? 'event' : 'type';
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    let done = false;
    let problem: string | null = null;
    let quiet: NodeJS.Timeout | undefined;
    const finish = (end: string) => {
      if (done) return;
      done = true;
      clearTimeout(overall);
      clearTimeout(quiet);
      resolve({ problem, end });
    };
    const overall = setTimeout(() => {
      problem ??= `no end within ${timeoutMs} ms`;
      ws.terminate();
      finish('timeout');
    }, timeoutMs);
    const rearm = () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => {
        // Quiet: the client leaves; the server must complete the closing handshake.
        if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'client done');
      }, quietMs);
    };
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => {
        if (shape === 'raw') {
          if (!body.trim()) problem ??= 'refusal has no text';
        } else
          try {
            const b = JSON.parse(body) as Record<string, unknown>;
            const inShape =
              service === 'speech'
                ? typeof (b.base_resp as Record<string, unknown> | undefined)?.status_code === 'number'
                : typeof b.error_code === 'number' && typeof b.succeed === 'boolean';
            if (!inShape) problem ??= `refusal not in the envelope: ${body.slice(0, 120)}`;
          } catch {
            problem ??= `refusal body is not JSON: ${body.slice(0, 120)}`;
          }
        if ((res.statusCode ?? 0) >= 500) problem ??= `upgrade refused with HTTP ${res.statusCode}`;
        finish(`refused ${res.statusCode}`);
      });
    });
    ws.on('error', (err) => {
      if (!done && ws.readyState !== WebSocket.CLOSED) problem ??= `socket error: ${err.message}`;
    });
    ws.on('message', (data, isBinary) => {
      rearm();
      if (isBinary) return;
      try {
        const event = JSON.parse(data.toString()) as Record<string, unknown>;
        if (typeof event !== 'object' || event === null || typeof event[eventKey] !== 'string')
          problem ??= `event without a ${eventKey}: ${data.toString().slice(0, 120)}`;
      } catch {
        problem ??= `text frame is not JSON: ${data.toString().slice(0, 120)}`;
      }
    });
    ws.on('close', (code) => {
      if (!ALLOWED_CLOSE.has(code)) problem ??= `closed with ${code}`;
      finish(`close ${code}`);
    });
    ws.on('open', async () => {
      rearm();
      for (const s of c.steps) {
        if (ws.readyState !== WebSocket.OPEN) break;
        if ('pause' in s) await new Promise((r) => setTimeout(r, s.pause));
        else if ('text' in s) ws.send(s.text);
        else ws.send(s.binary);
      }
      rearm();
    });
  });
}
