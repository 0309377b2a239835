/**
 * The speech service over real HTTP: time to the first SSE event and to the end of the stream for a
 * 9,999-character text, and a non-streaming request per format. Runnable alone: npx tsx bench/speech.ts
 */
import { startEmulator } from '../src/index.js';

const SENTENCE = 'The quick brown fox jumps over the lazy dog, and then it rests. ';

export async function benchSpeech(): Promise<Record<string, unknown>> {
  const emu = await startEmulator({ seed: 'bench', logLevel: 'silent' });
  const url = `${emu.speechUrl}/v1/t2a_v2`;
  const headers = { Authorization: 'Bearer bench-key', 'Content-Type': 'application/json' };
  const text = SENTENCE.repeat(Math.ceil(9999 / SENTENCE.length)).slice(0, 9999);
  const out: Record<string, unknown> = {};
  try {
    for (const format of ['mp3', 'pcm'] as const) {
      const t0 = performance.now();
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          model: 'speech-02-turbo',
          text,
          stream: true,
          voice_setting: { voice_id: 'male-qn-qingse' },
          audio_setting: { format, sample_rate: 32000 },
          stream_options: { exclude_aggregated_audio: true },
        }),
      });
      const reader = res.body!.getReader();
      let first = -1;
      let bytes = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (first < 0) first = performance.now() - t0;
        bytes += value.length;
      }
      const total = performance.now() - t0;
      out[`stream ${format} 9,999 chars`] = { first_event_ms: Math.round(first), total_ms: Math.round(total), body_mb: +(bytes / 1048576).toFixed(1) };
    }
    const sixty = SENTENCE.repeat(14); // about 60 s of speech at 14 characters a second
    for (const format of ['mp3', 'wav', 'flac', 'pcm'] as const) {
      const t0 = performance.now();
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          model: 'speech-02-hd',
          text: sixty,
          voice_setting: { voice_id: 'female-shaonv' },
          audio_setting: { format, sample_rate: 32000 },
        }),
      });
      const body = (await res.json()) as { extra_info: { audio_length: number } };
      const ms = performance.now() - t0;
      out[`non-streaming ${format}`] = {
        audio_s: +(body.extra_info.audio_length / 1000).toFixed(1),
        wall_ms: Math.round(ms),
        real_time_factor: +(body.extra_info.audio_length / ms).toFixed(1),
      };
    }
  } finally {
    await emu.close();
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await benchSpeech());
