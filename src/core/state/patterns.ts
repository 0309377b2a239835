/**
 * The patterns of the fixtures (`conversation.json` rules) run on a linear-time engine (RE2's, in plain
 * JavaScript): its time grows with the text, never exponentially, so no pattern can freeze the
 * listeners (`^(a+)+$` against 31 characters held the event loop 5.5 s with JavaScript's backtracking
 * engine). The price is RE2's syntax: no backreferences, no lookaround. A pattern it cannot read is
 * refused where the fixture is checked, at start and at `PUT /_emulator/fixtures/…`.
 */
import { RE2JS } from 're2js';

type Pattern = RE2JS;

/** Flags a rule may carry: i (case), m (^ and $ per line), s (. matches newlines), u (always on). */
function flagsOf(flags: string): number {
  let out = 0;
  if (flags.includes('i')) out |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) out |= RE2JS.MULTILINE;
  if (flags.includes('s')) out |= RE2JS.DOTALL;
  return out;
}

const compiled = new Map<string, Pattern>();

/** The compiled pattern (kept: the fixture's rules are compiled once); throws the engine's message for one it cannot read. */
export function compilePattern(match: string, flags: string): Pattern {
  const key = `${flags}/${match}`;
  let re = compiled.get(key);
  if (!re) {
    re = RE2JS.compile(match, flagsOf(flags));
    // A replaced fixture's patterns go with the old ones once a few hundred were seen.
    if (compiled.size >= 512) compiled.clear();
    compiled.set(key, re);
  }
  return re;
}

/** Why the engine cannot read `match`, or null when it can. */
export function patternProblem(match: string, flags: string): string | null {
  try {
    compilePattern(match, flags);
    return null;
  } catch (err) {
    return `is not a pattern the emulator's linear-time engine reads (RE2 syntax: no backreferences, no lookaround): ${(err as Error).message}`;
  }
}
