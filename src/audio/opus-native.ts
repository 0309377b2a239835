/**
 * libopus through the `opusscript` package's WebAssembly build, addressed correctly. The package's
 * own wrapper keeps its PCM buffers as views of the 16-bit heap indexed by byte address, so each
 * instance writes its samples at twice the address it allocated: over other instances' state once
 * several live at once (streams and async tasks that encode together ended in "Aborted()"), and past
 * the heap's end as it fills. Here every buffer is read and written at the address `malloc` gave,
 * through views of the heap made at each call, which also stay right when the memory grows.
 */
import { createRequire } from 'node:module';

interface NativeHandler {
  _encode(input: number, bytes: number, output: number, frameSize: number): number;
  _decode(input: number, bytes: number, output: number): number;
  _encoder_ctl(ctl: number, arg: number): number;
}
export interface NativeModule {
  OpusScriptHandler: { new (rate: number, channels: number, application: number): NativeHandler; destroy_handler(h: NativeHandler): void };
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  HEAPU8: Uint8Array;
}

export const OPUS_APPLICATION_AUDIO = 2049;
const MAX_PACKET_SIZE = 1276 * 3;
/** 120 ms at 48 kHz, libopus's largest frame. */
const MAX_FRAME_SIZE = 5760;
const NATIVE_BUILD = 'opusscript/build/opusscript_native_wasm.js';

/** Loads the WebAssembly build once (`requireFn`: Node's require; a test gives a failing one). */
export function loadOpusNative(requireFn: (id: string) => unknown = createRequire(import.meta.url)): NativeModule {
  return (requireFn(NATIVE_BUILD) as () => NativeModule)();
}

let shared: NativeModule | null = null;
function native(): NativeModule {
  shared ??= loadOpusNative();
  return shared;
}

/**
 * One libopus encoder or decoder with its own buffers; `free` once done. The build's PCM interface
 * takes and gives one byte of the 16-bit little-endian samples per 16-bit heap slot (what its wrapper
 * hands it), so PCM buffers hold twice their byte count and are filled and read through a 16-bit view
 * at their own address.
 */
export class OpusCodec {
  private readonly handler: NativeHandler;
  /** PCM in (encoder) or out (decoder): one slot of 2 bytes per PCM byte. */
  private readonly pcm: number;
  private readonly pcmSlots: number;
  /** A packet in (decoder) or out (encoder), plain bytes. */
  private readonly packet: number;
  private freed = false;

  constructor(
    sampleRate: number,
    private readonly channels: number,
    private readonly m: NativeModule = native(),
  ) {
    this.handler = new m.OpusScriptHandler(sampleRate, channels, OPUS_APPLICATION_AUDIO);
    this.pcmSlots = MAX_FRAME_SIZE * channels * 2;
    this.pcm = m._malloc(this.pcmSlots * 2);
    this.packet = m._malloc(MAX_PACKET_SIZE);
  }

  encoderCtl(ctl: number, arg: number): void {
    const r = this.handler._encoder_ctl(ctl, arg);
    if (r < 0) throw new Error(`Opus encoder setting ${ctl} failed (${r})`);
  }

  /** One frame of 16-bit little-endian interleaved PCM (`frameSize` samples a channel) to one packet. */
  encode(pcm: Uint8Array, frameSize: number): Buffer {
    if (pcm.length > this.pcmSlots) throw new Error(`an Opus frame of ${pcm.length} bytes is over the largest, ${this.pcmSlots}`);
    new Uint16Array(this.m.HEAPU8.buffer, this.pcm, pcm.length).set(pcm);
    const len = this.handler._encode(this.pcm, pcm.length, this.packet, frameSize);
    if (len < 0) throw new Error(`Opus encode failed (${len})`);
    return Buffer.from(this.m.HEAPU8.subarray(this.packet, this.packet + len));
  }

  /** One packet to 16-bit little-endian interleaved PCM. */
  decode(packet: Uint8Array): Buffer {
    if (packet.length > MAX_PACKET_SIZE) throw new Error(`an Opus packet of ${packet.length} bytes is over the largest, ${MAX_PACKET_SIZE}`);
    this.m.HEAPU8.set(packet, this.packet);
    const frames = this.handler._decode(this.packet, packet.length, this.pcm);
    if (frames < 0) throw new Error(`Opus decode failed (${frames})`);
    const bytes = Math.min(frames * this.channels * 2, this.pcmSlots);
    // Each slot holds one byte: Buffer.from of a 16-bit array keeps each element's low byte.
    return Buffer.from(new Uint16Array(this.m.HEAPU8.buffer, this.pcm, bytes));
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    this.m.OpusScriptHandler.destroy_handler(this.handler);
    this.m._free(this.pcm);
    this.m._free(this.packet);
  }
}
