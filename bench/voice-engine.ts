/**
 * The two voice engines side by side (not a test), in one run so the busy machine weighs on both alike:
 * synthesis speed as real-time factor (audio seconds per second of this process's CPU time, one core)
 * for each built-in Flite voice the speech engine maps ids to, and the first audio of a streamed
 * 9,999-character T2A request (time from the request to its first SSE audio event), also when its first
 * sentence runs 2,000 characters (commas only), or its first word does.
 * Run alone: `npx tsx bench/run.ts voice-engine`.
 */
import { startEmulator } from '../src/index.js';
import { loadSpeechEngine, synthesize, type VoiceEngine } from '../src/audio/index.js';
import { benchText, timeSynthesis } from './synthesis.js';

/** The text of about `chars` characters this benchmark reads. */
const text = (chars: number) => benchText(chars, 4242);

const LONG_FIRST = 'the stream goes on without a full stop, and on, ';

/** Audio seconds per CPU second of one synthesis (24 kHz mono, the best of `runs`). */
async function realTime(engine: VoiceEngine, voice: string, t: string, runs = 3): Promise<{ audioS: number; rtf: number }> {
  let best = 0;
  let audioS = 0;
  for (let k = 0; k < runs; k++) {
    const run = await timeSynthesis(
      async () =>
        (
          await synthesize({
            text: t,
            voices: [{ id: voice, weight: 1 }],
            sampleRate: 24000,
            channels: 1,
            engine,
            textNormalization: true,
            pauseMarkers: true,
          })
        ).durationMs,
    );
    audioS = run.audioMs / 1000;
    best = Math.max(best, run.audioMs / run.cpuMs);
  }
  return { audioS: Math.round(audioS * 10) / 10, rtf: Math.round(best) };
}

/** Milliseconds from a streamed T2A request to its first audio event. */
async function firstAudio(url: string, t: string): Promise<{ wallMs: number; cpuMs: number }> {
  const start = performance.now();
  const cpu = process.cpuUsage();
  const res = await fetch(`${url}/v1/t2a_v2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench-key' },
    body: JSON.stringify({
      model: 'speech-02-turbo',
      text: t,
      stream: true,
      voice_setting: { voice_id: 'male-qn-qingse' },
      audio_setting: { format: 'mp3', sample_rate: 32000 },
    }),
  });
  const reader = res.body!.getReader();
  let seen = '';
  let at = -1;
  let cpuAt = -1;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += new TextDecoder().decode(value);
    if (at < 0 && /"audio":"[0-9a-f]/.test(seen)) {
      at = performance.now() - start;
      const used = process.cpuUsage(cpu);
      cpuAt = (used.user + used.system) / 1000;
    }
    if (at >= 0) {
      await reader.cancel();
      break;
    }
    if (seen.length > 1e6) seen = seen.slice(-1000);
  }
  return { wallMs: Math.round(at), cpuMs: Math.round(cpuAt) };
}

export async function benchVoiceEngine(): Promise<Record<string, unknown>> {
  await loadSpeechEngine();
  const minute = text(900);
  // The Flite voice each id maps to: kal16 (diphone), slt, rms and awb (clustergen).
  const voices = {
    'male-qn-qingse (rms)': 'male-qn-qingse',
    'female-shaonv (slt)': 'female-shaonv',
    'presenter_male (awb)': 'presenter_male',
    'd (kal16)': 'd',
  };
  const speed: Record<string, unknown> = { tones: await realTime('tones', 'male-qn-qingse', minute) };
  for (const [label, id] of Object.entries(voices)) speed[`speech ${label}`] = await realTime('speech', id, minute);
  const long = text(9999);
  // The same length, its first sentence 2,000 characters with commas only: the first audio must not wait for it.
  const longFirst = (LONG_FIRST.repeat(60).slice(0, 2000).trimEnd() + '. ' + text(8000)).slice(0, 9999);
  // …and when it opens with one unbroken 2,000-character word (no space, nothing to cut it at).
  const longWord = ('supercalifragilistic'.repeat(100) + '. ' + text(8000)).slice(0, 9999);
  const first: Record<string, { wallMs: number; cpuMs: number }[]> = {};
  for (const engine of ['tones', 'speech'] as const) {
    const emu = await startEmulator({ voiceEngine: engine, logLevel: 'silent' });
    try {
      for (const [label, t] of [
        [engine, long],
        [`${engine}, first sentence 2,000 characters`, longFirst],
        [`${engine}, first word 2,000 characters`, longWord],
      ] as const) {
        first[label] = [];
        for (let k = 0; k < 3; k++) first[label].push(await firstAudio(emu.speechUrl, t));
      }
    } finally {
      await emu.close();
    }
  }
  return {
    'real-time factor, 24 kHz mono, one core (audio s per CPU s, best of 3)': speed,
    // CPU time of this process (server and client) from the request to the first audio: what a loaded machine does not inflate.
    'first audio of a streamed 9,999-character T2A (ms of wall and of CPU, 3 runs)': first,
  };
}
