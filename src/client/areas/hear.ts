/** What a listener heard in a recording (`/_emulator/hear`). */
import type { CallOptions } from '../transport.js';
import type { HearResult } from '../types.js';
import type { Caller } from './caller.js';

/** What a hear body is, from its first bytes (raw PCM has no header: its content type must be given). */
function sniffAudio(bytes: Uint8Array): string | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(0, 4) === 'fLaC') return 'audio/flac';
  if (ascii(0, 4) === 'OggS') return 'audio/ogg';
  if (ascii(0, 3) === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return 'audio/mpeg';
  return undefined;
}

/** `POST /_emulator/hear` of the audio, its content type given or told from its first bytes. */
export async function hearAudio(caller: Caller, audio: Uint8Array | ArrayBuffer, options: { contentType?: string } & CallOptions): Promise<HearResult> {
  const { contentType, ...call } = options;
  const bytes = audio instanceof Uint8Array ? audio : new Uint8Array(audio);
  const type = contentType ?? sniffAudio(bytes);
  if (!type) {
    throw new TypeError('ControlClient.hear: the audio is not WAV, MP3, FLAC or Ogg by its first bytes: give its contentType (e.g. audio/pcm;rate=16000)');
  }
  return caller.json(
    { method: 'POST', path: '/hear', raw: { bytes, contentType: type } },
    'what was heard {duration_ms, text, utterances, anomalies}',
    (b) => typeof b.text === 'string' && Array.isArray(b.utterances) && Array.isArray(b.anomalies),
    call,
  );
}
