/**
 * `output_format: "url"`: the file is written to the blob store as the encoder makes it, never held
 * whole in memory (URL mode is the documented way past the hex size limit, so its files can be hours
 * long). Formats whose header carries totals (WAV sizes, FLAC STREAMINFO) get the true header written
 * over the streamed one before the link is handed out: the file equals the one-shot encoding.
 */
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { encodeAudioStream, type AudioMeta, type SynthStream } from '../../audio/index.js';
import type { Emulator } from '../../core/emulator.js';
import { encodeOptionsOf, type SynthesisPlan } from './model.js';

/** Encoded bytes written per chunk on the way to disk. */
const CHUNK_BYTES = 256 * 1024;

/** Encodes the synthesis into blob `rel`; answers the audio's metadata. Throws when the synthesis stops. */
export async function synthesizeToBlob(emu: Emulator, rel: string, plan: SynthesisPlan, synth: SynthStream): Promise<AudioMeta> {
  const stream = encodeAudioStream(plan.format, synth, { ...encodeOptionsOf(plan), maxChunkBytes: CHUNK_BYTES });
  await emu.blobs.putStream(rel, Readable.from(stream), Number.MAX_SAFE_INTEGER);
  const header = await stream.finalHeader();
  if (header) {
    const file = await open(emu.blobs.file(rel), 'r+');
    try {
      await file.write(header, 0, header.length, 0);
      await file.sync();
    } finally {
      await file.close();
    }
  }
  return stream.meta();
}
