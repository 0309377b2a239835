import { describe, expect, test } from 'vitest';
import { decimalLiteralsOf, parseJson } from '../../src/core/http/number-literals.js';

describe('numbers written with a fraction or an exponent', () => {
  test('each is found with its path and offset, through objects, arrays and escaped keys; strings and integers are not', () => {
    const text = '{"a":1,"t":"v 2.0 e5","b":{"c":[1,2.50,{"d":-1e3}],"e\\"q":0.0},"f":[[3E+2]]}';
    const found = decimalLiteralsOf(parseJson(text)).map(({ path, index, source }) => ({ path, index, source }));
    expect(found).toEqual([
      { path: ['b', 'c', 1], index: text.indexOf('2.50'), source: '2.50' },
      { path: ['b', 'c', 2, 'd'], index: text.indexOf('-1e3'), source: '-1e3' },
      { path: ['b', 'e"q'], index: text.indexOf('0.0'), source: '0.0' },
      { path: ['f', 0, 0], index: text.indexOf('3E+2'), source: '3E+2' },
    ]);
  });

  test('a text without any, or a value that is not an object, notes nothing', () => {
    expect(decimalLiteralsOf(parseJson('{"a":[1,2,{"b":"1.5"}]}'))).toEqual([]);
    expect(decimalLiteralsOf(parseJson('1.5'))).toEqual([]);
    expect(decimalLiteralsOf({ a: 0 })).toEqual([]);
  });

  test('the window holds up to 16 characters each side, starting where the text allows', () => {
    const [near] = decimalLiteralsOf(parseJson('{"p":0.0}'));
    expect(near!.window).toEqual({ text: '{"p":0.0}', at: 5 });
    const text = `{"long_field_name_here":${'1'.repeat(3)}.5,"and_after_it":true}`;
    const [far] = decimalLiteralsOf(parseJson(text));
    expect(far!.window.at).toBe(16);
    expect(far!.window.text).toBe(text.slice(far!.index - 16, far!.index + 16));
  });
});
