import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import WebSocket from 'ws';
import { redactKey } from '../src/core/state/accounts.js';
import { adpcmWav, silentFlac, storedZip } from '../test/helpers/hostile-inputs.js';

/**
 * `npm run soak`: the emulator as its own process on loopback, under --clients concurrent clients
 * for --minutes, every endpoint family mixed (T2A JSON and stream, platform synthesis and stream,
 * uploads, voices, recognition and its stream, detection, calls and heartbeats, conversation
 * sockets), with streams and sockets abandoned mid-way, bodies that stall (cut by a 3 s body
 * timeout), sockets that never send (closed by the idle rule) and a fresh key per request of the
 * "many keys" family (forgotten after their request: the accounts kept are printed). Prints the emulator's RSS over time and the
 * errors per family; after the load, a reset, then RSS again.
 *
 * Each round is a load, a reset, then the emulator left idle until it gives its memory back (its own
 * release after `--idle-release-ms`, 3 s here: a collection that also unmaps the heap pages V8 pooled);
 * memory is shown as RSS and as heap used / external / array buffers (the emulator's own metrics), so
 * objects the load left behind (heap after the release) tell apart from pages the C allocator keeps for
 * reuse (RSS that a second round does not raise).
 *
 * RSS is sampled every second of each load: the slope after warm-up (a least-squares line through the
 * samples of the load's second half) says whether memory still grows once every family has run.
 *
 *   npm run soak -- [--clients 50] [--minutes 6] [--rounds 1] [--every 10] [--timeout 60] [--built] [--only a,b]
 *
 * --built soaks the compiled CLI (dist/main.js, `npm run build` first: what users run) instead of the sources.
 * --only runs the named families alone (names as printed in the table at the end), to find which one holds memory.
 */
function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i !== -1 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}
const CLIENTS = flag('clients', 50);
// Six: RSS rises for about three minutes of this load (the journal fills to its bounds, V8's heap grows to what the load
// needs), and the slope is read over the second half.
const MINUTES = Math.min(flag('minutes', 6), 60);
const EVERY_S = flag('every', 10);
const ROUNDS = Math.min(flag('rounds', 1), 10);
/** Seconds an operation may take before it counts as failed (a loaded 2-core machine is slow, not hung). */
const TIMEOUT_MS = flag('timeout', 60) * 1000;
const ROOT = join(import.meta.dirname, '..');
const BUILT = process.argv.includes('--built');
/** The emulator gives its memory back after this long without activity (its --idle-release-ms). */
const IDLE_RELEASE_MS = 3000;

const child = spawn(
  process.execPath,
  [
    ...(BUILT ? ['dist/main.js'] : ['--import', 'tsx', 'src/main.ts']),
    '--host',
    '127.0.0.1',
    '--speech-port',
    '0',
    '--speech-backup-port',
    '0',
    '--platform-port',
    '0',
    '--log-level',
    'warn',
    '--global-limits',
    'off',
    // The non-reading socket family: a socket left full closes after 3 s, so each attack is short.
    '--socket-stall-ms',
    '3000',
    // Stalled bodies are cut within the soak (the default is 300 s).
    '--body-timeout-ms',
    '3000',
    '--idle-release-ms',
    String(IDLE_RELEASE_MS),
  ],
  {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
let out = '';
child.stdout!.on('data', (d: Buffer) => (out += d));
// Warning and error log lines of the emulator (pino JSON lines, level 40 and above), and anything on stderr.
let errorLines = 0;
const byMessage = new Map<string, number>();
/** The first line of each message: its error's message and path, when it has them. */
const exampleOf = new Map<string, string>();
const countLogs = (d: Buffer) => {
  for (const l of String(d).split('\n')) {
    if (!l.trim()) continue;
    try {
      const entry = JSON.parse(l) as { level?: number; msg?: string };
      if (entry.level! < 40) continue;
      errorLines += 1;
      const key = `${entry.level} ${entry.msg ?? ''}`;
      byMessage.set(key, (byMessage.get(key) ?? 0) + 1);
      const e = entry as { err?: { message?: string }; path?: string };
      if (!exampleOf.has(key)) exampleOf.set(key, [e.path, e.err?.message].filter(Boolean).join(': ').slice(0, 300));
    } catch {
      /* the start-up banner */
    }
  }
};
child.stdout!.on('data', countLogs);
child.stderr!.on(
  'data',
  (d: Buffer) =>
    (errorLines += String(d)
      .split('\n')
      .filter((l) => l.trim()).length),
);
const urls = await new Promise<{ speech: string; platform: string }>((resolve, reject) => {
  const t = setTimeout(() => reject(new Error(`emulator did not start:\n${out}`)), 60_000);
  child.stdout!.on('data', () => {
    const speech = /speech synthesis\s+(http:\/\/\S+)/.exec(out)?.[1];
    const platform = /voice platform\s+(http:\/\/\S+)/.exec(out)?.[1];
    if (speech && platform) {
      clearTimeout(t);
      resolve({ speech, platform });
    }
  });
});

const rssMb = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
};

/** A tone of `seconds` as 16 kHz mono PCM16 (recognition) and as a WAV file (uploads, detection). */
function pcm(seconds: number): Buffer {
  const n = seconds * 16000;
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 16000) * Math.sin((Math.PI * i) / 8000)), i * 2);
  return b;
}
function wav(data: Buffer): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(16000, 24);
  h.writeUInt32LE(32000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}
const PCM = pcm(3);
const WAV = wav(PCM);

type Family = string;
const stats = new Map<Family, { ok: number; failed: number; example: string }>();
function record(family: Family, ok: boolean, why = '') {
  const s = stats.get(family) ?? { ok: 0, failed: 0, example: '' };
  if (ok) s.ok += 1;
  else {
    s.failed += 1;
    s.example ||= why.slice(0, 160);
  }
  stats.set(family, s);
}

const json = (body: unknown) => ({ 'content-type': 'application/json', body: JSON.stringify(body) });
async function post(url: string, headers: Record<string, string>, body: unknown) {
  const { body: text, ...h } = json(body);
  const res = await fetch(url, { method: 'POST', headers: { ...headers, ...h }, body: text, signal: AbortSignal.timeout(TIMEOUT_MS) });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}
const envelopeOk = (r: { status: number; body: any }) => r.status === 200 && r.body?.succeed === true;

/** Reads a streamed body; with `abandon`, stops after the first chunk and drops the connection. */
async function stream(url: string, headers: Record<string, string>, body: unknown, abandon: boolean): Promise<boolean> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error(`no end within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  timer.unref();
  const res = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: ac.signal });
  if (res.status !== 200 || !res.body) return false;
  const reader = res.body.getReader();
  const first = await reader.read();
  if (abandon) {
    ac.abort();
    return !first.done;
  }
  while (!(await reader.read()).done);
  return true;
}

function socket(path: string, key: string, first: unknown, after: (ws: WebSocket) => void, abandon: boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${urls.platform.replace('http', 'ws')}${path}?api_key=${key}`);
    const t = setTimeout(() => (ws.terminate(), resolve(false)), TIMEOUT_MS);
    let events = 0;
    ws.on('open', () => {
      ws.send(JSON.stringify(first));
      after(ws);
    });
    ws.on('message', () => {
      events += 1;
      if (abandon && events === 2) ws.terminate();
    });
    ws.on('close', (code) => {
      clearTimeout(t);
      resolve(abandon ? events > 0 : code === 1000);
    });
    ws.on('error', () => undefined);
  });
}

/** The speech WebSocket: task_start, one text, task_finish; with `abandon`, cut at the first audio event. */
function speechSocket(key: string, abandon: boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${urls.speech.replace('http', 'ws')}/ws/v1/t2a_v2`, { headers: { authorization: `Bearer ${key}` } });
    const t = setTimeout(() => (ws.terminate(), resolve(false)), TIMEOUT_MS);
    let finished = false;
    ws.on('open', () => {
      ws.send(JSON.stringify({ event: 'task_start', model: 'speech-2.8-turbo', voice_setting: { voice_id: 'male-qn-qingse' } }));
      ws.send(JSON.stringify({ event: 'task_continue', text: TEXT }));
      ws.send(JSON.stringify({ event: 'task_finish' }));
    });
    ws.on('message', (data) => {
      const e = JSON.parse(String(data)) as { event?: string; data?: { audio?: string } };
      if (abandon && e.data?.audio) ws.terminate();
      if (e.event === 'task_finished') finished = true;
    });
    ws.on('close', () => {
      clearTimeout(t);
      resolve(abandon || finished);
    });
    ws.on('error', () => undefined);
  });
}

/** Media and archive bombs (docs/robustness.md, media and archive bounds): each answered at once, or refused. */
const LONG_FLAC = silentFlac(36000); // 600 KB of 10 h: diarization refuses it by duration
const LYING_FLAC = silentFlac(36000, 60); // declares 60 s, holds 10 h: read no further than declared
const ADPCM = adpcmWav(190); // 1.5 MB IMA ADPCM
const MANY_FILES = storedZip(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}.txt`, 'Hi.'])));

async function uploadPlatform(key: string, name: string, bytes: Buffer): Promise<string | null> {
  const form = new FormData();
  form.append('scene', 'audio');
  form.append('file', new Blob([bytes]), name);
  const up = (await (await fetch(`${urls.platform}/v1/files/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form })).json()) as any;
  return up.succeed ? up.data.object_key : null;
}

/** A body that stops after its first bytes: the listener answers 408 when the body timeout passes. */
function stalledBody(key: string): Promise<boolean> {
  const { hostname, port } = new URL(urls.platform);
  return new Promise((resolve) => {
    const sock = connect(Number(port), hostname);
    let answer = '';
    const t = setTimeout(() => (sock.destroy(), resolve(false)), TIMEOUT_MS);
    sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    sock.on('close', () => {
      clearTimeout(t);
      resolve(/^HTTP\/1\.1 408/.test(answer));
    });
    sock.on('error', () => undefined);
    sock.write(`POST /v1/audio/ai-detect HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"audio`);
  });
}

/** A conversation socket that never sends anything: left open for the idle rule (120 s) to close. */
function idleSocket(key: string): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${urls.platform.replace('http', 'ws')}/api/v1/audio/conversation/stream?api_key=${key}`);
    ws.on('open', () => resolve(true));
    ws.on('error', () => resolve(false));
  });
}

const TEXT = 'The quick brown fox jumps over the lazy dog. It was a bright cold day in April.';
const uuid = () => crypto.randomUUID();

/** One operation of a family; resolves ok or not (a thrown error counts as failed). */
const FAMILIES: Record<Family, (key: string, n: number) => Promise<boolean>> = {
  't2a json': async (key) => {
    const r = await post(
      `${urls.speech}/v1/t2a_v2`,
      { authorization: `Bearer ${key}` },
      { model: 'speech-02-hd', text: TEXT, voice_setting: { voice_id: 'male-qn-qingse' } },
    );
    return r.body?.base_resp?.status_code === 0;
  },
  't2a stream': (key, n) =>
    stream(
      `${urls.speech}/v1/t2a_v2`,
      { authorization: `Bearer ${key}` },
      { model: 'speech-02-hd', text: TEXT.repeat(3), stream: true, voice_setting: { voice_id: 'male-qn-qingse' } },
      n % 2 === 0,
    ),
  'platform tts': async (key) =>
    (await fetch(`${urls.platform}/v1/text-to-speech`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ voice_id: 'female_warm', generate_text: TEXT }),
    }).then(async (r) => (await r.arrayBuffer(), r.status))) === 200,
  'platform tts stream': (key, n) =>
    stream(`${urls.platform}/v1/text-to-speech/stream`, { 'x-api-key': key }, { voice_id: 'female_warm', generate_text: TEXT }, n % 2 === 0),
  upload: async (key) => {
    const form = new FormData();
    form.append('scene', 'audio');
    form.append('file', new Blob([WAV]), 'tone.wav');
    const r = await fetch(`${urls.platform}/v1/files/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    return ((await r.json()) as any).succeed === true;
  },
  voices: async (key, n) => {
    const form = new FormData();
    form.append('scene', 'audio');
    form.append('file', new Blob([WAV]), 'ref.wav');
    const up = (await (await fetch(`${urls.platform}/v1/files/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form })).json()) as any;
    if (!up.succeed) return false;
    const h = { 'x-api-key': key };
    const id = `soak_${n % 5}`;
    const ok = envelopeOk(await post(`${urls.platform}/v1/voice/save`, h, { voice_id: id, ref_audio: up.data.object_key, ref_text: 'a tone' }));
    const list = await fetch(`${urls.platform}/v1/voice/list`, { headers: h }).then((r) => r.json() as any);
    const del = await fetch(`${urls.platform}/v1/voice/${id}`, { method: 'DELETE', headers: h }).then((r) => r.json() as any);
    return ok && list.succeed && del.succeed;
  },
  recognition: async (key) => {
    const r = await post(`${urls.platform}/v1/speech-to-text`, { 'x-api-key': key }, { audio_data: PCM.toString('base64') });
    return r.status === 200 && typeof r.body?.text === 'string';
  },
  detection: async (key) => {
    const form = new FormData();
    form.append('audio', new Blob([WAV]), 'clip.wav');
    const r = await fetch(`${urls.platform}/v1/audio/ai-detect`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    return ((await r.json()) as any).succeed === true;
  },
  calls: async (key) => {
    const h = { 'x-api-key': key };
    const start = await post(`${urls.platform}/v1/audio/assistant/start`, h, { client_nonce: uuid() });
    if (!envelopeOk(start)) return false;
    const id = start.body.data.session_id;
    const beat = await post(`${urls.platform}/v1/audio/assistant/heartbeat`, h, { session_id: id });
    const stop = await post(`${urls.platform}/v1/audio/assistant/stop`, h, { session_id: id });
    return envelopeOk(beat) && envelopeOk(stop);
  },
  'conversation socket': (key, n) =>
    socket('/api/v1/audio/conversation/stream-text', key, { voice_id: 'default', text_input: 'Hello there, how are you?' }, () => undefined, n % 2 === 0),
  'speech socket': (key, n) => speechSocket(key, n % 2 === 0),
  'stalled body': (key) => stalledBody(key),
  'idle socket': (key) => idleSocket(key),
  'many keys': async (_key, n) =>
    (await fetch(`${urls.platform}/v1/voice/list`, { headers: { 'x-api-key': `soak-throwaway-${n}-${uuid()}` } }).then((r) => r.json() as any)).succeed ===
    true,
  'recognition socket': (key, n) =>
    socket(
      '/v1/speech-to-text/stream',
      key,
      { meta: { audio_format: 'pcm16', language: 'en' } },
      (ws) => {
        for (let i = 0; i < PCM.length; i += 6400) ws.send(PCM.subarray(i, i + 6400));
        if (n % 2 === 1) ws.send(JSON.stringify({ is_final: true }));
      },
      n % 2 === 0,
    ),
};
Object.assign(FAMILIES, {
  'media bombs': async (key: string, n: number) => {
    const objectKey = await uploadPlatform(key, 'bomb.flac', n % 2 ? LYING_FLAC : LONG_FLAC);
    if (!objectKey) return false;
    const r = await post(`${urls.platform}/v1/diarize`, { 'x-api-key': key }, { object_key: objectKey });
    return r.status === 200 && r.body?.error_code === (n % 2 ? 0 : 10001);
  },
  adpcm: async (key: string) => {
    const form = new FormData();
    form.append('audio', new Blob([ADPCM]), 'adpcm.wav');
    const r = await fetch(`${urls.platform}/v1/audio/ai-detect`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    return ((await r.json()) as any).succeed === true;
  },
  'url long': async (key: string) => {
    const body = {
      model: 'speech-02-hd',
      text: `a${'<#99.99#>a'.repeat(3)}`, // 5 min of 44.1 kHz stereo WAV, streamed to disk
      output_format: 'url',
      voice_setting: { voice_id: 'male-qn-qingse' },
      audio_setting: { format: 'wav', sample_rate: 44100, channel: 2 },
    };
    const r = await post(`${urls.speech}/v1/t2a_v2`, { authorization: `Bearer ${key}` }, body);
    return r.body?.base_resp?.status_code === 0 && String(r.body?.data?.audio).startsWith('http');
  },
  // A client that stops reading: the server holds at most about 1 MiB for it, then closes the socket.
  'non-reading socket': (key: string) => nonReadingSocket(`${key}-stall`),
  // A backtracking pattern among the reply rules (last, matching only a's): linear time, the listeners stay free.
  pattern: async (key: string) => {
    const rules = (await fetch(`${urls.platform}/_emulator/fixtures/conversation.json`).then((r) => r.json())) as any;
    const content = rules.content;
    if (!content.rules.some((r: any) => r.match === BACKTRACKING)) {
      content.rules.push({ match: BACKTRACKING, reply: 'only a', language: 'en' });
      // A JSON content type: the control plane refuses a body a web page could send on its own.
      const put = await fetch(`${urls.platform}/_emulator/fixtures/conversation.json`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(content),
      });
      if (put.status !== 200) return false;
    }
    const started = Date.now();
    const reply = await textTurn(key, `${'a'.repeat(40)}!`);
    return reply !== null && Date.now() - started < TIMEOUT_MS;
  },
  // A batch over the bound is one JSON-RPC error; nothing in it runs or is charged.
  'mcp batch': async (key: string) => {
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'voice_list', arguments: { apiKey: key } } });
    const over = await post(
      `${urls.platform}/mcp`,
      {},
      Array.from({ length: 21 }, (_, i) => call(i)),
    );
    const small = await post(`${urls.platform}/mcp`, {}, [call(1), call(2)]);
    return over.body?.error?.code === -32600 && over.body.id === null && Array.isArray(small.body) && small.body.length === 2;
  },
  'archive caps': async (key: string) => {
    const form = new FormData();
    form.append('purpose', 't2a_async_input');
    form.append('file', new Blob([MANY_FILES]), 'many.zip');
    const up = (await (
      await fetch(`${urls.speech}/v1/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
    ).json()) as any;
    if (up.base_resp?.status_code !== 0) return false;
    const body = { model: 'speech-02-hd', text_file_id: up.file.file_id, voice_setting: { voice_id: 'male-qn-qingse' } };
    const r = await post(`${urls.speech}/v1/t2a_async_v2`, { authorization: `Bearer ${key}` }, body);
    return r.body?.base_resp?.status_code === 2013 && /limit of 1000 files per task/.test(r.body.base_resp.status_msg);
  },
});
const onlyAt = process.argv.indexOf('--only');
const ONLY = onlyAt === -1 ? null : (process.argv[onlyAt + 1] ?? '').split(',').filter(Boolean);
if (ONLY?.length === 0) {
  child.kill();
  throw new Error('--only needs family names, comma-separated');
}
const unknown = ONLY?.filter((name) => !(name in FAMILIES)) ?? [];
if (unknown.length) {
  child.kill();
  throw new Error(`--only: no family ${unknown.join(', ')}; the families are ${Object.keys(FAMILIES).join(', ')}`);
}
const NAMES = ONLY ?? Object.keys(FAMILIES);

/**
 * The speech socket of a client that stops reading: task_start, then its TCP socket paused and a
 * 9,000-character piece every 500 ms. Ok when the server's buffer for it (state view) stayed under
 * 1 MiB and a frame, and the server let the socket go within the stall time and a few seconds.
 */
async function nonReadingSocket(key: string): Promise<boolean> {
  const ws = new WebSocket(`${urls.speech.replace('http', 'ws')}/ws/v1/t2a_v2`, { headers: { authorization: `Bearer ${key}` } });
  await new Promise((resolve, reject) => {
    ws.once('message', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ event: 'task_start', model: 'speech-02-hd', voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'pcm' } }));
  (ws as unknown as { _socket: import('node:net').Socket })._socket.pause();
  const piece = JSON.stringify({ event: 'task_continue', text: TEXT.repeat(120).slice(0, 9000) });
  const label = redactKey(key);
  let max = 0;
  let gone = false;
  try {
    // The kernel's buffers fill first (several MB of PCM): on a loaded machine that takes most of the operation's time.
    for (const until = Date.now() + TIMEOUT_MS; Date.now() < until && !gone;) {
      if (ws.readyState === WebSocket.OPEN) ws.send(piece);
      await new Promise((r) => setTimeout(r, 500));
      const state = (await fetch(`${urls.platform}/_emulator/state?limit=10000`).then((r) => r.json())) as any;
      const open: { buffered_bytes: number }[] = (state.accounts as any[]).find((a) => a.account === label)?.open_websockets ?? [];
      max = Math.max(max, ...open.map((s) => s.buffered_bytes));
      gone = open.length === 0;
    }
  } finally {
    ws.terminate();
  }
  if (!gone) throw new Error(`still open after ${TIMEOUT_MS / 1000} s (server buffer at most ${max} bytes)`);
  if (max > 1024 * 1024 + 64 * 1024) throw new Error(`the server buffered ${max} bytes, over 1 MiB and a frame`);
  return true;
}

const BACKTRACKING = '^(a+)+$';

/** One text turn of the conversation's stream-text socket: the reply text, or null. */
function textTurn(key: string, text: string): Promise<string | null> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${urls.platform.replace('http', 'ws')}/api/v1/audio/conversation/stream-text?api_key=${key}`);
    let reply: string | null = null;
    const timer = setTimeout(() => ws.terminate(), TIMEOUT_MS);
    ws.on('open', () => ws.send(JSON.stringify({ voice_id: 'english_tutor', audio_format: 'pcm16', text_input: text })));
    ws.on('message', (data, binary) => {
      if (binary) return;
      const event = JSON.parse(String(data));
      if (event.type === 'done') reply = event.reply_text;
    });
    ws.on('close', () => (clearTimeout(timer), resolve(reply)));
    ws.on('error', () => undefined);
  });
}

/** RSS over a load: its peak, and the slope of a least-squares line through the second half's samples (minutes, MB). */
function rssSlope(samples: [number, number][]): string {
  const peak = Math.max(...samples.map(([, mb]) => mb));
  const late = samples.slice(Math.floor(samples.length / 2)).filter(([, mb]) => Number.isFinite(mb));
  if (late.length < 3) return `rss peak ${peak} MB (too few samples for a slope)`;
  const mx = late.reduce((n, [t]) => n + t, 0) / late.length;
  const my = late.reduce((n, [, mb]) => n + mb, 0) / late.length;
  const slope = late.reduce((n, [t, mb]) => n + (t - mx) * (mb - my), 0) / late.reduce((n, [t]) => n + (t - mx) ** 2, 0);
  const from = Math.round(late[0]![0] * 60);
  return `rss peak ${peak} MB; after warm-up (from ${from} s, ${late.length} samples): mean ${Math.round(my)} MB, slope ${slope >= 0 ? '+' : ''}${slope.toFixed(2)} MB/min`;
}

let done = 0;
const started = Date.now();
/** heap used / external / array buffers in MB, from the emulator's metrics (control plane). */
async function heapMb(): Promise<string> {
  const text = await fetch(`${urls.platform}/_emulator/metrics`, { signal: AbortSignal.timeout(TIMEOUT_MS) })
    .then((r) => r.text())
    .catch(() => '');
  const mb = (type: string) => {
    const m = new RegExp(`emulator_process_memory_bytes\\{type="${type}"\\} (\\S+)`).exec(text);
    return m ? String(Math.round(Number(m[1]) / 1048576)).padStart(4) : '   ?';
  };
  return `heap ${mb('heap_used')}  external ${mb('external')}  buffers ${mb('array_buffers')}`;
}
/** How many times the emulator gave its memory back once idle (its metrics). */
async function idleReleases(): Promise<number> {
  const text = await fetch(`${urls.platform}/_emulator/metrics`, { signal: AbortSignal.timeout(TIMEOUT_MS) })
    .then((r) => r.text())
    .catch(() => '');
  return Number(/^emulator_idle_memory_releases_total (\S+)$/m.exec(text)?.[1] ?? 0);
}
const line = async (label: string) => {
  const failed = [...stats.values()].reduce((n, s) => n + s.failed, 0);
  console.log(
    `${label.padEnd(16)} rss ${String(rssMb()).padStart(5)} MB  ${await heapMb()}   operations ${String(done).padStart(7)}   failed ${failed}   warn/error log lines ${errorLines}`,
  );
};
console.log(`soak: ${CLIENTS} clients for ${MINUTES} min against ${urls.speech} and ${urls.platform}`);
await line('start');
for (let round = 1; round <= ROUNDS; round++) {
  const deadline = Date.now() + MINUTES * 60_000;
  const ticker = setInterval(() => void line(`t+${Math.round((Date.now() - started) / 1000)}s`), EVERY_S * 1000);
  const roundStart = Date.now();
  const releasesBefore = await idleReleases();
  const samples: [number, number][] = [];
  const sampler = setInterval(() => samples.push([(Date.now() - roundStart) / 60_000, rssMb()]), 1000);
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const key = `soak-client-${c}`;
      for (let n = c; Date.now() < deadline; n++) {
        const family = NAMES[n % NAMES.length]!;
        try {
          record(family, await FAMILIES[family]!(key, n));
        } catch (err) {
          record(family, false, (err as Error).message);
        }
        done += 1;
      }
    }),
  );
  clearInterval(ticker);
  clearInterval(sampler);
  await line(`after load ${round}`);
  console.log(rssSlope(samples));
  const kept = await fetch(`${urls.platform}/_emulator/state?limit=1`)
    .then((r) => r.json() as any)
    .catch(() => null);
  console.log(`accounts kept ${kept?.totals?.accounts ?? '?'} (throwaway keys are forgotten a minute after their request)`);
  await fetch(`${urls.platform}/_emulator/reset`, { method: 'POST' });
  await line(`after reset ${round}`);
  // The emulator gives its memory back once the last socket has closed and IDLE_RELEASE_MS have passed.
  const waitUntil = Date.now() + TIMEOUT_MS;
  while ((await idleReleases()) === releasesBefore && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 500));
  await line((await idleReleases()) > releasesBefore ? `after idle ${round}` : `no release ${round}`);
}

console.log('\nfamily                 ok   failed  example');
for (const [family, s] of [...stats].sort()) console.log(`${family.padEnd(20)} ${String(s.ok).padStart(6)} ${String(s.failed).padStart(7)}  ${s.example}`);
console.log('\nemulator warn/error lines by message');
for (const [msg, n] of [...byMessage].sort((a, b) => b[1] - a[1])) console.log(`${String(n).padStart(7)}  ${msg}  ${exampleOf.get(msg) ?? ''}`);
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
process.exit(0);
