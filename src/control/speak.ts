/**
 * `POST /_emulator/speak`: the audio a caller would send — text in a voice, in the format the target
 * expects (PCM16 16 kHz for the conversation and recognition sockets, WAV, MP3, μ-law 8 kHz) — with seeded
 * impairments of a bad line (docs/voice-agents.md). The audio is the emulator's own synthesis, so its
 * signature is recorded: the emulator's recognition knows exactly what was said, under each impairment
 * within its documented limits, and a test knows what its agent should have understood.
 */
import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import { decodeToMono, encodeAudio, synthesize, type AudioFormat } from '../audio/index.js';
import { impair, mulawRoundTrip, resampleLinear, seededRandom, type Impairments } from '../audio/impair.js';
import type { Emulator } from '../core/emulator.js';
import { speechRecord } from '../core/state/signatures.js';
import { ControlError, input } from './common.js';

const FORMATS = ['pcm', 'wav', 'mp3', 'pcmu_raw', 'pcmu_wav'] as const;
const CONTENT_TYPE: Record<(typeof FORMATS)[number], (rate: number) => string> = {
  pcm: (rate) => `audio/pcm;rate=${rate}`,
  wav: () => 'audio/wav',
  mp3: () => 'audio/mpeg',
  pcmu_raw: () => 'audio/basic',
  pcmu_wav: () => 'audio/wav',
};
const RATES = [8000, 16000, 22050, 24000, 32000, 44100, 48000] as const;
/** The bitrate of the MP3 round trip: a low one, as a narrowband or congested link would use. */
const LOW_MP3_BITRATE = 32_000;

export const speakBody = z
  .object({
    text: z.string().min(1, 'must not be empty').max(2000, 'at most 2000 characters'),
    voice_id: z.string().min(1).optional(),
    language: z
      .string()
      .regex(/^[a-z]{2,3}$/, 'must be a language code such as en or zh')
      .default('en'),
    format: z.enum(FORMATS).default('pcm'),
    sample_rate: z.union(RATES.map((r) => z.literal(r)) as unknown as [z.ZodLiteral<8000>, z.ZodLiteral<16000>]).optional(),
    seed: z.string().max(200).default('speak'),
    leading_silence_ms: z.int().min(0).max(1000).optional(),
    gain_db: z.number().min(-36).max(0).optional(),
    clip: z.number().min(0).max(24).optional(),
    noise_db: z.number().min(6).max(60).optional(),
    dropouts: z.int().min(0).max(20).optional(),
    dropout_ms: z.int().min(10).max(200).optional(),
    codec: z.enum(['mulaw', 'mp3']).optional(),
  })
  .strict();
type SpeakBody = z.output<typeof speakBody>;

/** The voice asked for, from either catalogue; the first English voice when none is named. */
function voiceOf(emu: Emulator, voiceId: string | undefined): string {
  const all = [...emu.fixtures.data['speech-voices.json'], ...emu.fixtures.data['platform-voices.json']];
  if (voiceId === undefined) return (all.find((v) => v.language === 'English' || v.language === 'en') ?? all[0]!).voice_id;
  if (!all.some((v) => v.voice_id === voiceId)) throw new ControlError(400, `speak field voice_id: "${voiceId}" is not a system voice of either service`);
  return voiceId;
}

function toInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32768)));
  return out;
}

/** Synthesis, impairments and the codec round trip, at `rate`; the signature recorded for recognition. */
async function callerAudio(emu: Emulator, body: SpeakBody, rate: number) {
  const voice = voiceOf(emu, body.voice_id);
  // The chosen voice engine speaks the caller too: with the speech engine a pipeline's own voice-activity detector hears speech.
  const synth = await synthesize({
    text: body.text,
    voices: [{ id: voice, weight: 1 }],
    sampleRate: rate,
    channels: 1,
    tags: true,
    engine: emu.config.voiceEngine,
  });
  emu.signatures.put(speechRecord({ text: body.text, language: body.language, voices: [voice], summary: synth, atMs: emu.clock.now() }));
  const imp: Impairments = {
    leadingSilenceMs: body.leading_silence_ms,
    gainDb: body.gain_db,
    clipDb: body.clip,
    noiseDb: body.noise_db,
    dropouts: body.dropouts,
    dropoutMs: body.dropout_ms,
  };
  const { pcm, report } = impair(synth.pcm, rate, imp, seededRandom(body.seed));
  let out = pcm;
  if (body.codec === 'mulaw') out = mulawRoundTrip(pcm, rate);
  if (body.codec === 'mp3') {
    const mp3 = await encodeAudio('mp3', { pcm, sampleRate: rate, channels: 1 }, { sampleRate: rate, channels: 1, bitrate: LOW_MP3_BITRATE });
    const decoded = await decodeToMono(mp3.bytes);
    out = resampleLinear(toInt16(decoded.samples), decoded.sampleRate, rate);
  }
  return { pcm: out, signatureId: synth.signatureId, voice, report };
}

export function speakRoutes(app: FastifyInstance, emu: Emulator): void {
  app.post(
    '/speak',
    {
      ...input({ body: true, what: 'speak' }),
      schema: {
        summary: "A caller's audio, with seeded impairments",
        description:
          'Body: {text, voice_id?, language?, format? (pcm|wav|mp3|pcmu_raw|pcmu_wav, default pcm), sample_rate? (default 16000; 8000 for μ-law), seed?, ' +
          'leading_silence_ms? (0–1000), gain_db? (−36–0), clip? (overdrive dB, 0–24), noise_db? (SNR, 6–60), dropouts? (0–20), dropout_ms? (10–200, default 40), codec? (mulaw|mp3)}. ' +
          'Answer: the audio, with X-Audio-Sample-Rate, X-Audio-Channels, X-Audio-Duration-Ms, X-Emulator-Signature and X-Emulator-Impairments (JSON: where each was put).',
        body: speakBody,
      },
    },
    async (req, reply) => {
      const body = req.body as SpeakBody;
      const mulaw = body.format === 'pcmu_raw' || body.format === 'pcmu_wav';
      if (mulaw && body.sample_rate !== undefined && body.sample_rate !== 8000) {
        throw new ControlError(400, `speak field sample_rate: μ-law (${body.format}) is 8000 Hz, got ${body.sample_rate}`);
      }
      const rate = mulaw ? 8000 : (body.sample_rate ?? 16000);
      const audio = await callerAudio(emu, body, rate);
      const encoded = await encodeAudio(body.format as AudioFormat, { pcm: audio.pcm, sampleRate: rate, channels: 1 }, { sampleRate: rate, channels: 1 });
      return reply
        .header('content-type', CONTENT_TYPE[body.format](rate))
        .header('x-audio-sample-rate', String(rate))
        .header('x-audio-channels', '1')
        .header('x-audio-duration-ms', String(Math.round((audio.pcm.length * 1000) / rate)))
        .header('x-emulator-signature', audio.signatureId)
        .header('x-emulator-impairments', JSON.stringify({ voice_id: audio.voice, ...audio.report }))
        .send(encoded.bytes);
    },
  );
}
