// English number words for text normalization.

const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES = ['', 'thousand', 'million', 'billion', 'trillion', 'quadrillion', 'quintillion'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export const EN_DIGITS = ONES.slice(0, 10);

function under1000(n: number): string {
  const parts: string[] = [];
  if (n >= 100) {
    parts.push(ONES[Math.floor(n / 100)]!, 'hundred');
    n %= 100;
  }
  if (n >= 20) {
    parts.push(TENS[Math.floor(n / 10)]!);
    if (n % 10) parts.push(ONES[n % 10]!);
  } else if (n > 0) parts.push(ONES[n]!);
  return parts.join(' ');
}

/** Cardinal words of a digit string (any length; beyond the scales digits are read one by one). */
export function enCardinal(digits: string): string {
  digits = digits.replace(/^0+(?=\d)/, '');
  if (digits.length > 21) return [...digits].map((d) => EN_DIGITS[+d]).join(' ');
  if (/^0+$/.test(digits)) return 'zero';
  const groups: number[] = [];
  for (let end = digits.length; end > 0; end -= 3) groups.unshift(Number(digits.slice(Math.max(0, end - 3), end)));
  const words: string[] = [];
  groups.forEach((g, i) => {
    if (g === 0) return;
    const scale = SCALES[groups.length - 1 - i]!;
    words.push(under1000(g) + (scale ? ' ' + scale : ''));
  });
  return words.join(' ');
}

const ORD_IRREGULAR: Record<string, string> = {
  one: 'first',
  two: 'second',
  three: 'third',
  five: 'fifth',
  eight: 'eighth',
  nine: 'ninth',
  twelve: 'twelfth',
};

export function enOrdinal(digits: string): string {
  const words = enCardinal(digits).split(' ');
  const last = words.pop()!;
  const ord = ORD_IRREGULAR[last] ?? (last.endsWith('y') ? last.slice(0, -1) + 'ieth' : last + 'th');
  return [...words, ord].join(' ');
}

/** Years 1100..2099 as spoken ("nineteen ninety nine", "twenty twenty four", "two thousand five"). */
export function enYear(digits: string): string {
  const y = Number(digits);
  if (y >= 2000 && y < 2010) return enCardinal(digits);
  const hi = Math.floor(y / 100);
  const lo = y % 100;
  if (lo === 0) return `${enCardinal(String(hi))} hundred`;
  return `${enCardinal(String(hi))} ${lo < 10 ? 'oh ' : ''}${enCardinal(String(lo))}`;
}

export function enDate(y: string, m: string, d: string): string | null {
  const month = MONTHS[Number(m) - 1];
  if (!month || Number(d) < 1 || Number(d) > 31) return null;
  return `${month} ${enOrdinal(d)} ${enYear(y)}`;
}

export function enTime(h: string, m: string): string {
  const mm = Number(m);
  return `${enCardinal(h)} ${mm === 0 ? "o'clock" : mm < 10 ? 'oh ' + enCardinal(m) : enCardinal(m)}`;
}

export function enDecimal(intPart: string, frac: string): string {
  return `${enCardinal(intPart)} point ${[...frac].map((d) => EN_DIGITS[+d]).join(' ')}`;
}
