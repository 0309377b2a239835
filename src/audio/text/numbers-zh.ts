// Chinese number words for text normalization.

export const ZH_DIGITS = ['零', '一', '二', '三', '四', '五', '六', '七', '八', '九'];
const SMALL = ['', '十', '百', '千'];
const BIG = ['', '万', '亿', '兆'];

function under10000(n: number, leadingZero: boolean): string {
  let out = '';
  let zero = false;
  for (let pos = 3; pos >= 0; pos--) {
    const d = Math.floor(n / 10 ** pos) % 10;
    if (d === 0) {
      if (out || leadingZero) zero = true;
      continue;
    }
    if (zero && (out || leadingZero)) out += '零';
    zero = false;
    out += ZH_DIGITS[d]! + SMALL[pos]!;
  }
  return out;
}

/** 1234567 -> 一百二十三万四千五百六十七; 10 -> 十. */
export function zhCardinal(digits: string): string {
  digits = digits.replace(/^0+(?=\d)/, '');
  if (digits.length > 16) return zhDigits(digits);
  if (/^0+$/.test(digits)) return '零';
  const groups: number[] = [];
  for (let end = digits.length; end > 0; end -= 4) groups.unshift(Number(digits.slice(Math.max(0, end - 4), end)));
  let out = '';
  groups.forEach((g, i) => {
    const big = BIG[groups.length - 1 - i]!;
    if (g === 0) return;
    const needZero = out !== '' && g < 1000;
    out += (needZero ? '零' : '') + under10000(g, false) + big;
  });
  return out.replace(/^一十/, '十');
}

export function zhDigits(digits: string): string {
  return [...digits].map((d) => ZH_DIGITS[+d]).join('');
}

export function zhDecimal(intPart: string, frac: string): string {
  return `${zhCardinal(intPart)}点${zhDigits(frac)}`;
}

export function zhDate(y: string, m: string, d: string): string | null {
  if (Number(m) < 1 || Number(m) > 12 || Number(d) < 1 || Number(d) > 31) return null;
  return `${zhDigits(y)}年${zhCardinal(m)}月${zhCardinal(d)}日`;
}

export function zhTime(h: string, m: string): string {
  return `${zhCardinal(h)}点${Number(m) === 0 ? '整' : zhCardinal(m) + '分'}`;
}
