/**
 * A client that behaves as LiveKit Agents' MiniMax TTS plugin does on `/ws/v1/t2a_v2`
 * (livekit-plugins-minimax, SynthesizeStream): base URL http→ws, Bearer header, task_start sent as
 * soon as the socket opens (before connected_success is read), task_continue per sentence once
 * task_started arrived, task_finish; every message with a non-zero base_resp code raises, a close
 * before task_finished raises, task_failed raises; audio is flushed as one segment per is_final.
 */
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';

const { emu } = emulatorForFile({ plane: 'speech' });

/** The plugin's defaults: speech-02-turbo, socialmedia_female_2_v1, mp3 24 kHz 128 kbps mono. */
function startMessage(model = 'speech-02-turbo', voice = 'socialmedia_female_2_v1') {
  return {
    model,
    voice_setting: { voice_id: voice, speed: 1.0, vol: 1.0, pitch: 0 },
    audio_setting: { sample_rate: 24000, bitrate: 128000, format: 'mp3', channel: 1 },
    text_normalization: false,
    event: 'task_start',
  };
}

/** One blingfire-like split: a sentence ends at . ! or ? followed by a space or the end. */
function sentences(text: string): string[] {
  return text.match(/[^.!?]+[.!?]+(\s+|$)/g)!.map((s) => s.trim());
}

class MiniMaxError extends Error {}

/** Runs one SynthesizeStream; resolves with the flushed segments (one per is_final). */
function synthesizeStream(baseUrl: string, apiKey: string, text: string, opts: { model?: string; headers?: Record<string, string> } = {}): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const url = `${baseUrl.replace('http', 'ws')}/ws/v1/t2a_v2`;
    const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${apiKey}`, ...opts.headers } });
    const segments: Buffer[] = [];
    let current: Buffer[] = [];
    let finished = false;
    let failed = false;
    const fail = (err: Error) => {
      if (failed || finished) return;
      failed = true;
      ws.close();
      reject(err);
    };
    ws.on('unexpected-response', (_req, res) => fail(new MiniMaxError(`WebSocket HTTP ${res.statusCode}`)));
    ws.on('error', (err) => fail(err));
    ws.on('open', () => {
      // _sentence_stream_task: task_start at once, then wait for task_started.
      ws.send(JSON.stringify(startMessage(opts.model)));
    });
    ws.on('close', (code) => {
      if (!finished) fail(new MiniMaxError(`MiniMax connection closed unexpectedly (close code ${code})`));
    });
    ws.on('message', (raw, isBinary) => {
      if (isBinary) return; // the plugin warns and continues
      const data = JSON.parse(String(raw));
      const code = data.base_resp?.status_code ?? 0;
      if (code !== 0) return fail(new MiniMaxError(`MiniMax error [${code}]: ${data.base_resp.status_msg}`));
      switch (data.event) {
        case 'connected_success':
          break;
        case 'task_started':
          for (const s of sentences(text)) ws.send(JSON.stringify({ event: 'task_continue', text: s }));
          ws.send(JSON.stringify({ event: 'task_finish' }));
          break;
        case 'task_continued':
          if (data.data?.audio) current.push(Buffer.from(data.data.audio, 'hex'));
          if (data.is_final) {
            segments.push(Buffer.concat(current));
            current = [];
          }
          break;
        case 'task_finished':
          finished = true;
          ws.close();
          resolve(segments);
          break;
        case 'task_failed':
          fail(new MiniMaxError(`MiniMax returned task failed: ${String(raw)}`));
          break;
        default:
          break; // the plugin logs unexpected messages
      }
    });
  });
}

const TEXT = 'Welcome to the emulator. This is the second sentence! And is this the third?';

describe('LiveKit Agents MiniMax plugin over /ws/v1/t2a_v2', () => {
  it('synthesizes three sentences into three decodable MP3 segments at the asked rate', async () => {
    const segments = await synthesizeStream(emu.speechUrl, 'livekit-key', TEXT);
    expect(segments).toHaveLength(3);
    for (const seg of segments) {
      const probe = await ffprobe(seg, { ext: 'mp3' });
      expect(probe.codec).toBe('mp3');
      expect(probe.sampleRate).toBe(24000);
      expect(probe.durationMs).toBeGreaterThan(500);
    }
    const whole = await ffprobe(Buffer.concat(segments), { ext: 'mp3' });
    expect(whole.durationMs).toBeGreaterThan(3000);
  });

  it('works with the current models (speech-2.8-turbo) and from the backup listener', async () => {
    expect(await synthesizeStream(emu.speechBackupUrl, 'livekit-key', TEXT, { model: 'speech-2.8-turbo' })).toHaveLength(3);
  });

  it('raises as the plugin does: a non-zero code, and a close before task_finished', async () => {
    await expect(synthesizeStream(emu.speechUrl, 'livekit-key', TEXT, { model: 'speech-2.5-hd-preview' })).rejects.toThrow(
      /^MiniMax error \[2013\]: invalid params, model must be one of/,
    );
    await expect(synthesizeStream(emu.speechUrl, 'emulator-disabled-key', TEXT)).rejects.toThrow(/^MiniMax error \[1004\]/);
    await expect(synthesizeStream(emu.speechUrl, 'livekit-key', TEXT, { headers: { 'X-Emulator-Fault': 'cut_after_chunks=3' } })).rejects.toThrow(
      /closed unexpectedly \(close code 1006\)/,
    );
    await expect(synthesizeStream(emu.speechUrl, 'livekit-key', TEXT, { headers: { 'X-Emulator-Fault': 'status=502' } })).rejects.toThrow('WebSocket HTTP 502');
  });
});
