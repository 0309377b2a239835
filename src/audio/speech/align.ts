// Which of a sentence's timed phones belong to which word. Flite times phones, not words; each word's
// phones said alone are laid against the sentence's phones by edit distance (in a sentence a word can
// lose or change a phone: "the" before a vowel), and a word spans the phones matched to it.

export interface Phone {
  name: string;
  /** Seconds from the start of the run. */
  start: number;
  end: number;
}

/**
 * Start and end (seconds) of each word, given each word's own phones and the sentence's phones
 * (pauses left out). A phone matched to no word belongs to the word before it (the first word when at
 * the start); a word matched to no phone is an instant at the end of the word before it. When no word
 * has phones (Flite read them otherwise), the sentence is shared by phone counts alike.
 */
export function alignWords(words: string[][], phones: Phone[]): { start: number; end: number }[] {
  const a: number[] = []; // owner word of each expected phone
  const names: string[] = [];
  words.forEach((w, k) => w.forEach((p) => (a.push(k), names.push(p))));
  const n = names.length;
  const m = phones.length;
  const owner = new Int32Array(m).fill(-1);
  if (n === 0 || m === 0) {
    // Nothing to lay: share the phones evenly among the words.
    phones.forEach((_, j) => (owner[j] = Math.min(words.length - 1, Math.floor((j * words.length) / Math.max(1, m)))));
  } else {
    const cost = new Int32Array((n + 1) * (m + 1));
    const at = (i: number, j: number) => i * (m + 1) + j;
    for (let i = 0; i <= n; i++) cost[at(i, 0)] = i;
    for (let j = 0; j <= m; j++) cost[at(0, j)] = j;
    for (let i = 1; i <= n; i++) {
      for (let j = 1; j <= m; j++) {
        const sub = cost[at(i - 1, j - 1)]! + (names[i - 1] === phones[j - 1]!.name ? 0 : 1);
        cost[at(i, j)] = Math.min(sub, cost[at(i - 1, j)]! + 1, cost[at(i, j - 1)]! + 1);
      }
    }
    for (let i = n, j = m; i > 0 && j > 0;) {
      const here = cost[at(i, j)]!;
      if (here === cost[at(i - 1, j - 1)]! + (names[i - 1] === phones[j - 1]!.name ? 0 : 1)) {
        owner[j - 1] = a[i - 1]!;
        i--;
        j--;
      } else if (here === cost[at(i - 1, j)]! + 1) i--;
      else j--;
    }
    for (let j = 0; j < m; j++) if (owner[j] === -1) owner[j] = j > 0 ? owner[j - 1]! : (a[0] ?? 0);
    // Keep owners in word order (an odd match never sends time backwards).
    for (let j = 1; j < m; j++) if (owner[j]! < owner[j - 1]!) owner[j] = owner[j - 1]!;
  }
  const out: { start: number; end: number }[] = [];
  let prevEnd = phones[0]?.start ?? 0;
  for (let k = 0; k < words.length; k++) {
    let start = Infinity;
    let end = -Infinity;
    for (let j = 0; j < m; j++) {
      if (owner[j] !== k) continue;
      start = Math.min(start, phones[j]!.start);
      end = Math.max(end, phones[j]!.end);
    }
    if (start === Infinity) out.push({ start: prevEnd, end: prevEnd });
    else {
      out.push({ start, end });
      prevEnd = end;
    }
  }
  return out;
}
