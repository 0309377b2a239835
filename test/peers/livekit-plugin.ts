/**
 * LiveKit Agents' MiniMax TTS plugin (npm `@livekit/agents-plugin-minimax`) as the peer tests run it:
 * outside any room, after `initializeLogger` (the plugin's streams need a logger), reading the audio
 * frames it yields. Also what the emulator reported for the same requests, to compare the frames
 * with: `synthesize()` is one streamed `POST /v1/t2a_v2` (pcm, `exclude_aggregated_audio`), which is
 * posted again whole; `stream()` is one `/ws/v1/t2a_v2` session, which is replayed with the same
 * task_start and the same sentences the plugin's tokenizer cut.
 */
import { initializeLogger, tokenize, type tts } from '@livekit/agents';
import WebSocket from 'ws';
import { call } from '../helpers/emulator.js';

let loggerReady = false;
/** The agents logger, once per process, quiet (the plugin logs warnings about unexpected lines). */
export function initLogger(): void {
  if (loggerReady) return;
  initializeLogger({ pretty: false, level: 'fatal' });
  loggerReady = true;
}

export interface Frames {
  frames: number;
  /** Samples per channel, summed over all frames. */
  samples: number;
  sampleRates: number[];
  channels: number[];
  /** Indexes of the frames marked final. */
  finals: number[];
  requestIds: string[];
  /** The PCM of all frames, joined. */
  pcm: Buffer;
}

/** Reads every frame of a ChunkedStream or a SynthesizeStream (up to END_OF_STREAM). */
export async function collect(stream: AsyncIterable<tts.SynthesizedAudio | symbol>): Promise<Frames> {
  const out: Frames = { frames: 0, samples: 0, sampleRates: [], channels: [], finals: [], requestIds: [], pcm: Buffer.alloc(0) };
  const pcm: Buffer[] = [];
  for await (const ev of stream) {
    if (typeof ev === 'symbol') break;
    const f = ev.frame;
    if (ev.final) out.finals.push(out.frames);
    out.frames++;
    out.samples += f.samplesPerChannel;
    if (!out.sampleRates.includes(f.sampleRate)) out.sampleRates.push(f.sampleRate);
    if (!out.channels.includes(f.channels)) out.channels.push(f.channels);
    if (!out.requestIds.includes(ev.requestId)) out.requestIds.push(ev.requestId);
    pcm.push(Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength));
  }
  out.pcm = Buffer.concat(pcm);
  return out;
}

/** The same body posted again without streaming: the audio and extra_info the emulator reports for it. */
export async function reportedWhole(baseUrl: string, key: string, body: Record<string, unknown>): Promise<{ audio: Buffer; extra: any }> {
  const { stream: _s, stream_options: _o, ...whole } = body;
  const r = await call(`${baseUrl}/v1/t2a_v2`, { json: whole, headers: { authorization: `Bearer ${key}` } });
  if (r.body?.base_resp?.status_code !== 0) throw new Error(`the whole synthesis failed: ${r.text}`);
  return { audio: Buffer.from(r.body.data.audio, 'hex'), extra: r.body.extra_info };
}

/** The sentences the plugin's default tokenizer cuts from these pushes (then a flush and the end of input). */
export async function sentencesOf(parts: string[]): Promise<string[]> {
  const s = new tokenize.basic.SentenceTokenizer().stream();
  for (const p of parts) s.pushText(p);
  s.flush();
  s.endInput();
  const out: string[] = [];
  for await (const t of s) out.push(t.token);
  return out;
}

/**
 * One `/ws/v1/t2a_v2` session with the plugin's task_start and one task_continue per sentence;
 * resolves with the audio the emulator sent and the extra_info of each piece.
 */
export function replaySession(baseUrl: string, key: string, start: Record<string, unknown>, sentences: string[]): Promise<{ audio: Buffer; extras: any[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/ws/v1/t2a_v2`, { headers: { Authorization: `Bearer ${key}` } });
    const audio: Buffer[] = [];
    const extras: any[] = [];
    ws.on('message', (raw) => {
      const m = JSON.parse(raw.toString());
      if (m.base_resp?.status_code) return reject(new Error(`replay failed: ${raw.toString()}`));
      if (m.event === 'connected_success') ws.send(JSON.stringify({ ...start, event: 'task_start' }));
      else if (m.event === 'task_started') {
        for (const text of sentences) ws.send(JSON.stringify({ event: 'task_continue', text }));
        ws.send(JSON.stringify({ event: 'task_finish' }));
      } else if (m.event === 'task_continued') {
        if (m.data?.audio) audio.push(Buffer.from(m.data.audio, 'hex'));
        if (m.is_final) extras.push(m.extra_info);
      } else if (m.event === 'task_finished') {
        ws.close();
        resolve({ audio: Buffer.concat(audio), extras });
      }
    });
    ws.on('error', reject);
  });
}

/** The task_start the plugin sends for these settings (its toMiniMaxPayload, which it does not export). */
export function pluginStart(o: { model?: string; voice?: string; sampleRate?: number; speed?: number; emotion?: string } = {}): Record<string, unknown> {
  return {
    model: o.model ?? 'speech-02-turbo',
    voice_setting: { voice_id: o.voice ?? 'socialmedia_female_2_v1', speed: o.speed ?? 1, vol: 1, pitch: 0, ...(o.emotion ? { emotion: o.emotion } : {}) },
    audio_setting: { sample_rate: o.sampleRate ?? 24000, bitrate: 128000, format: 'pcm', channel: 1 },
    text_normalization: false,
  };
}
