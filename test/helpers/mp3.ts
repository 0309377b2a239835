// Walks MP3 bytes frame by frame with the product's own header reader.
import { frameAt, type Mp3Frame } from '../../src/audio/encode/mp3.js';

export { frameAt, type Mp3Frame };

/** The frames of MP3 bytes; throws unless the bytes are whole frames, each starting where the previous ended. */
export function mp3Frames(bytes: Uint8Array): Mp3Frame[] {
  const out: Mp3Frame[] = [];
  for (let i = 0; i < bytes.length;) {
    const f = frameAt(bytes, i);
    if (!f) throw new Error(`no MP3 frame header at byte ${i} of ${bytes.length}`);
    if (i + f.len > bytes.length) throw new Error(`MP3 frame at byte ${i} runs past the end (${bytes.length})`);
    out.push(f);
    i += f.len;
  }
  return out;
}

/** True when the bytes begin on an MPEG frame sync. */
export function startsOnFrameSync(chunk: Uint8Array): boolean {
  return chunk.length >= 4 && chunk[0] === 0xff && (chunk[1]! & 0xe0) === 0xe0;
}
