/**
 * The cost of `POST /_emulator/hear`: audio seconds analysed per CPU second (goal >= 50x real time),
 * for about 60 s of the emulator's own speech (eight syntheses one after the other) as PCM and as MP3,
 * measured on the process that serves it (decoding, the signature search, activity and alignment).
 * Runnable alone: npx tsx bench/hear.ts
 */
import { startEmulator } from '../src/index.js';

const TEXT = 'The quick brown fox jumps over the lazy dog, and then it rests for a while. '.repeat(2);
const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchHear(): Promise<Record<string, unknown>> {
  const emu = await startEmulator({ logLevel: 'silent', seed: 'bench' });
  try {
    const made = async (format: string, i: number) => {
      const r = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
        method: 'POST',
        headers: { authorization: 'Bearer bench', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'speech-02-turbo',
          text: `${i}. ${TEXT}`,
          voice_setting: { voice_id: 'male-qn-qingse' },
          audio_setting: { format, sample_rate: 24000 },
        }),
      });
      return Buffer.from(((await r.json()) as { data: { audio: string } }).data.audio, 'hex');
    };
    const out: Record<string, unknown> = {};
    for (const [format, type] of [
      ['pcm', 'audio/pcm;rate=24000'],
      ['mp3', 'audio/mpeg'],
    ] as const) {
      const parts: Buffer[] = [];
      for (let i = 0; i < 8; i++) parts.push(await made(format, i));
      const body = Buffer.concat(parts);
      const rates: number[] = [];
      let audioS = 0;
      let found = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const cpu = process.cpuUsage();
        const r = await fetch(`${emu.speechUrl}/_emulator/hear`, { method: 'POST', headers: { 'content-type': type }, body });
        const answer = (await r.json()) as { duration_ms: number; utterances: unknown[] };
        const used = process.cpuUsage(cpu);
        audioS = answer.duration_ms / 1000;
        found = answer.utterances.length;
        rates.push(audioS / ((used.user + used.system) / 1e6));
      }
      out[format] = {
        audio_s: Math.round(audioS * 10) / 10,
        utterances_found: found,
        x_real_time_median: Math.round(median(rates)),
        x_real_time_worst: Math.round(Math.min(...rates)),
      };
    }
    return out;
  } finally {
    await emu.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await benchHear(), null, 2));
