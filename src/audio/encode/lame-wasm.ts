// LAME 3.100 compiled to WebAssembly (wasm-media-encoders), about 3-8x faster than lamejs.
// The build offers no switch for the bit reservoir, which would let a frame's data start in the
// previous frame: after set-up we turn it off in LAME's own configuration (see configureLame),
// and the MP3 writer checks main_data_begin of every frame it hands out.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { createEncoder as CreateEncoder, WasmMediaEncoder } from 'wasm-media-encoders';

/** Bitrates (kbit/s) the build accepts: LAME's CBR list without 56 and 144. */
export const WASM_KBPS = [8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];

// The compiled module is immutable code, shared by every encoder (each gets its own instance and
// memory); compiling it once saves ~20 ms per stream.
type CompiledWasm = Parameters<typeof CreateEncoder>[1];
const wasmApi = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<CompiledWasm> } }).WebAssembly;
// Loaded on the first MP3 encode (the package also inlines its WebAssembly as large strings):
// start-up and the processes that only read audio do not pay for it.
let loaded: Promise<{ createEncoder: typeof CreateEncoder; compiled: CompiledWasm }> | null = null;
function wasmModule() {
  loaded ??= (async () => {
    const lib = await import('wasm-media-encoders');
    if (lib.jsLibraryVersion() !== 'wasm-media-encoders-0.7.0') throw new Error(`unexpected ${lib.jsLibraryVersion()}: the MP3 wrapper knows 0.7.0`);
    const compiled = await wasmApi.compile(readFileSync(createRequire(import.meta.url).resolve('wasm-media-encoders/wasm/mp3')));
    return { createEncoder: lib.createEncoder, compiled };
  })();
  return loaded;
}

const LAME_ID = 0xfff88e3b;

/**
 * Sets, in the session configuration of LAME's internal flags (3.100 layout: after class_id and four
 * ints, SessionConfig_t: noise_shaping at 3, use_best_huffman 5, samplerate_in 11, samplerate_out 12,
 * channels_in 13, channels_out 14, vbr 22, disable_reservoir 32):
 * - `disable_reservoir`, so every frame's data lies in that frame (chunks hold whole frames);
 * - the quantizer of LAME's fast qualities (`-q 7`): no noise shaping, Huffman tables chosen once per
 *   granule. The build sets the default quality (`-q 3`), whose search costs about 30% of the encode and
 *   buys nothing for generated tones; frames stay CBR at the asked bitrate, and the signature survives.
 * The flags are found from the encoder's handle and recognised by their id and our own settings, so a
 * different layout fails the match (and the writer's per-frame check) instead of writing elsewhere.
 */
function configureLame(enc: WasmMediaEncoder<'audio/mpeg'>, sampleRate: number, channels: number): boolean {
  const inner = enc as unknown as { module: { memory: { buffer: ArrayBuffer } }; ref: number };
  const mem = new Int32Array(inner.module.memory.buffer);
  const ref = inner.ref >>> 2;
  for (let k = 0; k < 32; k++) {
    const gfp = mem[ref + k]! >>> 2;
    if (!gfp || gfp >= mem.length || mem[gfp]! >>> 0 !== LAME_ID) continue;
    for (let q = gfp + 1; q < Math.min(mem.length - 64, gfp + 16384); q++) {
      if (mem[q]! >>> 0 !== LAME_ID) continue;
      const cfg = q + 5;
      const ours = mem[cfg + 11] === sampleRate && mem[cfg + 12] === sampleRate && mem[cfg + 13] === channels && mem[cfg + 14] === channels;
      if (ours && mem[cfg + 22] === 0 && mem[cfg + 32] === 0) {
        mem[cfg + 32] = 1;
        mem[cfg + 3] = 0;
        mem[cfg + 5] = 0;
        return true;
      }
    }
  }
  return false;
}

export interface RawMp3Encoder {
  /**
   * Interleaved Int16 in; MP3 bytes out, possibly ending inside a frame. The bytes may be a view of the
   * encoder's own memory, valid until its next call: the caller copies what it keeps.
   */
  encode(pcm: Int16Array): Uint8Array | Int8Array;
  flush(): Uint8Array | Int8Array;
}

/**
 * Encoders whose stream has ended, configured again for the next one. Each instance has its own
 * WebAssembly memory (16 MB reserved, about 2 MB written by LAME); a memory is only given back when the
 * garbage collector finds its instance, late, so a new instance per answer piled them up under load.
 * A few are kept; more streams at once make more, and those are dropped when they end. An encoder a
 * stream left without finishing (a client gone) is not reused.
 */
const IDLE_MAX = 4;
const idle: WasmMediaEncoder<'audio/mpeg'>[] = [];

export async function wasmMp3Encoder(sampleRate: number, channels: 1 | 2, kbps: number): Promise<RawMp3Encoder> {
  const { createEncoder, compiled } = await wasmModule();
  const enc = idle.pop() ?? (await createEncoder('audio/mpeg', compiled));
  // configure() frees the previous stream's LAME state and makes a new one.
  enc.configure({ sampleRate, channels, bitrate: kbps as 128, outputSampleRate: sampleRate as 32000 });
  if (!configureLame(enc, sampleRate, channels)) throw new Error("MP3 encoder: LAME's configuration was not found (bit reservoir and quantizer left as built)");
  let planes = [new Float32Array(0), new Float32Array(0)];
  let flushed = false;
  return {
    encode(pcm) {
      // Once ended, the instance may already serve another stream: nothing more goes into it.
      if (flushed) return new Uint8Array(0);
      const n = pcm.length / channels;
      if (planes[0]!.length < n) planes = [new Float32Array(n), new Float32Array(n)];
      const l = planes[0]!.subarray(0, n);
      if (channels === 1) {
        for (let i = 0; i < n; i++) l[i] = pcm[i]! / 32768;
        return enc.encode([l]);
      }
      const r = planes[1]!.subarray(0, n);
      for (let i = 0; i < n; i++) {
        l[i] = pcm[2 * i]! / 32768;
        r[i] = pcm[2 * i + 1]! / 32768;
      }
      return enc.encode([l, r]);
    },
    flush() {
      if (flushed) return new Uint8Array(0);
      flushed = true;
      const out = enc.finalize().slice();
      if (idle.length < IDLE_MAX) idle.push(enc);
      return out;
    },
  };
}
