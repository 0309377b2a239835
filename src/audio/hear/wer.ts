/**
 * Word error rate: the word-level edit distance (substitutions, deletions, insertions) between what
 * was synthesized (the reference) and what was heard, divided by the reference's word count. Words are
 * compared lower-cased without punctuation (apostrophes kept), as recognisers' scorers usually do.
 */

/** The words of a text as WER compares them (pause markers `<#x#>` are silence, not words). */
export function werWords(text: string): string[] {
  return text
    .replace(/<#\d+(?:\.\d+)?#>/g, ' ')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'\s]+/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** Edits (substitutions + deletions + insertions) that turn `ref` into `hyp`: one row of the table at a time. */
export function wordEdits(ref: readonly string[], hyp: readonly string[]): number {
  let prev = new Int32Array(hyp.length + 1).map((_, j) => j);
  let row = new Int32Array(hyp.length + 1);
  for (let i = 1; i <= ref.length; i++) {
    row[0] = i;
    for (let j = 1; j <= hyp.length; j++) {
      const substitute = prev[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1);
      row[j] = Math.min(substitute, prev[j]! + 1, row[j - 1]! + 1);
    }
    [prev, row] = [row, prev];
  }
  return prev[hyp.length]!;
}
