/**
 * The emulator's clock. Real time by default; the control plane can freeze it, move it forward or set it.
 * Every expiry, window and timeout reads `now()` and schedules with `at()`, so tests can move time.
 * Timers fire, in due order, whenever the clock moves past them (and in real time while not frozen).
 */
export interface TimerInfo {
  id: number;
  dueMs: number;
  label: string;
  account?: string;
}

interface Timer extends TimerInfo {
  fn: () => void;
}

/**
 * The clock's latest instant: the end of year 9999. Times become dates in answers (ISO strings, expiries
 * days or years ahead), and every such date must stay inside what a Date and a four-digit year can hold.
 * Set there while flowing, the clock stays there: it never runs past it.
 */
export const CLOCK_MAX_MS = 253_402_300_799_999;

export class Clock {
  private offsetMs = 0; // emulator time = wall time + offset while flowing
  private frozenAt: number | null = null;
  private timers = new Map<number, Timer>();
  private nextId = 1;
  private wake: NodeJS.Timeout | null = null;
  private firing = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly wall: () => number = () => Date.now()) {}

  now(): number {
    return this.frozenAt ?? Math.min(CLOCK_MAX_MS, this.wall() + this.offsetMs);
  }

  get frozen(): boolean {
    return this.frozenAt !== null;
  }

  /** Unix seconds of the emulator clock. */
  nowSec(): number {
    return Math.floor(this.now() / 1000);
  }

  freeze(on: boolean): void {
    if (on && this.frozenAt === null) this.frozenAt = this.now();
    if (!on && this.frozenAt !== null) {
      this.offsetMs = this.frozenAt - this.wall();
      this.frozenAt = null;
    }
    this.fireDue();
  }

  advance(ms: number): void {
    this.set(this.now() + ms);
  }

  /** Moves the clock to `ms` (backwards too); timers due by then fire before this returns. */
  set(ms: number): void {
    if (this.frozenAt !== null) this.frozenAt = ms;
    else this.offsetMs = ms - this.wall();
    this.fireDue();
  }

  /**
   * Work started now whose outcome shows at a later time on this clock (async synthesis makes its audio in
   * the background, and the task reads Success from a time that depends on that audio). A move of the clock
   * through the control plane waits for it (`settled`), so what is due has happened when the move is answered.
   */
  track(work: Promise<unknown>): void {
    const done: Promise<unknown> = work.then(
      () => this.inFlight.delete(done),
      () => this.inFlight.delete(done),
    );
    this.inFlight.add(done);
  }

  /**
   * Resolves once the work in flight now is done (call it right after a move: that includes work the move
   * made due). Work that starts meanwhile is not waited for: with clients starting tasks all the time, a
   * move would otherwise wait without bound.
   */
  async settled(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  /** Back to real time, flowing; pending timers stay and fire when due. */
  resetToReal(): void {
    this.frozenAt = null;
    this.offsetMs = 0;
    this.fireDue();
  }

  /** Runs `fn` once the emulator clock reaches `dueMs`. */
  at(dueMs: number, fn: () => void, label = 'timer', account?: string): number {
    const id = this.nextId++;
    this.timers.set(id, { id, dueMs, fn, label, account });
    if (dueMs <= this.now()) queueMicrotask(() => this.fireDue());
    else this.arm();
    return id;
  }

  /**
   * Resolves true once the emulator clock reaches `dueMs` (at once if it has), false as soon as `gone`
   * aborts, even if it had aborted before the wait began (its `abort` event never comes again).
   */
  reaches(dueMs: number, gone: AbortSignal, label = 'timer'): Promise<boolean> {
    if (this.now() >= dueMs) return Promise.resolve(true);
    if (gone.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onGone = () => {
        this.cancel(timer);
        resolve(false);
      };
      const timer = this.at(
        dueMs,
        () => {
          gone.removeEventListener('abort', onGone);
          resolve(true);
        },
        label,
      );
      gone.addEventListener('abort', onGone, { once: true });
    });
  }

  after(ms: number, fn: () => void, label?: string, account?: string): number {
    return this.at(this.now() + ms, fn, label, account);
  }

  cancel(id: number | undefined | null): void {
    if (id == null) return;
    if (this.timers.delete(id)) this.arm();
  }

  /** Drops every pending timer (reset) or those of one account. */
  cancelAll(account?: string): void {
    for (const t of [...this.timers.values()]) if (account === undefined || t.account === account) this.timers.delete(t.id);
    this.arm();
  }

  pending(account?: string): TimerInfo[] {
    return [...this.timers.values()]
      .filter((t) => account === undefined || t.account === account)
      .sort((a, b) => a.dueMs - b.dueMs)
      .map(({ id, dueMs, label, account: acc }) => ({ id, dueMs, label, account: acc }));
  }

  stop(): void {
    if (this.wake) clearTimeout(this.wake);
    this.wake = null;
    this.timers.clear();
  }

  private fireDue(): void {
    if (this.firing) return;
    this.firing = true;
    try {
      for (;;) {
        const now = this.now();
        let next: Timer | undefined;
        for (const t of this.timers.values()) if (t.dueMs <= now && (!next || t.dueMs < next.dueMs)) next = t;
        if (!next) break;
        this.timers.delete(next.id);
        try {
          next.fn();
        } catch {
          // A timer's failure must not stop the others; owners log their own errors.
        }
      }
    } finally {
      this.firing = false;
    }
    this.arm();
  }

  /** Keeps one real timeout armed for the earliest pending timer while time flows. */
  private arm(): void {
    if (this.wake) clearTimeout(this.wake);
    this.wake = null;
    if (this.frozenAt !== null || this.timers.size === 0) return;
    let earliest = Infinity;
    for (const t of this.timers.values()) earliest = Math.min(earliest, t.dueMs);
    const delay = Math.max(0, Math.min(earliest - this.now(), 2_147_000_000));
    this.wake = setTimeout(() => this.fireDue(), delay);
    this.wake.unref();
  }
}
