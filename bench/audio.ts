/**
 * Audio engine benchmark (not a test): for 60 s of audio per format, synthesis + encoding
 * real-time factor; for a 9,999-character text, time to the first stream chunk per format;
 * the worst event-loop stall seen meanwhile, and peak RSS.
 * Run alone: `npx tsx bench/audio.ts`.
 */
import { encodeAudio, encodeAudioStream, synthesize, synthesizeStream, type AudioFormat, type SynthInput } from '../src/audio/index.js';
import { benchText, timeSynthesis } from './synthesis.js';

/** The text of about `chars` characters this benchmark reads. */
const text = (chars: number) => benchText(chars, 12345);

function watchLoop() {
  let last = performance.now();
  let worst = 0;
  const t = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  return () => {
    clearInterval(t);
    return Math.round(worst);
  };
}

export async function benchAudio(): Promise<Record<string, unknown>> {
  const voices = [{ id: 'male-qn-qingse', weight: 1 }];
  // ~14 chars/s plus pauses: find a text length giving 60 s of audio.
  let chars = 760;
  const base = (t: string, sampleRate: number, channels: 1 | 2): SynthInput => ({ text: t, voices, sampleRate, channels });
  for (let k = 0; k < 4; k++) {
    const d = synthesizeStream(base(text(chars), 32000, 1)).durationMs;
    chars = Math.round((chars * 60_000) / d);
  }
  const sixty = text(chars);
  const shapes: { label: string; sampleRate: number; channels: 1 | 2; bitrate: number }[] = [
    { label: '32 kHz mono', sampleRate: 32000, channels: 1, bitrate: 128000 },
    { label: '44.1 kHz stereo', sampleRate: 44100, channels: 2, bitrate: 256000 },
  ];
  const formats: AudioFormat[] = ['mp3', 'wav', 'flac', 'pcm'];
  const realTime: Record<string, unknown> = {};
  const stall = watchLoop();
  for (const s of shapes) {
    const t0 = performance.now();
    const pcm = await synthesize(base(sixty, s.sampleRate, s.channels));
    const synthMs = performance.now() - t0;
    const row: Record<string, unknown> = { audioSeconds: +(pcm.durationMs / 1000).toFixed(1), synthesisOnly: `${Math.round(pcm.durationMs / synthMs)}x` };
    for (const f of formats) {
      const t = await timeSynthesis(async () => {
        const r = await synthesize(base(sixty, s.sampleRate, s.channels));
        await encodeAudio(f, r, { sampleRate: s.sampleRate, channels: s.channels, bitrate: s.bitrate });
        return r.durationMs;
      });
      // wall-clock factor, and the factor per CPU second (robust when the machine is shared)
      row[f] = `${Math.round(t.audioMs / t.wallMs)}x wall, ${Math.round(t.audioMs / t.cpuMs)}x cpu`;
    }
    realTime[s.label] = row;
  }
  const long = text(9999);
  const firstChunk: Record<string, string> = {};
  for (const f of formats) {
    const ctl = new AbortController();
    const t0 = performance.now();
    const stream = encodeAudioStream(f, synthesizeStream(base(long, 32000, 1), { signal: ctl.signal }), { sampleRate: 32000, channels: 1, bitrate: 128000 });
    for await (const _ of stream) {
      void _;
      firstChunk[f] = `${(performance.now() - t0).toFixed(1)} ms`;
      ctl.abort();
      break;
    }
  }
  const longDuration = synthesizeStream(base(long, 32000, 1)).durationMs;
  return {
    '60 s of audio, synthesis + encode, real-time factor': realTime,
    '9,999-char text': { audioSeconds: Math.round(longDuration / 1000), timeToFirstChunk: firstChunk },
    worstEventLoopStallMs: stall(),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    loadAverage: (await import('node:os')).loadavg().map((l) => +l.toFixed(1)),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchAudio(), null, 2));
}
