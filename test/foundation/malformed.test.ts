import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu } = emulatorForFile();

/** JSON text of an array nested `depth` levels: `[[[...1...]]]`. */
function deepArray(depth: number): string {
  return '['.repeat(depth) + '1' + ']'.repeat(depth);
}
/** JSON text of an object nested `depth` levels: `{"a":{"a":...}}`. */
function deepObject(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}
const DEPTH = 20_000;

/** Posts a raw JSON text (the deep value spliced in at `@`). */
function post(url: string, template: string, deep: string, headers: Record<string, string> = {}, method = 'POST') {
  return call(url, { method, body: template.replace('@', deep), headers: { 'content-type': 'application/json', ...headers } });
}

describe('deeply nested JSON is a parameter error in the endpoint shape, never a 500', () => {
  for (const [kind, deep] of [
    ['array', deepArray(DEPTH)],
    ['object', deepObject(DEPTH)],
  ] as const) {
    describe(`nested ${kind}`, () => {
      it('control plane: reset, journal and faults answer 400 with the control shape', async () => {
        for (const [method, path] of [
          ['POST', '/reset'],
          ['DELETE', '/journal'],
          ['POST', '/faults'],
          ['DELETE', '/faults'],
        ] as const) {
          const res = await post(`${emu.platformUrl}/_emulator${path}`, method === 'POST' && path === '/faults' ? '{"path":@}' : '@', deep, {}, method);
          expect(res.status, `${method} ${path}`).toBe(400);
          expect(typeof res.body.error.message).toBe('string');
          expect(res.text.length).toBeLessThan(2000);
        }
      });

      it('POST /v1/speech-to-text with a deep audio_format: 400 10001 naming audio_format', async () => {
        const res = await post(`${emu.platformUrl}/v1/speech-to-text`, '{"audio_data":"AAAA","audio_format":@}', deep, { 'x-api-key': 'deep-key' });
        expect(res.status).toBe(400);
        expect(res.body.error_code).toBe(10001);
        expect(res.body.error_message).toMatch(/audio_format/);
        expect(res.text.length).toBeLessThan(2000);
      });

      it('POST /v1/audio/podcast with a deep speed: 10001 naming speed', async () => {
        const res = await post(`${emu.platformUrl}/v1/audio/podcast`, '{"dialogueText":"A: hi\\nB: hello","speed":@}', deep, { 'x-api-key': 'deep-key' });
        expect(res.status).toBe(200);
        expect(res.body.error_code).toBe(10001);
        expect(res.body.error_message).toMatch(/speed/);
      });

      it('platform synthesis with a deep voice_id: 400 10001', async () => {
        const res = await post(`${emu.platformUrl}/v1/text-to-speech`, '{"voice_id":@,"generate_text":"hi"}', deep, { 'x-api-key': 'deep-key' });
        expect(res.status).toBe(400);
        expect(res.body.error_code).toBe(10001);
      });

      it('POST /v1/voice/save and /v1/diarize: parameter errors in the envelope', async () => {
        for (const [path, template] of [
          ['/v1/voice/save', '{"voice_name":@}'],
          ['/v1/diarize', '{"url":@}'],
          ['/v1/audio/ai-detect', '{"audio_url":@}'],
        ]) {
          const res = await post(`${emu.platformUrl}${path!}`, template!, deep, { 'x-api-key': 'deep-key' });
          expect(res.status, path).toBe(200);
          expect(res.body.succeed, path).toBe(false);
          expect(res.body.error_code, path).toBe(10001);
        }
      });

      it('speech T2A with a deep field: HTTP 200 base_resp 2013', async () => {
        for (const template of ['{"model":@,"text":"hi"}', '{"model":"speech-02-turbo","text":"hi","voice_setting":@}', '@']) {
          const res = await post(`${emu.speechUrl}/v1/t2a_v2`, template, deep, { authorization: 'Bearer deep-key' });
          expect(res.status, template).toBe(200);
          expect(res.body.base_resp.status_code, template).toBe(2013);
          expect(res.text.length).toBeLessThan(4000);
        }
      });
    });
  }
});

describe('describeValue', () => {
  it('quotes a value in a few characters whatever its depth or size', async () => {
    const { describeValue } = await import('../../src/core/http/describe.js');
    expect(describeValue(JSON.parse(deepArray(DEPTH)))).toBe('[[[[…]]]]');
    expect(describeValue(JSON.parse(deepObject(DEPTH)))).toBe('{"a":{"a":{"a":{…}}}}');
    expect(describeValue('x'.repeat(10_000)).length).toBeLessThan(100);
    expect(describeValue(Array.from({ length: 100_000 }, (_, i) => i)).length).toBeLessThan(100);
    expect(describeValue({ speed: 'fast' })).toBe('{"speed":"fast"}');
  });
});
