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
 * request's arrival) shows which side an error comes from. Runnable alone: npx tsx bench/pacing.ts
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { startEmulator } from '../src/index.js';

const STREAMS = 50;
const AT_ONCE = 5;
const TTFA_MS = 200;
const RTF = 1;
const TEXT = 'The quick brown fox jumps over the lazy dog while seven calm voices read the morning news aloud.';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const worst = (xs: number[]) => xs.reduce((m, x) => (Math.abs(x) > Math.abs(m) ? x : m), 0);
const round = (x: number) => Math.round(x * 10) / 10;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * The client's process: `streams` paced streams, `atOnce` at a time (plus one warm-up round), each
 * reported as { ttfa: ms from writing the request to the first body byte, rtf: delivered factor }.
 */
const CLIENT = `
import http from 'node:http';
const [url, body, fault, streams, atOnce] = process.argv.slice(1);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(atOnce) });
function stream(key) {
  return new Promise((resolve, reject) => {
    let sentAt = 0, firstByte = 0, text = '', firstEvent = 0, lastEvent = 0, msBeforeLast = 0, lastMs = 0;
    const req = http.request(url, { method: 'POST', agent, headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json', 'x-emulator-fault': fault } }, (res) => {
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
const runs = [];
for (let i = -Number(atOnce); i < Number(streams); i += Number(atOnce)) {
  const round = await Promise.all(Array.from({ length: Number(atOnce) }, (_, k) => stream('pace-' + (i + k))));
  if (i >= 0) runs.push(...round);
}
process.stdout.write(JSON.stringify(runs));
process.exit(0);
`;

function client(url: string, body: unknown, fault: string): Promise<{ ttfa: number; rtf: number }[]> {
  return new Promise((resolve, reject) => {
    const args = ['--input-type=module', '-e', CLIENT, url, JSON.stringify(body), fault, String(STREAMS), String(AT_ONCE)];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`bench client exited with ${code}`))));
  });
}

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
  const loadBefore = load();
  try {
    const body = {
      model: 'speech-02-turbo',
      text: TEXT,
      stream: true,
      voice_setting: { voice_id: 'male-qn-qingse' },
      audio_setting: { format: 'pcm', sample_rate: 16000 },
    };
    const runs = await client(`${emu.speechUrl}/v1/t2a_v2`, body, `ttfa_ms=${TTFA_MS};rtf=${RTF}`);
    const errors = runs.map((r) => r.ttfa - TTFA_MS);
    const rtfErrors = runs.map((r) => (r.rtf / RTF - 1) * 100);
    const server = (await serverFirstAudio(emu.platformUrl)).map((ms) => ms - TTFA_MS);
    return {
      streams: runs.length,
      asked: `ttfa_ms=${TTFA_MS} rtf=${RTF}`,
      first_audio_error_ms: { median: round(median(errors)), worst: round(worst(errors)), goal: 'within 10 ms' },
      server_first_audio_error_ms: { median: median(server), worst: worst(server), note: 'the journal note, whole ms after the request arrived' },
      delivered_rtf_error_percent: { median: round(median(rtfErrors)), worst: round(worst(rtfErrors)), goal: 'within 2 %' },
      load_average: { before: loadBefore, after: load() },
    };
  } finally {
    await emu.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await benchPacing(), null, 2));
