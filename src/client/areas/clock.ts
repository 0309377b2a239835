/** The clock's calls (`/_emulator/clock`). */
import type { CallOptions } from '../transport.js';
import type { ClockChange, ClockView } from '../types.js';
import type { Caller } from './caller.js';

const CLOCK = 'the clock {now_ms, frozen}';
const isClock = (b: any) => typeof b.now_ms === 'number' && typeof b.frozen === 'boolean';

export function clockCalls(caller: Caller) {
  const clock = {
    read: (options?: CallOptions): Promise<ClockView> => caller.json({ method: 'GET', path: '/clock' }, CLOCK, isClock, options),
    /** Freezes, sets, advances and unfreezes in one call (in that order). */
    change: (change: ClockChange, options?: CallOptions): Promise<ClockView> =>
      caller.json({ method: 'POST', path: '/clock', body: change }, CLOCK, isClock, options),
    freeze: (options?: CallOptions): Promise<ClockView> => clock.change({ freeze: true }, options),
    unfreeze: (options?: CallOptions): Promise<ClockView> => clock.change({ freeze: false }, options),
    /** Moves the clock forward; timers that fall due fire, and the work they start is done, before this answers. */
    advance: (ms: number, options?: CallOptions): Promise<ClockView> => clock.change({ advance_ms: ms }, options),
    /** Sets the clock to an instant (ms since the epoch). */
    set: (ms: number, options?: CallOptions): Promise<ClockView> => clock.change({ set_ms: ms }, options),
  };
  return clock;
}
