/**
 * The cost of `POST /_emulator/speak`: audio seconds made per CPU second of the serving process, for a
 * caller's text of about 40 s at 16 kHz, clean and through each impairment, beside the emulator's own
 * synthesis of the same text as 16 kHz PCM (`/v1/t2a_v2`) measured in the same run (the anchor: speak is a
 * synthesis plus its impairments). Runnable alone: npx tsx bench/speak.ts
 */
import { startEmulator } from '../src/index.js';

const TEXT = 'Hello, I would like to change my booking to next Tuesday morning, if that is still possible. '.repeat(6).trim();
const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round1 = (x: number) => Math.round(x * 10) / 10;

const CASES: [string, Record<string, unknown>][] = [
  ['clean', {}],
  ['noise_db 12', { noise_db: 12 }],
  ['dropouts 8', { dropouts: 8 }],
  ['gain_db -24, clip 12', { gain_db: -24, clip: 12 }],
  ['codec mulaw', { codec: 'mulaw' }],
  ['codec mp3', { codec: 'mp3' }],
];

export async function benchSpeak(): Promise<Record<string, unknown>> {
  const emu = await startEmulator({ logLevel: 'silent', seed: 'bench' });
  try {
    /** Audio seconds per CPU second over ROUNDS calls (each with its own seed, so nothing is reused). */
    const rate = async (call: (i: number) => Promise<number>) => {
      const rates: number[] = [];
      let audioS = 0;
      await call(-1); // warm-up: codecs loaded, code compiled
      for (let i = 0; i < ROUNDS; i++) {
        const cpu = process.cpuUsage();
        audioS = await call(i);
        const used = process.cpuUsage(cpu);
        rates.push(audioS / ((used.user + used.system) / 1e6));
      }
      return { audio_s: round1(audioS), x_real_time_median: Math.round(median(rates)) };
    };
    const anchor = await rate(async (i) => {
      const r = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
        method: 'POST',
        headers: { authorization: 'Bearer bench', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'speech-02-turbo',
          text: `${i}. ${TEXT}`,
          voice_setting: { voice_id: 'male-qn-qingse' },
          audio_setting: { format: 'pcm', sample_rate: 16000 },
        }),
      });
      const answer = (await r.json()) as { extra_info: { audio_length: number } };
      return answer.extra_info.audio_length / 1000;
    });
    const out: Record<string, unknown> = { 't2a pcm 16 kHz (anchor)': anchor };
    for (const [name, impairments] of CASES) {
      const figures = await rate(async (i) => {
        const r = await fetch(`${emu.speechUrl}/_emulator/speak`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: `${i}. ${TEXT}`, format: 'pcm', seed: `bench-${i}`, ...impairments }),
        });
        if (r.status !== 200) throw new Error(`speak answered ${r.status}: ${await r.text()}`);
        await r.arrayBuffer();
        return Number(r.headers.get('x-audio-duration-ms')) / 1000;
      });
      out[`speak ${name}`] = { ...figures, ratio_to_anchor: round1(figures.x_real_time_median / anchor.x_real_time_median) };
    }
    return out;
  } finally {
    await emu.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await benchSpeak(), null, 2));
