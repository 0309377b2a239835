/**
 * What the audio benchmarks share (not a test): the text they synthesize and how one synthesis is timed.
 */

const WORDS = (
  'the a of and to in is it that for on with as was at by be this from or an are not have has had but ' +
  'voice sound emulator stream audio signal speech model client server request response number time ' +
  'quickly slowly gently carefully tomorrow yesterday morning evening because although however therefore'
).split(' ');

/**
 * Deterministic, varied English text of about `chars` characters, sentences of 7 words or more (so caching does not
 * flatter); the same seed gives the same text.
 */
export function benchText(chars: number, seed: number): string {
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  let out = '';
  let words = 0;
  while (out.length < chars) {
    const w = WORDS[Math.floor(rnd() * WORDS.length)]!;
    out += (words === 0 ? w[0]!.toUpperCase() + w.slice(1) : w) + ' ';
    words++;
    if (words > 6 && rnd() < 0.12) {
      out = out.trimEnd() + (rnd() < 0.3 ? ', ' : '. ');
      if (out.endsWith('. ')) words = 0;
    }
  }
  return out.slice(0, chars - 1).trimEnd() + '.';
}

/** One run (a synthesis, with its encoding if any) that answers the milliseconds of audio it made. */
export interface TimedRun {
  audioMs: number;
  /** Wall time of the run. */
  wallMs: number;
  /** CPU time of this process during the run (robust when the machine is shared). */
  cpuMs: number;
}

/** Times one run in wall and CPU time; a real-time factor is `audioMs / wallMs` or `audioMs / cpuMs`. */
export async function timeSynthesis(run: () => Promise<number>): Promise<TimedRun> {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const audioMs = await run();
  const used = process.cpuUsage(cpu);
  return { audioMs, wallMs: performance.now() - wall, cpuMs: (used.user + used.system) / 1000 };
}
