/**
 * Accepted decodes near the caps (docs/robustness.md, media and archive bounds): the largest input each
 * rule accepts, in each format it reads (PCM16 WAV, IMA ADPCM WAV, MP3, FLAC; detection and cloning take WAV and MP3), sent to detection,
 * diarization, recognition (platform and speech), `/_emulator/hear` and voice cloning (mp3 and wav only, as the upload allows). For each: the CPU time of the
 * answer (the emulator runs in this process; the client's part is a single request), the input's audio
 * seconds per CPU second, the wall time, and the longest event-loop stall while the rule ran (how long
 * other clients waited at worst). Uploads are made before and not counted. Inputs are made once by
 * ffmpeg (tone and noise) or in process. Runnable alone: npx tsx bench/decode-caps.ts
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { wavHeader } from '../src/audio/encode/pcm.js';
import { startEmulator } from '../src/index.js';
import { adpcmWav, ffmpegAudio } from '../test/helpers/hostile-inputs.js';

const MB = 1_000_000;

/** 16-bit mono PCM of a tone with a little noise, at `rate`, of `seconds` (cheap to make, not silence). */
function pcm(seconds: number, rate: number): Buffer {
  const n = Math.floor(seconds * rate);
  const b = Buffer.alloc(n * 2);
  let seed = 1;
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    b.writeInt16LE(Math.round(5000 * Math.sin((2 * Math.PI * 220 * i) / rate) + (seed % 800) - 400), i * 2);
  }
  return b;
}
function wav(data: Buffer, rate: number): Buffer {
  return Buffer.concat([wavHeader(rate, 1, data.length), data]);
}

/** MP3 of noise at 32 kbps (16 kHz mono), repeated to `seconds`: frames concatenate into one longer stream. */
function mp3(seconds: number): Buffer {
  const piece = ffmpegAudio('anoisesrc=a=0.1:r=16000', 600, ['-ac', '1', '-ar', '16000', '-b:a', '32k', '-write_xing', '0', '-id3v2_version', '0'], 'mp3');
  const copies = Math.ceil(seconds / 600);
  const whole = Buffer.concat(Array.from({ length: copies }, () => piece));
  // Cut at a frame boundary near the wanted length (32 kbps: 4000 bytes a second).
  return whole.subarray(0, Math.min(whole.length, seconds * 4000));
}
const flac = (seconds: number) => ffmpegAudio('sine=frequency=300:sample_rate=16000', seconds, ['-ac', '1', '-ar', '16000', '-sample_fmt', 's16'], 'flac');

interface Case {
  rule: string;
  format: string;
  seconds: number;
  bytes: Buffer;
}

export async function benchDecodeCaps(): Promise<Record<string, unknown>> {
  const emu = await startEmulator({ logLevel: 'silent', seed: 'bench', globalLimits: 'off' } as Parameters<typeof startEmulator>[0]);
  const key = 'bench-decode';
  const post = async (base: string, path: string, headers: Record<string, string>, body: string | FormData | Blob) => {
    const r = await fetch(`${base}${path}`, { method: 'POST', headers, body });
    return (await r.json()) as any;
  };
  const form = (fields: Record<string, string>, file: string, bytes: Buffer, name: string) => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    f.append(file, new Blob([bytes]), name);
    return f;
  };
  const platform = { 'x-api-key': key };
  const speech = { authorization: `Bearer ${key}` };
  const json = (h: Record<string, string>) => ({ ...h, 'content-type': 'application/json' });
  const uploadPlatform = async (bytes: Buffer, name: string) =>
    (await post(emu.platformUrl, '/v1/files/upload', platform, form({ scene: 'audio' }, 'file', bytes, name))).data.object_key as string;
  const uploadSpeech = async (bytes: Buffer, name: string) => {
    const up = await post(emu.speechUrl, '/v1/files/upload', speech, form({ purpose: 'voice_clone' }, 'file', bytes, name));
    if (!up.file) throw new Error(`upload of ${name} refused: ${JSON.stringify(up.base_resp)}`);
    return up.file.file_id as string;
  };

  // The largest accepted input of each format for each rule (limits in docs/robustness.md).
  const detection: Case[] = [
    { rule: 'detection (50 MB)', format: 'wav pcm16 16 kHz', seconds: 1560, bytes: wav(pcm(1560, 16000), 16000) },
    { rule: 'detection (50 MB)', format: 'wav ima-adpcm 16 kHz', seconds: 6000, bytes: adpcmWav(6000) },
    { rule: 'detection (50 MB)', format: 'mp3 32 kbps', seconds: 12_000, bytes: mp3(12_000) },
  ];
  const diarization: Case[] = [
    { rule: 'diarization (3600 s, 50 MB)', format: 'wav pcm16 8 kHz', seconds: 3100, bytes: wav(pcm(3100, 8000), 8000) },
    { rule: 'diarization (3600 s, 50 MB)', format: 'wav ima-adpcm 16 kHz', seconds: 3590, bytes: adpcmWav(3590) },
    { rule: 'diarization (3600 s, 50 MB)', format: 'mp3 32 kbps', seconds: 3590, bytes: mp3(3590) },
    { rule: 'diarization (3600 s, 50 MB)', format: 'flac 16 kHz', seconds: 3590, bytes: flac(3590) },
  ];
  const stt: Case[] = [
    { rule: 'speech to text (500 s)', format: 'wav pcm16 16 kHz', seconds: 499, bytes: wav(pcm(499, 16000), 16000) },
    { rule: 'speech to text (500 s)', format: 'mp3 32 kbps', seconds: 499, bytes: mp3(499) },
    { rule: 'speech to text (500 s)', format: 'flac 16 kHz', seconds: 499, bytes: flac(499) },
  ];
  const clone: Case[] = [
    { rule: 'voice clone (300 s)', format: 'wav pcm16 16 kHz', seconds: 299, bytes: wav(pcm(299, 16000), 16000) },
    { rule: 'voice clone (300 s)', format: 'wav ima-adpcm 16 kHz', seconds: 299, bytes: adpcmWav(299) },
    { rule: 'voice clone (300 s)', format: 'mp3 32 kbps', seconds: 299, bytes: mp3(299) },
  ];
  const heard: Case = { rule: 'hear (50 MB, 15 min at 48 kHz)', format: 'mp3 32 kbps', seconds: 2700, bytes: mp3(2700) };
  const recognition: Case = { rule: 'recognition (50 MB of PCM16)', format: 'pcm16 16 kHz base64', seconds: 1560, bytes: pcm(1560, 16000) };

  const rows: Record<string, unknown>[] = [];
  /** Runs `call` with the CPU clock and the event-loop delay watched; `ok` says whether the answer accepted the input. */
  const measure = async (c: Case, call: () => Promise<any>, ok: (answer: any) => boolean) => {
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const answer = await call();
    const wallMs = performance.now() - t0;
    const used = process.cpuUsage(cpu);
    stalls.disable();
    const cpuS = (used.user + used.system) / 1e6;
    rows.push({
      rule: c.rule,
      format: c.format,
      input_mb: Math.round((c.bytes.length / MB) * 10) / 10,
      audio_s: c.seconds,
      accepted: ok(answer),
      cpu_s: Math.round(cpuS * 100) / 100,
      wall_s: Math.round(wallMs / 10) / 100,
      audio_s_per_cpu_s: Math.round(c.seconds / cpuS),
      longest_stall_ms: Math.round(stalls.max / 1e6),
      ...(ok(answer) ? {} : { answer: JSON.stringify(answer).slice(0, 160) }),
    });
  };
  try {
    for (const c of detection)
      await measure(
        c,
        () => post(emu.platformUrl, '/v1/audio/ai-detect', platform, form({}, 'audio', c.bytes, `in.${c.format.split(' ')[0]}`)),
        (a) => a.succeed === true,
      );
    for (const c of diarization) {
      const objectKey = await uploadPlatform(c.bytes, `in.${c.format.split(' ')[0]}`);
      await measure(
        c,
        () => post(emu.platformUrl, '/v1/diarize', json(platform), JSON.stringify({ object_key: objectKey })),
        (a) => a.succeed === true,
      );
    }
    // The body is made before the measure: its Base64 and JSON are the client's work, not the emulator's.
    const recognitionBody = JSON.stringify({ audio_data: recognition.bytes.toString('base64'), audio_format: 'pcm16' });
    await measure(
      recognition,
      () => post(emu.platformUrl, '/v1/speech-to-text', json(platform), recognitionBody),
      (a) => typeof a.text === 'string',
    );
    await measure(
      heard,
      () => post(emu.speechUrl, '/_emulator/hear', { 'content-type': 'audio/mpeg' }, new Blob([heard.bytes])),
      (a) => typeof a.text === 'string',
    );
    for (const c of stt)
      await measure(
        c,
        () => post(emu.speechUrl, '/v1/speech_to_text', speech, form({ model: 'asr-1.0' }, 'file', c.bytes, `in.${c.format.split(' ')[0]}`)),
        (a) => typeof a.text === 'string',
      );
    let n = 0;
    for (const c of clone) {
      const fileId = await uploadSpeech(c.bytes, `in.${c.format.split(' ')[0]}`);
      await measure(
        c,
        () =>
          post(
            emu.speechUrl,
            '/v1/voice_clone',
            json(speech),
            JSON.stringify({ file_id: fileId, voice_id: `BenchClone${++n}x`, text_validation: 'hello there', accuracy: 0.01 }),
          ),
        // text_validation makes the clone decode the whole sample (its text check); 1043 is that check's refusal, after the decode.
        (a) => a.base_resp?.status_code === 0 || a.base_resp?.status_code === 1043,
      );
    }
    return { cases: rows };
  } finally {
    await emu.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await benchDecodeCaps(), null, 2));
