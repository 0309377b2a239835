/**
 * The accuracy of paced streams (issue 25): over 50 streamed T2A answers paced with `ttfa_ms=200` and
 * `rtf=1`, the error of the first audio's time against 200 ms and the delivered real-time factor against
 * 1, median and worst. Goals: within 10 ms and 2 %.
 *
 * The client runs in its own process (its reading and parsing never share the server's event loop),
 * five streams at a time over kept-alive connections, after a warm-up round that is not counted. Its
 * clock for a stream starts when the request is written; the first audio is the first byte of the
 * answer's body (the first event is the first audio, the headers leave before it). The delivered rate
 * is the audio that left before the last chunk over the time from the first chunk to the last: each
 * chunk leaves once the audio before it would have played, so that ratio is what `rtf` asks. Beside
 * the client's figure, the server's own (the journal note's "first audio after N ms", counted from the
 * request's arrival) shows which side an error comes from.
 *
 * The anchor, measured in the same run by the same client (its rounds alternate with the emulator's):
 * a bare Node HTTP server that answers the same event stream with plain timers (first event TTFA_MS
 * after the request, then one 256 ms chunk every 256 ms). What it shows is the machine's share of the
 * error (scheduling on shared cores, the client's own reading); what the emulator shows beyond it is
 * the emulator's. Runnable alone: npx tsx bench/pacing.ts
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { startEmulator } from '../src/index.js';

const STREAMS = 50;
const AT_ONCE = 5;
const TTFA_MS = 200;
const RTF = 1;
const TEXT = 'The quick brown fox jumps over the lazy dog while seven calm voices read the morning news aloud.';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;
const worst = (xs: number[]) => xs.reduce((m, x) => (Math.abs(x) > Math.abs(m) ? x : m), 0);
const round = (x: number) => Math.round(x * 10) / 10;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * The client's process: `streams` paced streams to each of the two URLs, `atOnce` at a time, rounds
 * alternating between them (plus one warm-up round each), each stream reported as { ttfa: ms from
 * writing the request to the first body byte, rtf: delivered factor }.
 */
const CLIENT = `
import http from 'node:http';
const [emulatorUrl, anchorUrl, body, fault, streams, atOnce] = process.argv.slice(1);
const agents = new Map([emulatorUrl, anchorUrl].map((u) => [u, new http.Agent({ keepAlive: true, maxSockets: Number(atOnce) })]));
function stream(url, key) {
  return new Promise((resolve, reject) => {
    let sentAt = 0, firstByte = 0, text = '', firstEvent = 0, lastEvent = 0, msBeforeLast = 0, lastMs = 0;
    const req = http.request(url, { method: 'POST', agent: agents.get(url), headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json', 'x-emulator-fault': fault } }, (res) => {
      res.setEncoding('latin1');
      res.on('data', (chunk) => {
        const now = performance.now();
        firstByte ||= now;
        text += chunk;
        const events = text.split('\\n\\n');
        text = events.pop();
        for (const e of events) {
          const data = JSON.parse(e.slice(e.indexOf('{'))).data;
          if (data?.status !== 1 || !data.audio) continue;
          firstEvent ||= now;
          msBeforeLast += lastMs;
          lastMs = data.audio.length / 2 / 32; // hex -> bytes -> ms of 16 kHz mono PCM16
          lastEvent = now;
        }
      });
      res.on('end', () => resolve({ ttfa: firstByte - sentAt, rtf: msBeforeLast / (lastEvent - firstEvent) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    // The warm-up round opened the connections: the request is written at once.
    sentAt = performance.now();
    req.end(body);
  });
}
const runs = { emulator: [], anchor: [] };
for (let i = -Number(atOnce); i < Number(streams); i += Number(atOnce)) {
  for (const [name, url] of [['emulator', emulatorUrl], ['anchor', anchorUrl]]) {
    const round = await Promise.all(Array.from({ length: Number(atOnce) }, (_, k) => stream(url, 'pace-' + (i + k))));
    if (i >= 0) runs[name].push(...round);
  }
}
process.stdout.write(JSON.stringify(runs));
process.exit(0);
`;

type Run = { ttfa: number; rtf: number };

function client(url: string, anchorUrl: string, body: unknown, fault: string): Promise<{ emulator: Run[]; anchor: Run[] }> {
  return new Promise((resolve, reject) => {
    const args = ['--input-type=module', '-e', CLIENT, url, anchorUrl, JSON.stringify(body), fault, String(STREAMS), String(AT_ONCE)];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`bench client exited with ${code}`))));
  });
}

const CHUNK_MS = 256;
const CHUNKS = 31;

/** The anchor: the same event stream paced by plain timers from the request's arrival, nothing else. */
async function anchorServer(): Promise<Server> {
  const event = `data: ${JSON.stringify({ data: { status: 1, audio: '00'.repeat(CHUNK_MS * 32) } })}\n\n`;
  const server = createServer((req, res) => {
    const arrived = performance.now();
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    let sent = 0;
    const next = () => {
      res.write(event);
      if (++sent === CHUNKS) return void res.end();
      setTimeout(next, arrived + TTFA_MS + sent * CHUNK_MS - performance.now());
    };
    setTimeout(next, TTFA_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const figures = (runs: Run[]) => {
  const errors = runs.map((r) => r.ttfa - TTFA_MS);
  const rtfErrors = runs.map((r) => (r.rtf / RTF - 1) * 100);
  return {
    first_audio_error_ms: { median: round(median(errors)), p90: round(p90(errors)), worst: round(worst(errors)) },
    delivered_rtf_error_percent: { median: round(median(rtfErrors)), worst: round(worst(rtfErrors)) },
  };
};

/** The server's own first-audio delays (ms after the request arrived), from the paced entries' notes. */
async function serverFirstAudio(platformUrl: string): Promise<number[]> {
  const res = await fetch(`${platformUrl}/_emulator/journal?path=/v1/t2a_v2&limit=${STREAMS}`);
  const { entries } = (await res.json()) as { entries: { note?: string }[] };
  return entries.flatMap((e) => {
    const m = /first audio after (\d+) ms/.exec(e.note ?? '');
    return m ? [Number(m[1])] : [];
  });
}

export async function benchPacing(): Promise<Record<string, unknown>> {
  const emu = await startEmulator({ logLevel: 'silent', seed: 'bench' });
  const anchor = await anchorServer();
  const anchorUrl = `http://127.0.0.1:${(anchor.address() as AddressInfo).port}/`;
  const loadBefore = load();
  try {
    const body = {
      model: 'speech-02-turbo',
      text: TEXT,
      stream: true,
      voice_setting: { voice_id: 'male-qn-qingse' },
      audio_setting: { format: 'pcm', sample_rate: 16000 },
    };
    const runs = await client(`${emu.speechUrl}/v1/t2a_v2`, anchorUrl, body, `ttfa_ms=${TTFA_MS};rtf=${RTF}`);
    const server = (await serverFirstAudio(emu.platformUrl)).map((ms) => ms - TTFA_MS);
    return {
      streams: runs.emulator.length,
      asked: `ttfa_ms=${TTFA_MS} rtf=${RTF}`,
      goals: 'first audio within 10 ms, delivered rate within 2 %',
      emulator: figures(runs.emulator),
      emulator_own_first_audio_error_ms: { median: median(server), worst: worst(server), note: 'the journal note: whole ms after the request was read' },
      anchor: { ...figures(runs.anchor), note: 'bare Node HTTP server, plain timers, same client, same run' },
      load_average: { before: loadBefore, after: load() },
    };
  } finally {
    anchor.close();
    await emu.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await benchPacing(), null, 2));
