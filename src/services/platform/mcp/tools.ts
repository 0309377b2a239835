/**
 * The tools of /mcp. Each mirrors the HTTP operation of the same name: its zod schema (plus apiKey),
 * its capability, its error codes, and its model function called directly (no HTTP loop).
 */
import type { Emulator } from '../../../core/emulator.js';
import { ok } from '../envelope.js';
import { diarize } from '../diarization/model.js';
import { diarizeRequest } from '../diarization/schema.js';
import { planTts, startTtsStream, synthesizeTts, TTS_BIT_DEPTH, TTS_CHANNELS, TTS_SAMPLE_RATE } from '../tts/model.js';
import { ttsRequestSchema, type TtsRequest } from '../tts/schema.js';
import { audioResult, registerMcpArea, sealStreamedWav } from './audio-result.js';
import { defineTool, type ToolDef } from './tool-kit.js';
import { voiceTools } from './voice-tools.js';

const AUDIO_NOTE =
  'The result is one text content holding JSON: audio_format, content_type, sample_rate (24000), channels (1), bit_depth (16), ' +
  'duration_ms, size_bytes, download_url (a signed link, no key needed, valid 24 hours), download_expires_at (Unix seconds) and ' +
  'audio_base64 (the whole file). Decode audio_base64 or fetch download_url to get the audio; never save the result text itself as an audio file. ' +
  'Errors come back with isError true and the JSON error envelope {error_code, error_message}: 10001 bad argument, 10003 bad key, 20003 balance.';

const ttsArgs = ttsRequestSchema;

export function mcpTools(emu: Emulator): ToolDef[] {
  registerMcpArea(emu);
  return [
    defineTool({
      name: 'text_to_speech_generate',
      description:
        'Synthesize speech from text with a system voice or a custom (cloned) voice of the account, as POST /v1/text-to-speech does. ' +
        'Required: apiKey, voice_id, generate_text (at most 500 weighted characters; a Chinese character counts 2; tags like [laughs] may be written in the text). ' +
        'Optional: speed (0.6 to 1.2, 0 means 1.0), audio_format ("wav" default, or "pcm" for raw 16-bit little-endian), emotion_class, language (a custom voice speaks zh unless language is "en"), text_normalization, model_id (std-tts). ' +
        AUDIO_NOTE,
      args: ttsArgs,
      family: 'tts',
      capability: 'tts',
      run: async ({ emu }, account, args) => {
        const audio = await synthesizeTts(emu, account, args as TtsRequest);
        return audioResult(emu, account, audio);
      },
    }),
    defineTool({
      name: 'text_to_speech_stream',
      description:
        'Same arguments and rules as text_to_speech_generate, but synthesized through the streaming operation (POST /v1/text-to-speech/stream): ' +
        'the tool reads the whole chunked stream internally and answers once it has ended, with the joined audio (a streamed WAV gets its true sizes written into the header) ' +
        'and stream_chunks, the number of chunks received. Use it to check streamed output; for plain audio text_to_speech_generate is enough. ' +
        AUDIO_NOTE,
      args: ttsArgs,
      family: 'tts',
      capability: 'tts',
      run: async ({ emu }, account, args) => {
        const plan = planTts(emu, account, args as TtsRequest);
        const { chunks } = await startTtsStream(emu, account, plan);
        const parts: Buffer[] = [];
        for await (const chunk of chunks) parts.push(chunk);
        const joined = Buffer.concat(parts);
        const bytes = plan.format === 'wav' ? sealStreamedWav(joined) : joined;
        return audioResult(
          emu,
          account,
          { bytes, format: plan.format, contentType: plan.contentType, sampleRate: TTS_SAMPLE_RATE, channels: TTS_CHANNELS, bitDepth: TTS_BIT_DEPTH },
          { streamChunks: parts.length },
        );
      },
    }),
    defineTool({
      name: 'diarize',
      description:
        'Find who speaks when in an audio file (speaker diarization), as POST /v1/diarize does. Required: apiKey and one of url ' +
        '(a public http(s) URL of the audio) or object_key (an object key from file upload or a podcast objectKey of the same key); url wins when both are given. ' +
        'The result text is the JSON envelope of the operation: data.trace_id and data.speakers, each with speaker_id, total_dur (seconds) and segments of start_time/end_time (seconds). ' +
        'Errors come back with isError true and {error_code, error_message}.',
      args: diarizeRequest,
      family: 'diarization',
      capability: 'diarization',
      run: async ({ emu }, account, args) => ok(await diarize(emu, account, args)),
    }),
    ...voiceTools(),
  ];
}
