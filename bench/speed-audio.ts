/**
 * The audio rows of the speed goals, each beside its anchor measured in the same run (rounds
 * interleaved, medians reported, load average printed because the machine may be shared):
 * - MP3 through HTTP: 60 s of 32 kHz mono 128 kbit/s speech from POST /v1/t2a_v2 (non-streaming),
 *   real-time factor, against @breezystack/lamejs alone encoding the same PCM. Goal >= 3x.
 * - first SSE event for a 9,999-character text: pcm < 20 ms, mp3 < 40 ms (measured by a client
 *   in its own process, so the server's loop is not shared with it).
 * - the longest event-loop stall of the server's process while a long MP3 stream runs (read by
 *   that separate client), against the same measure idle. Goal <= 2 x idle + 20 ms.
 * Runnable alone: npx tsx bench/speed-audio.ts
 */
import { Mp3Encoder } from '@breezystack/lamejs';
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { Agent, fetch } from 'undici';
import { synthesize } from '../src/audio/index.js';
import { startEmulator } from '../src/index.js';

const SENTENCE = 'The quick brown fox jumps over the lazy dog, and then it rests. ';
const ROUNDS = 7;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** Worst gap between 1 ms timer ticks while `work` runs, minus the tick itself. */
async function worstStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const t = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
  }, 1);
  try {
    await work();
  } finally {
    clearInterval(t);
  }
  return worst;
}

/** CPU milliseconds (user + system) of this process since `from`. */
const cpuMs = (from: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1000;
};

function lamejsAlone(pcm: Int16Array): { wall: number; cpu: number } {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const enc = new Mp3Encoder(1, 32000, 128);
  for (let at = 0; at < pcm.length; at += 1152 * 4) enc.encodeBuffer(pcm.subarray(at, at + 1152 * 4));
  enc.flush();
  return { wall: performance.now() - t0, cpu: cpuMs(c0) };
}

/**
 * A client in its own process, so its work does not share the server's event loop: posts `body`,
 * then either reports the ms to the first bytes of the event stream ('first') or reads it all ('drain').
 */
const CLIENT = `
const [url, body, mode] = process.argv.slice(1);
// Node loads its fetch on first use: do that, and open a connection, before the clock starts.
await fetch(new URL('/_emulator/health', url)).then((r) => r.arrayBuffer());
const ac = new AbortController();
const t0 = performance.now();
const res = await fetch(url, { method: 'POST', body, signal: ac.signal, headers: { Authorization: 'Bearer bench-key', 'Content-Type': 'application/json' } });
const reader = res.body.getReader();
await reader.read();
const first = performance.now() - t0;
if (mode === 'drain') for (;;) { const r = await reader.read(); if (r.done) break; }
else ac.abort();
process.stdout.write(String(first));
process.exit(0);
`;

function client(url: string, body: unknown, mode: 'first' | 'drain'): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CLIENT, url, JSON.stringify(body), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`bench client exited with ${code}`))));
  });
}

export async function benchSpeedAudio(): Promise<Record<string, unknown>> {
  const emu = await startEmulator({ seed: 'bench', logLevel: 'silent' });
  const url = `${emu.speechUrl}/v1/t2a_v2`;
  const headers = { Authorization: 'Bearer bench-key', 'Content-Type': 'application/json' };
  // A connection of its own per request: an abandoned stream closes its socket.
  const t2a = (text: string, format: string, stream: boolean, signal?: AbortSignal) =>
    fetch(url, {
      method: 'POST',
      headers,
      signal,
      dispatcher: new Agent({ pipelining: 0 }),
      body: JSON.stringify({
        model: 'speech-02-turbo',
        text,
        stream,
        voice_setting: { voice_id: 'male-qn-qingse' },
        audio_setting: { format, sample_rate: 32000, bitrate: 128000, channel: 1 },
        ...(stream ? { stream_options: { exclude_aggregated_audio: true } } : {}),
      }),
    });
  const streamBody = (text: string, format: string) => ({
    model: 'speech-02-turbo',
    text,
    stream: true,
    voice_setting: { voice_id: 'male-qn-qingse' },
    audio_setting: { format, sample_rate: 32000, bitrate: 128000, channel: 1 },
    stream_options: { exclude_aggregated_audio: true },
  });
  const sixty = SENTENCE.repeat(14); // about 60 s of speech
  const long = SENTENCE.repeat(Math.ceil(9999 / SENTENCE.length)).slice(0, 9999);
  const loadBefore = load();
  try {
    // Warm both paths once (module loading, compiled WebAssembly) so rounds measure steady state.
    await (await t2a(sixty, 'mp3', false)).json();
    const pcm = (await synthesize({ text: sixty, voices: [{ id: 'male-qn-qingse', weight: 1 }], sampleRate: 32000, channels: 1 })).pcm;
    lamejsAlone(pcm);
    for (const format of ['pcm', 'mp3']) await client(url, streamBody(long, format), 'first');

    const http: number[] = [];
    const lame: number[] = [];
    const httpCpu: number[] = [];
    const lameCpu: number[] = [];
    const first: Record<'pcm' | 'mp3', number[]> = { pcm: [], mp3: [] };
    let audioS = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      const body = (await (await t2a(sixty, 'mp3', false)).json()) as { extra_info: { audio_length: number } };
      audioS = body.extra_info.audio_length / 1000;
      http.push(audioS / ((performance.now() - t0) / 1000));
      httpCpu.push(audioS / (cpuMs(c0) / 1000));
      const alone = lamejsAlone(pcm);
      lame.push(pcm.length / 32000 / (alone.wall / 1000));
      lameCpu.push(pcm.length / 32000 / (alone.cpu / 1000));
      for (const format of ['pcm', 'mp3'] as const) first[format].push(await client(url, streamBody(long, format), 'first'));
    }
    await new Promise((r) => setTimeout(r, 200));
    const idle = await worstStall(() => new Promise((r) => setTimeout(r, 2000)));
    const busy = await worstStall(() => client(url, streamBody(long, 'mp3'), 'drain'));
    const ratio = median(http) / median(lame);
    const ratioCpu = median(httpCpu) / median(lameCpu);
    const f = (n: number) => +n.toFixed(1);
    return {
      'load average (1/5/15 min) before, after': [loadBefore, load()],
      [`MP3 through HTTP, ${audioS.toFixed(0)} s of 32 kHz mono 128 kbit/s`]: {
        emulator: `${f(median(http))}x real time`,
        anchor_lamejs_alone: `${f(median(lame))}x real time`,
        ratio: `${ratio.toFixed(2)}x`,
        // per CPU second (client and server share this process): steadier on a shared machine
        per_cpu_second: `${f(median(httpCpu))}x vs ${f(median(lameCpu))}x: ${ratioCpu.toFixed(2)}x`,
        goal: '>= 3x lamejs alone',
        met: ratio >= 3,
      },
      'first SSE event, 9,999 characters': {
        pcm_ms: f(median(first.pcm)),
        pcm_goal: '< 20 ms',
        mp3_ms: f(median(first.mp3)),
        mp3_goal: '< 40 ms',
        met: median(first.pcm) < 20 && median(first.mp3) < 40,
      },
      'longest event-loop stall, 9,999-character MP3 stream': {
        stream_ms: f(busy),
        anchor_idle_ms: f(idle),
        goal: `<= 2 x idle + 20 ms = ${f(2 * idle + 20)} ms`,
        met: busy <= 2 * idle + 20,
      },
    };
  } finally {
    await emu.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await benchSpeedAudio(), null, 2));
