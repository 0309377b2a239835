import { createHash, createHmac } from 'node:crypto';

/**
 * Seeded, counter-based random streams. Each account gets its own stream (seed + account),
 * so parallel suites with different keys never disturb each other's id sequences.
 */
export class RandomStream {
  private counter = 0;
  private pool = Buffer.alloc(0);

  constructor(private readonly key: string) {}

  /** Where the stream stands, for the snapshot of a data dir. */
  save(): SavedStream {
    return { counter: this.counter, pool: this.pool.toString('base64') };
  }

  load(saved: SavedStream): void {
    this.counter = saved.counter;
    this.pool = Buffer.from(saved.pool, 'base64');
  }

  bytes(n: number): Buffer {
    while (this.pool.length < n) {
      const block = createHmac('sha256', this.key).update(String(this.counter++)).digest();
      this.pool = Buffer.concat([this.pool, block]);
    }
    const out = this.pool.subarray(0, n);
    this.pool = this.pool.subarray(n);
    return Buffer.from(out);
  }

  hex(chars: number): string {
    return this.bytes(Math.ceil(chars / 2))
      .toString('hex')
      .slice(0, chars);
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
  counter: number;
  pool: string;
}
export type SavedIds = Record<string, SavedStream>;

export class Ids {
  private streams = new Map<string, RandomStream>();

  constructor(private readonly seed: string) {}

  /** The stream of one account (by account id) or of a named purpose such as `faults`. */
  stream(name: string): RandomStream {
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

  load(saved: SavedIds): void {
    for (const [name, s] of Object.entries(saved)) {
      if (typeof s?.counter === 'number' && typeof s.pool === 'string') this.stream(name).load(s);
    }
  }

  reset(name?: string): void {
    if (name === undefined) this.streams.clear();
    else this.streams.delete(name);
  }
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
