import { createHash } from 'node:crypto';

/** Bytes one block of a stream yields: SHAKE256 is an extendable-output hash, so one call serves many ids. */
const BLOCK_BYTES = 1024;

/**
 * Seeded, counter-based random streams. Each account gets its own stream (seed + account),
 * so parallel suites with different keys never disturb each other's id sequences. Block n of a stream
 * is SHAKE256(key, 0, n) cut to 1 KiB: one hash per some 60 ids keeps minting an id cheap on the
 * request path.
 */
export class RandomStream {
  private counter = 0;
  private pool: Buffer = Buffer.alloc(0);
  private offset = 0;

  constructor(private readonly key: string) {}

  /** Where the stream stands, for the snapshot of a data dir. */
  save(): SavedStream {
    // The current block is derived again from its number on load: only the position is saved.
    return { counter: this.counter, used: this.offset };
  }

  load(saved: SavedStream): void {
    this.counter = saved.counter;
    if (typeof saved.pool === 'string') {
      // A snapshot written by an earlier version carries the unused bytes themselves.
      this.pool = Buffer.from(saved.pool, 'base64');
      this.offset = 0;
    } else if (saved.counter > 0 && saved.used !== undefined) {
      this.pool = this.block(saved.counter - 1);
      this.offset = Math.min(saved.used, this.pool.length);
    } else {
      this.pool = Buffer.alloc(0);
      this.offset = 0;
    }
  }

  private block(n: number): Buffer {
    return createHash('shake256', { outputLength: BLOCK_BYTES }).update(`${this.key}\u0000${n}`).digest();
  }

  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      if (this.offset === this.pool.length) {
        this.pool = this.block(this.counter++);
        this.offset = 0;
      }
      const take = Math.min(n - filled, this.pool.length - this.offset);
      this.pool.copy(out, filled, this.offset, this.offset + take);
      this.offset += take;
      filled += take;
    }
    return out;
  }

  hex(chars: number): string {
    const n = Math.ceil(chars / 2);
    // Most ids lie inside the current block: read them from it (the same bytes, no copy).
    if (this.offset + n <= this.pool.length) {
      const out = this.pool.toString('hex', this.offset, this.offset + n);
      this.offset += n;
      return chars % 2 ? out.slice(0, chars) : out;
    }
    return this.bytes(n).toString('hex').slice(0, chars);
  }

  /** A float in [0, 1). */
  next(): number {
    return this.bytes(6).readUIntBE(0, 6) / 2 ** 48;
  }

  uuid(): string {
    const b = this.bytes(16);
    b[6] = (b[6]! & 0x0f) | 0x40;
    b[8] = (b[8]! & 0x3f) | 0x80;
    const h = b.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  /** URL-safe token of `chars` characters. */
  token(chars = 32): string {
    return this.bytes(chars).toString('base64url').slice(0, chars);
  }
}

export interface SavedStream {
  /** Blocks drawn so far. */
  counter: number;
  /** Bytes of the last block already used. */
  used?: number;
  /** Earlier snapshots: the unused bytes of the last block, base64. */
  pool?: string;
}
export type SavedIds = Record<string, SavedStream>;

export class Ids {
  private streams = new Map<string, RandomStream>();
  /** Told of each stream handed out (it may move on): the state store writes only those. */
  onTouch: (name: string) => void = () => {};

  constructor(private readonly seed: string) {}

  /** The stream of one account (by account id) or of a named purpose such as `faults`. */
  stream(name: string): RandomStream {
    this.onTouch(name);
    let s = this.streams.get(name);
    if (!s) {
      s = new RandomStream(`${this.seed}\u0000${name}`);
      this.streams.set(name, s);
    }
    return s;
  }

  /** 32 lowercase hex characters, as the speech service's trace ids. */
  traceId(account = 'anonymous'): string {
    return this.stream(account).hex(32);
  }

  save(): SavedIds {
    const out: SavedIds = {};
    for (const [name, s] of this.streams) out[name] = s.save();
    return out;
  }

  /** One stream's position, or undefined when it is not kept. */
  saveOne(name: string): SavedStream | undefined {
    return this.streams.get(name)?.save();
  }

  load(saved: SavedIds): void {
    for (const [name, s] of Object.entries(saved)) {
      if (typeof s?.counter === 'number' && (typeof s.pool === 'string' || typeof s.used === 'number')) this.stream(name).load(s);
    }
  }

  reset(name?: string): void {
    if (name === undefined) this.streams.clear();
    else (this.streams.delete(name), this.onTouch(name));
  }
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
