/**
 * How close a transcript is to what was heard: 1 − edit distance / longer length, over letters and
 * digits only (case, spaces and punctuation do not count), by Unicode code point.
 */
function normalize(text: string): string[] {
  return [...text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '')];
}

export function similarity(expected: string, heard: string): number {
  const a = normalize(expected);
  const b = normalize(heard);
  if (!a.length && !b.length) return 1;
  if (!a.length || !b.length) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return 1 - prev[b.length]! / Math.max(a.length, b.length);
}
