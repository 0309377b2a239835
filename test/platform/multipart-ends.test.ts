import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { multipartRequest, rawRequest } from '../helpers/raw.js';

const { emu, ctl } = emulatorForFile();
const KEY = { 'X-API-Key': 'multipart-ends-key' };

/** Bodies that end without the closing boundary; the client keeps its socket open after them. */
const TRUNCATED = {
  'a skipped field part': '--B\r\nContent-Disposition: form-data; name="x"; filename="a"\r\n\r\n8\r\n',
  'a second audio part':
    '--B\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\n\r\nRIFF\r\n--B\r\nContent-Disposition: form-data; name="audio"; filename="b.wav"\r\n\r\n8\r\n',
  'the audio part itself cut': '--B\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\n\r\nRIFF0000WAVE',
  'a text field only': '--B\r\nContent-Disposition: form-data; name="scene"\r\n\r\nimage',
  'a file part cut in its headers': '--B\r\nContent-Disposition: form-da',
};

/** Every platform route that takes a request body (multipart readers and JSON readers alike). */
const ROUTES = [
  '/v1/audio/ai-detect',
  '/v1/files/upload',
  '/v1/voice/save',
  '/v1/speech-to-text',
  '/v1/diarize',
  '/v1/audio/podcast',
  '/v1/text-to-speech',
  '/v1/text-to-speech/stream',
];

describe('an unterminated multipart body is answered when the request ends', () => {
  for (const route of ROUTES) {
    for (const [name, body] of Object.entries(TRUNCATED)) {
      it(`${route}: ${name}`, async () => {
        const res = await rawRequest(emu.platformUrl, multipartRequest(route, body, KEY), { waitMs: 15_000 });
        expect(res.answered).toBe(true);
        // Synthesis and recognition answer parameter errors with HTTP 400 (10001); the others with 200.
        expect(res.status).toBe(route.startsWith('/v1/text-to-speech') || route === '/v1/speech-to-text' ? 400 : 200);
        const parsed = JSON.parse(res.body);
        expect(parsed.succeed).toBe(false);
        expect(parsed.error_code).toBe(10001);
      });
    }
  }

  it('the journal entry of such a request is closed', async () => {
    await ctl.clearJournal();
    await rawRequest(emu.platformUrl, multipartRequest('/v1/audio/ai-detect', TRUNCATED['a skipped field part'], KEY), { waitMs: 15_000 });
    const j = await ctl.journal();
    const entries = (j.body.entries ?? j.body.data ?? j.body) as Array<Record<string, unknown>>;
    const entry = entries.find((e) => String(e.path ?? e.url ?? '').includes('ai-detect'));
    expect(entry).toBeDefined();
    expect(entry!.status).toBe(200);
  });
});
