// Numbers, dates, times, currencies and units -> spoken words (English or Chinese), or, with
// normalization off, digits read one by one.
import { EN_DIGITS, enCardinal, enDate, enDecimal, enOrdinal, enTime, enYear } from './numbers-en.js';
import { ZH_DIGITS, zhCardinal, zhDate, zhDecimal, zhDigits, zhTime } from './numbers-zh.js';

export type Lang = 'en' | 'zh';

// [symbol, english plural, english singular, chinese]
const UNITS: [string, string, string, string][] = [
  ['km/h', 'kilometers per hour', 'kilometer per hour', '公里每小时'],
  ['mph', 'miles per hour', 'mile per hour', '英里每小时'],
  ['°C', 'degrees Celsius', 'degree Celsius', '摄氏度'],
  ['°F', 'degrees Fahrenheit', 'degree Fahrenheit', '华氏度'],
  ['kHz', 'kilohertz', 'kilohertz', '千赫兹'],
  ['Hz', 'hertz', 'hertz', '赫兹'],
  ['km', 'kilometers', 'kilometer', '公里'],
  ['cm', 'centimeters', 'centimeter', '厘米'],
  ['mm', 'millimeters', 'millimeter', '毫米'],
  ['kg', 'kilograms', 'kilogram', '公斤'],
  ['mg', 'milligrams', 'milligram', '毫克'],
  ['ml', 'milliliters', 'milliliter', '毫升'],
  ['mL', 'milliliters', 'milliliter', '毫升'],
  ['ms', 'milliseconds', 'millisecond', '毫秒'],
  ['min', 'minutes', 'minute', '分钟'],
  ['GB', 'gigabytes', 'gigabyte', '吉字节'],
  ['MB', 'megabytes', 'megabyte', '兆字节'],
  ['KB', 'kilobytes', 'kilobyte', '千字节'],
  ['TB', 'terabytes', 'terabyte', '太字节'],
  ['kW', 'kilowatts', 'kilowatt', '千瓦'],
  ['m', 'meters', 'meter', '米'],
  ['g', 'grams', 'gram', '克'],
  ['l', 'liters', 'liter', '升'],
  ['L', 'liters', 'liter', '升'],
  ['s', 'seconds', 'second', '秒'],
  ['h', 'hours', 'hour', '小时'],
  ['W', 'watts', 'watt', '瓦'],
];

const CURRENCY: Record<string, [string, string, string]> = {
  $: ['dollars', 'dollar', '美元'],
  '€': ['euros', 'euro', '欧元'],
  '£': ['pounds', 'pound', '英镑'],
  '¥': ['yuan', 'yuan', '元'],
};

export interface NumberReading {
  /** UTF-16 index just after the consumed text. */
  end: number;
  spoken: string;
}

const isLetter = (c: string | undefined) => c !== undefined && /[\p{L}\p{M}]/u.test(c);

function digitsOneByOne(s: string, lang: Lang): string {
  const out: string[] = [];
  for (const c of s) {
    if (c >= '0' && c <= '9') out.push(lang === 'zh' ? ZH_DIGITS[+c]! : EN_DIGITS[+c]!);
    else if (c === '.') out.push(lang === 'zh' ? '点' : 'point');
  }
  return out.join(lang === 'zh' ? '' : ' ');
}

function cardinal(intDigits: string, frac: string | undefined, lang: Lang): string {
  if (lang === 'zh') return frac ? zhDecimal(intDigits, frac) : zhCardinal(intDigits);
  return frac ? enDecimal(intDigits, frac) : enCardinal(intDigits);
}

/**
 * Reads the number starting at `i` (a digit, or a currency sign / minus followed by a digit).
 * Returns null when there is no number there.
 */
export function readNumberAt(s: string, i: number, lang: Lang, normalize: boolean): NumberReading | null {
  const rest = s.slice(i);
  if (!normalize) {
    const m = /^\d+(?:[.,:]\d+)*/.exec(rest);
    return m ? { end: i + m[0].length, spoken: digitsOneByOne(m[0], lang) } : null;
  }
  const join = (parts: string[]) => parts.filter(Boolean).join(lang === 'zh' ? '' : ' ');
  let m = /^(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)/.exec(rest);
  if (m) {
    const spoken = lang === 'zh' ? zhDate(m[1]!, m[2]!, m[3]!) : enDate(m[1]!, m[2]!, m[3]!);
    if (spoken) return { end: i + m[0].length, spoken };
  }
  m = /^([01]?\d|2[0-3]):([0-5]\d)(?![\d:])/.exec(rest);
  if (m) return { end: i + m[0].length, spoken: lang === 'zh' ? zhTime(m[1]!, m[2]!) : enTime(m[1]!, m[2]!) };

  m = /^([-−]?)([$€£¥]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?/.exec(rest);
  if (!m) return null;
  const [whole, minus, cur, intRaw, frac] = m;
  let end = i + whole!.length;
  const intDigits = intRaw!.replace(/,/g, '');
  const one = intDigits === '1' && !frac;
  const sign = minus ? (lang === 'zh' ? '负' : 'minus') : '';
  const after = s.slice(end);

  // A year: "年" after four digits (zh), or a bare 4-digit year in English text.
  if (!minus && !cur && !frac && /^\d{4}$/.test(intRaw!)) {
    if (after.startsWith('年')) return { end, spoken: zhDigits(intDigits) };
    const y = Number(intDigits);
    if (lang === 'en' && y >= 1100 && y <= 2099 && !/^\s?[%\p{L}°]/u.test(after)) return { end, spoken: enYear(intDigits) };
  }
  if (cur) {
    const [pl, sg, zh] = CURRENCY[cur]!;
    const amount = cardinal(intDigits, frac, lang);
    return { end, spoken: lang === 'zh' ? join([sign, amount, zh]) : join([sign, amount, one ? sg : pl]) };
  }
  const ord = /^(st|nd|rd|th)(?![\p{L}\d])/u.exec(after);
  if (ord && !frac && lang === 'en') return { end: end + ord[0].length, spoken: join([sign, enOrdinal(intDigits)]) };
  if (after.startsWith('%') || after.startsWith('％')) {
    end += 1;
    const n = cardinal(intDigits, frac, lang);
    return { end, spoken: lang === 'zh' ? `${sign}百分之${n}` : join([sign, n, 'percent']) };
  }
  const space = after.startsWith(' ') ? 1 : 0;
  for (const [sym, pl, sg, zh] of UNITS) {
    if (after.startsWith(sym, space) && !isLetter(after[space + sym.length]) && !/\d/.test(after[space + sym.length] ?? '')) {
      end += space + sym.length;
      return { end, spoken: join([sign, cardinal(intDigits, frac, lang), lang === 'zh' ? zh : one ? sg : pl]) };
    }
  }
  return { end, spoken: join([sign, cardinal(intDigits, frac, lang)]) };
}
