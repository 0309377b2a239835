/**
 * Audio results of the generation tools. MCP results here are text only, so the audio travels as
 * Base64 inside a JSON text, beside what a decoder will find and a signed link to the same file
 * (kept as a blob of the account under `mcp/{account}/`, dropped on reset).
 */
import type { Account } from '../../../core/state/accounts.js';
import { areaOf, type StateArea } from '../../../core/state/areas.js';
import type { Emulator } from '../../../core/emulator.js';
import type { TtsFormat } from '../tts/model.js';

export const MCP_AREA = 'platform-mcp';
/** Validity of the download link (emulator rule: as long as the T2A `url` links, 24 hours). */
export const MCP_LINK_MS = 24 * 60 * 60 * 1000;
const WAV_HEADER = 44;

export interface AudioResult {
  audio_format: TtsFormat;
  content_type: string;
  sample_rate: number;
  channels: number;
  bit_depth: number;
  duration_ms: number;
  size_bytes: number;
  download_url: string;
  /** Unix seconds on the emulator clock after which the link answers 403. */
  download_expires_at: number;
  /** Only for text_to_speech_stream: how many chunks the stream delivered before they were joined. */
  stream_chunks?: number;
  audio_base64: string;
}

/** Registers the (stateless apart from blobs) area so reset drops an account's generated files. */
export function registerMcpArea(emu: Emulator): void {
  const drop = (rel: string) => void emu.blobs.removeTree(rel).catch(() => undefined);
  areaOf<StateArea>(emu, MCP_AREA, () => ({
    name: MCP_AREA,
    reset: (accountId) => drop(accountId === undefined ? 'mcp' : `mcp/${accountId}`),
  }));
}

/**
 * A streamed WAV has RIFF and data sizes 0xFFFFFFFF (unknown while sending). Once the whole stream is
 * joined its length is known, so the saved file gets true sizes and reads as an ordinary WAV.
 */
export function sealStreamedWav(bytes: Buffer): Buffer {
  if (bytes.length < WAV_HEADER || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 36, 40) !== 'data') return bytes;
  const out = Buffer.from(bytes);
  out.writeUInt32LE(out.length - 8, 4);
  out.writeUInt32LE(out.length - WAV_HEADER, 40);
  return out;
}

/** Stores the file and describes it; the duration is that of the samples the bytes hold. */
export async function audioResult(
  emu: Emulator,
  account: Account,
  audio: { bytes: Buffer; format: TtsFormat; contentType: string; sampleRate: number; channels: number; bitDepth: number },
  extra: { streamChunks?: number } = {},
): Promise<AudioResult> {
  const rel = `mcp/${account.id}/${emu.ids.stream(account.id).hex(16)}.${audio.format}`;
  await emu.blobs.put(rel, audio.bytes);
  const expires = emu.clock.now() + MCP_LINK_MS;
  const dataBytes = audio.bytes.length - (audio.format === 'wav' ? WAV_HEADER : 0);
  const frameBytes = audio.channels * (audio.bitDepth / 8);
  return {
    audio_format: audio.format,
    content_type: audio.contentType,
    sample_rate: audio.sampleRate,
    channels: audio.channels,
    bit_depth: audio.bitDepth,
    duration_ms: Math.round((Math.max(0, dataBytes) / frameBytes / audio.sampleRate) * 1000),
    size_bytes: audio.bytes.length,
    download_url: emu.downloadUrl('platform', rel, expires),
    download_expires_at: Math.floor(expires / 1000),
    ...(extra.streamChunks !== undefined ? { stream_chunks: extra.streamChunks } : {}),
    audio_base64: audio.bytes.toString('base64'),
  };
}
