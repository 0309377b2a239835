// A LaTeX formula read aloud, the way a screen reader would: "\frac{a}{b}" -> "a over b".

const COMMANDS: Record<string, string> = {
  alpha: 'alpha',
  beta: 'beta',
  gamma: 'gamma',
  delta: 'delta',
  epsilon: 'epsilon',
  theta: 'theta',
  lambda: 'lambda',
  mu: 'mu',
  pi: 'pi',
  sigma: 'sigma',
  tau: 'tau',
  phi: 'phi',
  omega: 'omega',
  Delta: 'delta',
  Sigma: 'sigma',
  Omega: 'omega',
  infty: 'infinity',
  sum: 'the sum of',
  prod: 'the product of',
  int: 'the integral of',
  lim: 'the limit of',
  to: 'to',
  rightarrow: 'goes to',
  cdot: 'times',
  times: 'times',
  div: 'divided by',
  pm: 'plus or minus',
  leq: 'less than or equal to',
  geq: 'greater than or equal to',
  neq: 'not equal to',
  approx: 'approximately',
  sin: 'sine',
  cos: 'cosine',
  tan: 'tangent',
  log: 'log',
  ln: 'natural log',
  partial: 'partial',
  nabla: 'nabla',
  in: 'in',
  left: '',
  right: '',
};
const SYMBOLS: Record<string, string> = {
  '+': 'plus',
  '-': 'minus',
  '=': 'equals',
  '<': 'less than',
  '>': 'greater than',
  '/': 'over',
  '*': 'times',
  '!': 'factorial',
  '(': '',
  ')': '',
  '[': '',
  ']': '',
  ',': '',
  '|': 'absolute',
};
const DIGIT = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/** Spoken words of a formula (the text between `$$` delimiters). */
export function speakLatex(raw: string): string {
  // A doubled backslash before a command name (as the spec asks clients to write) reads as one.
  const src = raw.replace(/\\\\(?=[a-zA-Z])/g, '\\');
  let i = 0;
  const group = (): string => {
    while (src[i] === ' ') i++;
    if (src[i] === '{') {
      i++;
      const start = i;
      let depth = 1;
      while (i < src.length && depth > 0) {
        if (src[i] === '{') depth++;
        else if (src[i] === '}') depth--;
        i++;
      }
      return speakLatex(src.slice(start, i - 1));
    }
    return atom();
  };
  const atom = (): string => {
    const c = src[i];
    if (c === undefined) return '';
    if (c === '\\') {
      const m = /^\\([a-zA-Z]+|.)/.exec(src.slice(i))!;
      i += m[0].length;
      const name = m[1]!;
      if (name === 'frac') {
        const a = group();
        const b = group();
        return `${a} over ${b}`;
      }
      if (name === 'sqrt') return `the square root of ${group()}`;
      return COMMANDS[name] ?? name;
    }
    i++;
    if (c === '^') {
      const e = group();
      return e === 'two' ? 'squared' : e === 'three' ? 'cubed' : `to the power of ${e}`;
    }
    if (c === '_') return `sub ${group()}`;
    if (c >= '0' && c <= '9') {
      let n = c;
      while (src[i] !== undefined && /[0-9.]/.test(src[i]!)) n += src[i++];
      return [...n].map((d) => (d === '.' ? 'point' : DIGIT[+d])).join(' ');
    }
    if (c in SYMBOLS) return SYMBOLS[c]!;
    if (/\p{L}/u.test(c)) return c;
    return '';
  };
  const words: string[] = [];
  while (i < src.length) {
    const w = group();
    if (w) words.push(w);
  }
  return words.join(' ').replace(/\s+/g, ' ').trim();
}
