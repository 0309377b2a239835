import fc from 'fast-check';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { redactKey } from '../src/core/state/accounts.js';
import { gzipSync } from 'node:zlib';
import { archive, audio } from './fuzz-media.js';
import type { Endpoint } from '../test/properties/endpoints.js';
import { authOf, endpoint, hit, jsonHeaders, slow, type Attack, type Outcome, type T3, type Target } from './fuzz-oracle.js';
import { asyncTask, useAudio } from './fuzz-uses.js';

export type { Attack, Outcome, Target } from './fuzz-oracle.js';

/**
 * Input families of `npm run fuzz` beyond the per-endpoint generators: each is a seeded generator of
 * attacks (one request, or a short sequence such as an upload then its use) judged by the fuzzer's
 * oracle (an answer in time, in the endpoint's shape, with a listed status) plus what the family is
 * about: no internal error for a client's input, an error answer of bounded size, no connection to a
 * listener a URL points at, no tar member outside its task's folder.
 */
/** POST endpoints with JSON bodies and the fields each reads (ids, texts, URLs). */
const JSON_TARGETS: [service: 'speech' | 'platform', url: string, fields: string[]][] = [
  ['speech', '/v1/t2a_v2', ['text', 'model', 'voice_setting.voice_id', 'pronunciation_dict.tone']],
  ['speech', '/v1/files/delete', ['file_id', 'purpose']],
  ['speech', '/v1/voice_clone', ['file_id', 'voice_id', 'clone_prompt.prompt_audio', 'text']],
  ['speech', '/v1/t2a_async_v2', ['text_file_id', 'text', 'model']],
  ['speech', '/v1/get_voice', ['voice_type']],
  ['speech', '/v1/delete_voice', ['voice_id', 'voice_type']],
  ['speech', '/v1/voice_design', ['prompt', 'preview_text']],
  ['speech', '/v1/query/t2a_async_query_v2', ['task_id']],
  ['platform', '/v1/text-to-speech', ['voice_id', 'generate_text']],
  ['platform', '/v1/voice/save', ['voice_id', 'ref_audio', 'ref_text']],
  ['platform', '/v1/speech-to-text', ['audio_data', 'audio_format']],
  ['platform', '/v1/diarize', ['url', 'object_key']],
  ['platform', '/v1/audio/ai-detect', ['audio_url']],
  ['platform', '/v1/audio/podcast', ['dialogueText', 'audioPromptSpk1']],
  ['platform', '/v1/audio/assistant/heartbeat', ['session_id']],
  ['platform', '/api/v1/agents/openapi/sessions/create', ['agentId', 'userIdentifier']],
  ['platform', '/mcp', ['method', 'params.name', 'params.arguments.object_key']],
];

/** `{a: {b: value}}` for the path `a.b`, as JSON text with `value` already JSON. */
const nest = (path: string, value: string) => path.split('.').reduceRight((inner, k) => `{${JSON.stringify(k)}:${inner}}`, value);

/** Deep and huge JSON: nesting past any parser's stack, megabyte strings, wide arrays, many keys, odd numbers. */
const hugeValue = fc.oneof(
  fc.record({ depth: fc.integer({ min: 5000, max: 30000 }), open: fc.constantFrom('[', '{"a":') }).map(({ depth, open }) => ({
    what: `nested ${depth} deep`,
    json: open.repeat(depth) + '1' + (open === '[' ? ']' : '}').repeat(depth),
  })),
  fc.integer({ min: 100_000, max: 900_000 }).map((n) => ({ what: `string of ${n} chars`, json: JSON.stringify('x'.repeat(n)) })),
  fc.integer({ min: 10_000, max: 200_000 }).map((n) => ({ what: `array of ${n}`, json: `[${'0,'.repeat(n)}0]` })),
  fc
    .integer({ min: 1000, max: 50_000 })
    .map((n) => ({ what: `object of ${n} keys`, json: `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}` })),
  fc
    .constantFrom('1e999999', '-0', `1${'0'.repeat(5000)}`, '9007199254740993', '"\\ud800"', '"\\u0000"', '"\\uffff"')
    .map((json) => ({ what: json.slice(0, 20), json })),
);

export const FAMILIES: Record<string, fc.Arbitrary<Attack>> = {
  'deep and huge JSON': fc
    .record({ target: fc.constantFrom(...JSON_TARGETS), pick: fc.nat(), value: hugeValue, dupKeys: fc.boolean() })
    .map(({ target: [service, url, fields], pick, value, dupKeys }) => {
      const field = fields[pick % fields.length]!;
      let body = nest(field, value.json);
      // The same field twice: the second wins in JSON.parse; the first is huge.
      if (dupKeys) body = `{${JSON.stringify(field.split('.')[0])}:${value.json},${body.slice(1)}`;
      return {
        what: `${service} ${url} ${field}: ${value.what}${dupKeys ? ' (key twice)' : ''}`,
        run: (t) => hit(t, endpoint(service, 'POST', url), url, jsonHeaders(service), Buffer.from(body)),
      };
    }),

  'content types and encodings': fc
    .record({
      target: fc.constantFrom(...JSON_TARGETS, ['platform', '/_emulator/clock', ['advance_ms']] as const, ['speech', '/_emulator/verify', ['x']] as const),
      type: fc.constantFrom(
        'application/json, text/plain',
        'text/plain, application/json',
        'APPLICATION/JSON',
        'application/json; charset=utf-16',
        'application/json; charset=latin1',
        'application/json; charset="utf-8"; x=y; x=z',
        'application/vnd.api+json',
        'text/json',
        'application/x-www-form-urlencoded',
        'multipart/form-data',
        'multipart/form-data; boundary=',
        'application/json;;;',
        '*/*',
        ' ',
      ),
      encoding: fc.constantFrom('', '', 'gzip', 'gzip-bad', 'deflate', 'br', 'identity', 'x-unknown', 'gzip, gzip'),
      text: fc.constantFrom('bom', 'utf16', 'latin1', 'nul', 'plain', 'form'),
      chunked: fc.boolean(),
    })
    .map(({ target: [service, url], type, encoding, text, chunked }) => {
      const plain = Buffer.from('{"text":"Hi","model":"speech-02-hd","voice_id":"default"}');
      const content = {
        bom: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), plain]),
        utf16: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(plain.toString(), 'utf16le')]),
        latin1: Buffer.from('{"text":"caf\xe9 \xff"}', 'latin1'),
        nul: Buffer.from('{"text":"a\u0000b"}\u0000'),
        plain,
        form: Buffer.from('text=Hi&model=x'),
      }[text];
      const headers: Record<string, string> = { ...authOf(service), 'content-type': type };
      let body = content;
      if (encoding) headers['content-encoding'] = encoding === 'gzip-bad' ? 'gzip' : encoding;
      if (encoding === 'gzip') body = gzipSync(content);
      // Sent in pieces without a length: the request is chunked.
      const pieces = async function* () {
        for (let i = 0; i < body.length; i += 7) yield body.subarray(i, i + 7);
      };
      return {
        what: `${service} ${url} as ${JSON.stringify(type)}${encoding ? ` encoded ${encoding}` : ''}, ${text}${chunked ? ', chunked' : ''}`,
        run: (t) => hit(t, endpoint(service, 'POST', url), url, headers, chunked ? pieces() : body),
      };
    }),

  'multipart edges': fc
    .record({
      target: fc.constantFrom(
        ['platform', '/v1/files/upload', 'file'] as T3,
        ['platform', '/v1/audio/ai-detect', 'audio'] as T3,
        ['speech', '/v1/files/upload', 'file'] as T3,
        ['speech', '/v1/speech_to_text', 'file'] as T3,
      ),
      shape: fc.constantFrom(
        'no-boundary',
        'other-boundary',
        'quoted',
        'long-boundary',
        'many-parts',
        'twice',
        'big-part-header',
        'no-disposition',
        'lf-only',
        'nested',
        'preamble',
      ),
      filename: fc.constantFrom('a.wav', '../../../etc/passwd', '/abs.wav', 'a\r\nX-Injected: 1.wav', 'n'.repeat(2000), '', 'a%00.wav', 'ü.wav'),
      media: audio,
      purpose: fc.constantFrom('voice_clone', 'prompt_audio', 't2a_async_input', 'retrieval', 'video_generation_input', 'x'),
    })
    .map(({ target: [service, url, field], shape, filename, media, purpose }) => {
      const boundary = shape === 'long-boundary' ? 'b'.repeat(200) : 'fz';
      const crlf = shape === 'lf-only' ? '\n' : '\r\n';
      const part = (name: string, content: Buffer, file?: string) =>
        Buffer.concat([
          Buffer.from(
            `--${boundary}${crlf}${shape === 'no-disposition' ? '' : `Content-Disposition: form-data; name="${name}"${file !== undefined ? `; filename="${file}"` : ''}${crlf}`}` +
              (shape === 'big-part-header' ? `X-Pad: ${'p'.repeat(20_000)}${crlf}` : '') +
              (file !== undefined ? `Content-Type: ${media.type}${crlf}` : '') +
              crlf,
            'latin1',
          ),
          content,
          Buffer.from(crlf),
        ]);
      const parts = [
        part('purpose', Buffer.from(purpose)),
        part('scene', Buffer.from('audio')),
        part('model', Buffer.from('asr-1.0')),
        part(field, media.bytes, filename),
      ];
      if (shape === 'twice') parts.push(part(field, media.bytes, filename));
      if (shape === 'many-parts') for (let i = 0; i < 2000; i++) parts.push(part(`x${i}`, Buffer.from('y')));
      if (shape === 'nested') parts.push(part('file', Buffer.from(`--inner\r\nContent-Type: text/plain\r\n\r\nz\r\n--inner--`), 'n.txt'));
      const body = Buffer.concat([Buffer.from(shape === 'preamble' ? 'garbage before\r\n' : ''), ...parts, Buffer.from(`--${boundary}--${crlf}epilogue`)]);
      const type =
        shape === 'no-boundary'
          ? 'multipart/form-data'
          : shape === 'other-boundary'
            ? 'multipart/form-data; boundary=zz'
            : shape === 'quoted'
              ? `multipart/form-data; boundary="${boundary}"`
              : `multipart/form-data; boundary=${boundary}`;
      return {
        what: `${service} ${url} multipart ${shape}, filename ${JSON.stringify(filename.slice(0, 30))}, ${media.what}`,
        run: (t) => hit(slow(t), endpoint(service, 'POST', url), url, { ...authOf(service), 'content-type': type }, body),
      };
    }),

  'audio near the decode caps': fc
    .record({ media: audio, use: fc.constantFrom('detect', 'detect-json', 'diarize', 'recognize', 'stt', 'clone', 'prompt', 'hear', 'voice-save') })
    .map(({ media, use }) => ({ what: `${use}: ${media.what}`, run: (t) => useAudio(slow(t), use, media) })),

  'archives: bombs and escaping names': archive.map((zip) => ({ what: zip.what, run: (t) => asyncTask(slow(t), zip.bytes) })),

  'URLs at own listeners and private addresses': fc
    .record({
      target: fc.constantFrom(
        ['platform', '/v1/audio/ai-detect', 'audio_url'] as T3,
        ['platform', '/v1/diarize', 'url'] as T3,
        ['platform', '/v1/voice/save', 'ref_audio'] as T3,
        ['platform', '/v1/audio/podcast', 'audioPromptSpk1'] as T3,
      ),
      url: fc.constantFrom(
        'SENTINEL/a.wav',
        'SENTINEL_LOCALHOST/a.wav',
        'SENTINEL_V6/a.wav',
        'SENTINEL_HEX/a.wav',
        'SENTINEL_DEC/a.wav',
        'SENTINEL_MAPPED/a.wav',
        'SENTINEL_USER/a.wav',
        'OWN/_emulator/reset',
        'OWN/download/../_emulator/state',
        'OWN/v1/files/upload',
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/a.wav',
        'http://[fd00::1]/a.wav',
        'http://100.64.0.1/a.wav',
        'file:///etc/passwd',
        'gopher://127.0.0.1:25/x',
        'ftp://127.0.0.1/a.wav',
        'https://cdn.emulator.test/../../etc/passwd',
        'https://cdn.emulator.test/%2e%2e/%2e%2e/etc/passwd',
        'https://cdn.emulator.test.SENTINEL_HOST/a.wav',
        `https://example.com/${'a'.repeat(9000)}.wav`,
        'http://0/a.wav',
        'http:/\\127.0.0.1/a.wav',
      ),
    })
    .map(({ target: [service, url, field], url: value }) => ({
      what: `${url} ${field}: ${value.slice(0, 60)}`,
      run: async (t) => {
        const s = new URL(t.sentinel.url);
        const port = s.port;
        const concrete = value
          .replace('SENTINEL_LOCALHOST', `http://localhost:${port}`)
          .replace('SENTINEL_V6', `http://[::1]:${port}`)
          .replace('SENTINEL_HEX', `http://0x7f.0.0.1:${port}`)
          .replace('SENTINEL_DEC', `http://2130706433:${port}`)
          .replace('SENTINEL_MAPPED', `http://[::ffff:127.0.0.1]:${port}`)
          .replace('SENTINEL_USER', `http://user:pass@127.0.0.1:${port}`)
          .replace('SENTINEL_HOST', `127.0.0.1:${port}`)
          .replace('SENTINEL', t.sentinel.url)
          .replace('OWN', t.platformUrl);
        const before = t.sentinel.connections();
        const out = await hit(
          t,
          endpoint(service, 'POST', url),
          url,
          jsonHeaders(service),
          Buffer.from(JSON.stringify({ [field]: concrete, voice_id: 'fuzz_url', ref_text: 'a text' })),
        );
        const reached = t.sentinel.connections() - before;
        return reached > 0 ? { status: out.status, problem: `${url}: ${reached} connection(s) to the listener ${concrete} points at` } : out;
      },
    })),

  'clock control': fc
    .record({
      body: fc.oneof(
        fc.constantFrom(9007199254740991, 8.64e15, 8.64e15 + 1, -8.64e15 - 1, -1, 0, 1e300, 0.5, -0).map((v) => ({ set_ms: v })),
        fc.constantFrom(9007199254740991, 8.64e15, 1e300, -1, 2 ** 31, 0.1).map((v) => ({ advance_ms: v })),
        fc.constantFrom<unknown>('1', null, [], {}, true, 'x'.repeat(10000)).map((v) => ({ set_ms: v, advance_ms: v, freeze: v })),
      ),
      freeze: fc.boolean(),
    })
    .map(({ body, freeze }) => ({
      what: `POST /_emulator/clock ${JSON.stringify({ ...body, freeze }).slice(0, 80)} then time-using calls`,
      run: async (fast) => {
        // A move of the clock waits for the async synthesis in flight (core/state/clock.ts settled), made by the other attacks too.
        const t = slow(fast);
        const clock = endpoint('platform', 'POST', '/_emulator/clock');
        const first = await hit(t, clock, '/_emulator/clock', { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ ...body, freeze })));
        if (first.problem) return first;
        // Anything that reads the clock afterwards must still answer in its shape, never with an internal error.
        const probes: [Endpoint, string, unknown][] = [
          [
            endpoint('speech', 'POST', '/v1/t2a_async_v2'),
            '/v1/t2a_async_v2',
            { model: 'speech-02-hd', text: 'Hi.', voice_setting: { voice_id: 'male-qn-qingse' } },
          ],
          [endpoint('speech', 'POST', '/v1/voice_design'), '/v1/voice_design', { prompt: 'a calm voice', preview_text: 'Hello.' }],
          [endpoint('platform', 'POST', '/v1/audio/assistant/start'), '/v1/audio/assistant/start', { client_nonce: 'fuzz' }],
          [
            endpoint('platform', 'POST', '/api/v1/agents/openapi/sessions/create'),
            '/api/v1/agents/openapi/sessions/create',
            { agentId: 'a', userIdentifier: 'u' },
          ],
        ];
        for (const [e, path, b] of probes) {
          const r = await hit(t, e, path, jsonHeaders(e.service), Buffer.from(JSON.stringify(b)));
          if (r.problem) return { status: `${first.status}/${r.status}`, problem: `after the clock call: ${r.problem}` };
        }
        const read = await hit(t, endpoint('platform', 'GET', '/_emulator/clock'), '/_emulator/clock', {});
        return read.problem ? read : { status: first.status, problem: null };
      },
    })),

  'control-plane bodies': fc
    .oneof(
      fc.record({
        kind: fc.constant('account' as const),
        v: fc.constantFrom<unknown>(1e308, -1, 2 ** 53 + 1, '1', null, [], { a: 1 }, 'x'.repeat(5000)),
        field: fc.constantFrom('balance_micro', 'capabilities', 'limits', 'project', 'disabled'),
      }),
      fc.record({
        kind: fc.constant('fault' as const),
        v: fc.constantFrom<unknown>(1e308, -1, 2 ** 53 + 1, '1', null, [], '/../'.repeat(100)),
        field: fc.constantFrom('delay_ms', 'times', 'probability', 'code', 'status', 'path', 'service', 'account'),
      }),
      fc.record({
        kind: fc.constant('fixture' as const),
        v: fc.constantFrom<unknown>(
          '../../../etc/passwd',
          '/etc/passwd',
          'remote/../../package.json',
          '%2e%2e/%2e%2e/package.json',
          'remote/ref-5s.wav\u0000.txt',
          'remote\\..\\..\\package.json',
          '',
        ),
        field: fc.constant('file'),
      }),
    )
    .map(({ kind, v, field }) => ({
      what: `${kind} ${field}: ${JSON.stringify(v)?.slice(0, 60)}`,
      run: async (t) => {
        const h = { 'content-type': 'application/json' };
        if (kind === 'account')
          return hit(
            t,
            endpoint('platform', 'PUT', '/_emulator/accounts/:key'),
            '/_emulator/accounts/fuzz-control',
            h,
            Buffer.from(JSON.stringify({ [field]: v })),
          );
        if (kind === 'fault') {
          const rule = { path: '/v1/voice/list', fault: 'error', times: 1, [field]: v };
          const out = await hit(t, endpoint('platform', 'POST', '/_emulator/faults'), '/_emulator/faults', h, Buffer.from(JSON.stringify(rule)));
          await fetch(`${t.platformUrl}/_emulator/faults`, { method: 'DELETE' }).catch(() => undefined);
          return out;
        }
        // A fixture whose file is outside the fixtures folder is refused (400 naming the entry), never read.
        const entries = [{ url: 'https://cdn.emulator.test/fuzz.wav', file: v, content_type: 'audio/wav' }];
        const out = await hit(
          t,
          endpoint('platform', 'PUT', '/_emulator/fixtures/:name'),
          '/_emulator/fixtures/remote-audio.json',
          h,
          Buffer.from(JSON.stringify(entries)),
        );
        const escapes = typeof v === 'string' && (/^([\\/]|[A-Za-z]:)/.test(v) || v.split(/[\\/]/).includes('..'));
        if (!out.problem && out.status === '200' && escapes) {
          await fetch(`${t.platformUrl}/_emulator/reset?fixtures=true`, { method: 'POST' }).catch(() => undefined);
          return { status: out.status, problem: `fixture file ${JSON.stringify(v)} outside the fixtures folder was accepted` };
        }
        await fetch(`${t.platformUrl}/_emulator/reset?fixtures=true`, { method: 'POST' }).catch(() => undefined);
        return out;
      },
    })),
};

/** Patterns that backtrack catastrophically in JavaScript's engine (linear in the emulator's). */
const BACKTRACKING = ['^(a+)+$', '(a|a)*b', '(a*)*$', '^(\\w+\\s?)*$', '(a|aa)+$'];
const FUZZ_RULE_REPLY = 'fuzz pattern rule';

/** One stream-text turn; the reply text or a problem. */
function textTurn(t: Target, text: string): Promise<{ reply: string | null; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const ws = new WebSocket(`${t.platformUrl.replace('http', 'ws')}/api/v1/audio/conversation/stream-text?api_key=fuzz-pattern`);
    let reply: string | null = null;
    const timer = setTimeout(() => ws.terminate(), t.timeoutMs);
    ws.on('open', () => ws.send(JSON.stringify({ voice_id: 'english_tutor', audio_format: 'pcm16', text_input: text })));
    ws.on('message', (data, binary) => {
      if (!binary) {
        const event = JSON.parse(String(data));
        if (event.type === 'done') reply = event.reply_text;
      }
    });
    ws.on('close', () => (clearTimeout(timer), resolve({ reply, ms: Date.now() - started })));
    ws.on('error', () => undefined);
  });
}

/**
 * The bounds of issue "one slow socket": a backtracking reply pattern (answered in time), an `/mcp`
 * batch over 20 messages (one -32600 error, nothing run), a speech socket whose client stops reading
 * (the server's buffer for it stays under 1 MiB and a frame, and it is let go after the stall time).
 */
export const BOUND_FAMILIES: Record<string, fc.Arbitrary<Attack>> = {
  'bounds: pattern, batch, non-reading socket': fc.oneof(
    fc.record({ pattern: fc.constantFrom(...BACKTRACKING), length: fc.integer({ min: 25, max: 60 }) }).map(({ pattern, length }) => ({
      what: `reply rule ${pattern} against ${length} characters`,
      run: async (t: Target): Promise<Outcome> => {
        const base = `${t.platformUrl}/_emulator/fixtures/conversation.json`;
        const content = ((await fetch(base).then((r) => r.json())) as any).content;
        content.rules = content.rules.filter((r: any) => r.reply !== FUZZ_RULE_REPLY);
        content.rules.push({ match: pattern, reply: FUZZ_RULE_REPLY, language: 'en' });
        const put = await fetch(base, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(content) });
        if (put.status !== 200) return { status: String(put.status), problem: `PUT of ${pattern} refused: ${await put.text()}` };
        const turn = await textTurn(slow(t), `${'a'.repeat(length)}!`);
        return { status: turn.reply === null ? 'no reply' : 'replied', problem: turn.reply === null ? `no reply within ${t.timeoutMs} ms` : null };
      },
    })),
    fc.integer({ min: 21, max: 400 }).map((n) => ({
      what: `/mcp batch of ${n} tools/call`,
      run: async (t: Target): Promise<Outcome> => {
        const batch = Array.from({ length: n }, (_, id) => ({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'voice_list', arguments: { apiKey: 'fuzz-batch' } },
        }));
        const res = await fetch(`${t.platformUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) });
        const body = (await res.json().catch(() => null)) as any;
        const ok = res.status === 200 && body?.id === null && body?.error?.code === -32600;
        return {
          status: `${res.status} ${body?.error?.code ?? 'results'}`,
          problem: ok ? null : `expected one -32600 error, got ${JSON.stringify(body).slice(0, 200)}`,
        };
      },
    })),
    fc.constantFrom('/ws/v1/t2a_v2', '/ws/v1/t2a_v2_bidi').map((path) => ({
      what: `${path}: client stops reading, sends 9,000 characters every 500 ms`,
      run: async (t: Target): Promise<Outcome> => {
        const key = `fuzz-stall-${path.length}`;
        const ws = new WebSocket(`${t.speechUrl.replace('http', 'ws')}${path}`, { headers: { authorization: `Bearer ${key}` } });
        await new Promise((resolve, reject) => (ws.once('message', resolve), ws.once('error', reject)));
        ws.send(
          JSON.stringify({ event: 'task_start', model: 'speech-02-hd', voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'pcm' } }),
        );
        (ws as unknown as { _socket: Socket })._socket.pause();
        const label = redactKey(key);
        let max = 0;
        let gone = false;
        try {
          for (const until = Date.now() + 12_000; Date.now() < until && !gone;) {
            if (ws.readyState === WebSocket.OPEN)
              ws.send(JSON.stringify({ event: 'task_continue', text: 'Words that take long to say. '.repeat(320).slice(0, 9000) }));
            await new Promise((r) => setTimeout(r, 500));
            const state = (await fetch(`${t.platformUrl}/_emulator/state?limit=10000`).then((r) => r.json())) as any;
            const open: { buffered_bytes: number }[] = (state.accounts as any[]).find((a) => a.account === label)?.open_websockets ?? [];
            max = Math.max(max, ...open.map((s) => s.buffered_bytes));
            gone = open.length === 0;
          }
        } finally {
          ws.terminate();
        }
        const bounded = max <= 1024 * 1024 + 64 * 1024;
        return {
          status: gone ? 'closed by the server' : 'still open',
          problem: bounded && gone ? null : `the server held ${max} bytes for the socket${gone ? '' : ' and did not close it'}`,
        };
      },
    })),
  ),
};
