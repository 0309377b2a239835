import { describe, expect, test } from 'vitest';
import {
  checkLatex,
  checkPauseMarkers,
  codePoints,
  countText,
  invisibleRatio,
  languageOf,
  parsePronunciations,
  withoutMarkers,
} from '../../src/services/speech/text.js';

describe('speech text rules', () => {
  test('lengths count code points, not UTF-16 units', () => {
    expect(codePoints('a😀b')).toBe(3);
    expect(codePoints('你好')).toBe(2);
    expect(codePoints('')).toBe(0);
  });

  test('pause markers: value range and two decimals, between pronounceable text, never consecutive', () => {
    expect(checkPauseMarkers('no markers at all')).toBeNull();
    expect(checkPauseMarkers('Hello <#1.5#> world')).toBeNull();
    expect(checkPauseMarkers('Hello <#0.01#> world <#99.99#> again')).toBeNull();
    expect(checkPauseMarkers('Hello <#0#> world')).toBe('text pause marker <#0#> must hold seconds in [0.01, 99.99] with at most two decimals');
    expect(checkPauseMarkers('Hello <#1.555#> world')).toMatch(/^text pause marker <#1.555#> must hold seconds/);
    expect(checkPauseMarkers('Hello <#abc#> world')).toMatch(/^text pause marker <#abc#> must hold seconds/);
    expect(checkPauseMarkers('<#1#> world')).toBe('text pause marker <#1#> must sit between two pronounceable pieces of text');
    expect(checkPauseMarkers('Hello <#1#>')).toBe('text pause marker <#1#> must sit between two pronounceable pieces of text');
    expect(checkPauseMarkers('Hello <#1#> <#2#> world')).toBe('text pause markers must not be used consecutively (<#1#> then <#2#>)');
    expect(withoutMarkers('a<#1#>b')).toBe('a b');
  });

  test('latex_read: an odd number of $$ delimiters is a problem', () => {
    expect(checkLatex('$$x^2$$ and $$y$$')).toBeNull();
    expect(checkLatex('no formula')).toBeNull();
    expect(checkLatex('$$x^2$$ and $$y')).toBe('text has 3 "$$" delimiters: with voice_setting.latex_read every formula must be wrapped in $$ at both ends');
  });

  test('pronunciation entries: <text>/<replacement>, annotations of (syllable tone) groups', () => {
    expect(parsePronunciations(['omg/oh my god', '处理/(chu3)(li3)'])).toEqual([
      { text: 'omg', replacement: 'oh my god' },
      { text: '处理', replacement: '(chu3)(li3)' },
    ]);
    expect(parsePronunciations(['a/b', 'nothing'])).toBe('pronunciation_dict.tone[1] must have the shape <text>/<replacement>');
    expect(parsePronunciations([' /x'])).toBe('pronunciation_dict.tone[0] must have the shape <text>/<replacement>');
    expect(parsePronunciations(['处理/(chu6)'])).toBe('pronunciation_dict.tone[0] annotation must be (<syllable><tone digit 1-5>) groups, such as (chu3)(li3)');
    // The first slash splits: the replacement may hold more.
    expect(parsePronunciations(['a/b/c'])).toEqual([{ text: 'a', replacement: 'b/c' }]);
  });

  test('invisible ratio (E20): ASCII control characters but tab and newline, over code points, 4 decimals', () => {
    expect(invisibleRatio('')).toBe(0);
    expect(invisibleRatio('ab\n\t')).toBe(0);
    expect(invisibleRatio('a\rb\u0001')).toBe(0.5);
    expect(invisibleRatio('abc\u007f')).toBe(0.25);
    expect(invisibleRatio('ab\u0000')).toBe(0.3333);
    // Zero-width, format, private-use characters and emoji sequences are not invisible characters.
    expect(invisibleRatio('a\u200bb\u200b')).toBe(0);
    expect(invisibleRatio('abc\ue000\ufe0f\u2060')).toBe(0);
  });

  test('counts: every code point billed once and a Chinese character twice (E20), words as Latin runs, CJK characters and digits', () => {
    expect(countText('Hello, world!')).toEqual({ usageCharacters: 13, wordCount: 2 });
    expect(countText("don't stop")).toEqual({ usageCharacters: 10, wordCount: 2 });
    expect(countText('你好 world 42')).toEqual({ usageCharacters: 13, wordCount: 5 });
    expect(countText('Hi <#1#> there')).toEqual({ usageCharacters: 9, wordCount: 2 });
    expect(countText('... !!!')).toEqual({ usageCharacters: 7, wordCount: 0 });
    expect(countText('今天是不是很开心呀(laughs)，当然了！').usageCharacters).toBe(34);
    expect(countText('ひらがな한국어\u3400\uf900\u{20000}').usageCharacters).toBe(7 + 2 + 2 + 1);
  });

  test('language: the boost when it names one, else Han against other letters', () => {
    expect(languageOf('hello', 'Japanese')).toBe('ja');
    expect(languageOf('hello', 'auto')).toBe('en');
    expect(languageOf('你好你好 hi', null)).toBe('zh');
    expect(languageOf('hello 你好', undefined)).toBe('en');
  });
});
