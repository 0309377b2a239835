/**
 * The sentence buffer of one bidirectional session (speech-current.md rule E6): the text of the
 * accepted `task_continue` messages since the last cut, cut by cuts.ts, and the two windows that cut a
 * waiting tail: the silence window (a tail long enough) and the backstop (a shorter one). Time comes
 * from an injected timer port, the emulator clock in the socket and a fake one in unit tests.
 */
import { cutSentences, nonSpaceCount, type Cut, type CutSettings } from './cuts.js';

export interface BufferSettings extends CutSettings {
  /** Quiet time after the last text before a long enough tail becomes a sentence. */
  silenceMs: number;
  /** Non-space code points a tail needs for the silence window. */
  minTailChars: number;
  /** Quiet time after which any non-empty tail becomes a sentence. */
  backstopMs: number;
}

export const DEFAULT_BUFFER_SETTINGS: BufferSettings = {
  minClauseChars: 20,
  maxSentenceChars: 200,
  silenceMs: 600,
  minTailChars: 10,
  backstopMs: 5_000,
};

/** Timers on some clock: the emulator's in the socket. */
export interface TimerPort {
  now(): number;
  after(ms: number, fn: () => void, label: string): number;
  cancel(id: number | null): void;
}

export type WindowName = 'silence' | 'backstop';

export const WINDOW_LABELS: Record<WindowName, string> = {
  silence: 'bidi silence window',
  backstop: 'bidi backstop window',
};

export class SentenceBuffer {
  private text = '';
  private readonly timers: Record<WindowName, { id: number; dueMs: number } | null> = { silence: null, backstop: null };

  /** `onWindow` gets the cuts a window made when it fired (empty when the tail did not qualify). */
  constructor(
    readonly settings: BufferSettings,
    private readonly clock: TimerPort,
    private readonly onWindow: (window: WindowName, cuts: Cut[]) => void,
  ) {}

  /** The text waiting for a cut. */
  get pending(): string {
    return this.text;
  }

  /** Code points waiting (for the 2205 limit). */
  get pendingChars(): number {
    return [...this.text].length;
  }

  /** When each window fires, if armed. */
  get windows(): Record<WindowName, number | null> {
    return { silence: this.timers.silence?.dueMs ?? null, backstop: this.timers.backstop?.dueMs ?? null };
  }

  /** Adds the text of one accepted `task_continue` and returns the sentences it completed; both windows restart. */
  append(text: string): Cut[] {
    const { cuts, rest } = cutSentences(this.text + text, this.settings);
    this.text = rest;
    this.arm();
    return cuts;
  }

  /** `task_flush`/`task_finish`: cut by the rules, and the rest becomes the last sentence. */
  flush(): Cut[] {
    const { cuts } = cutSentences(this.text, this.settings, 'flush');
    this.text = '';
    this.disarm();
    return cuts;
  }

  /** `task_cancel`: the text is dropped and the windows stop. */
  drop(): string {
    const dropped = this.text;
    this.text = '';
    this.disarm();
    return dropped;
  }

  private arm(): void {
    this.disarm();
    if (!this.text.trim()) return;
    this.start('silence', this.settings.silenceMs, () => this.longTail());
    this.start('backstop', this.settings.backstopMs, () => !this.longTail());
  }

  private longTail(): boolean {
    const chars = [...this.text];
    return nonSpaceCount(chars, 0, chars.length) >= this.settings.minTailChars;
  }

  private start(window: WindowName, ms: number, applies: () => boolean): void {
    const id = this.clock.after(
      ms,
      () => {
        this.timers[window] = null;
        if (!this.text.trim() || !applies()) return this.onWindow(window, []);
        const { cuts } = cutSentences(this.text, this.settings, window);
        this.text = '';
        this.disarm();
        this.onWindow(window, cuts);
      },
      WINDOW_LABELS[window],
    );
    this.timers[window] = { id, dueMs: this.clock.now() + ms };
  }

  private disarm(): void {
    for (const window of ['silence', 'backstop'] as const) {
      this.clock.cancel(this.timers[window]?.id ?? null);
      this.timers[window] = null;
    }
  }
}
