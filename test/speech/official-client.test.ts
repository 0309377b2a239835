import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The official JS MCP client's own REST layer, used as a real client would use it (addendum A5).
// @ts-expect-error the package ships no type declarations
import { TTSAPI } from 'minimax-mcp-js/build/api/tts.js';
// @ts-expect-error the package ships no type declarations
import { MiniMaxAPI } from 'minimax-mcp-js/build/utils/api.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';

const { emu } = emulatorForFile();
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'speech-peer-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const client = (key: string) => new TTSAPI(new MiniMaxAPI({ apiKey: key, apiHost: emu.speechUrl }));

describe('the official minimax-mcp-js client against the emulator', () => {
  it('saves a decodable file in hex mode and gets a fetchable link in url mode', async () => {
    const out = join(dir, 'hello.mp3');
    const saved = await client('peer-key').generateSpeech({
      text: 'Hello from the official client.',
      model: 'speech-02-hd',
      outputFile: out,
      format: 'mp3',
      sampleRate: 24000,
    });
    expect(saved.audio).toBe(out);
    const p = await ffprobe(readFileSync(out), { ext: 'mp3' });
    expect(p).toMatchObject({ codec: 'mp3', sampleRate: 24000, channels: 1 });

    const linked = await client('peer-key').generateSpeech({
      text: 'Link please.',
      model: 'speech-2.6-turbo',
      outputFormat: 'url',
      subtitleEnable: true,
      outputFile: join(dir, 'link.mp3'),
    });
    expect(linked.audio.startsWith(`${emu.speechUrl}/download/`)).toBe(true);
    expect((await fetch(linked.audio)).status).toBe(200);
    expect(Array.isArray(await (await fetch(linked.subtitle)).json())).toBe(true);
  });

  it('surfaces our errors with the message and the Trace-Id header', async () => {
    await expect(client('').generateSpeech({ text: 'No key', outputFile: join(dir, 'x.mp3') })).rejects.toThrow(
      /login fail: Please carry the API secret key.*Trace ID: [0-9a-f]{32}/,
    );
    await expect(client('peer-key').generateSpeech({ text: 'Who?', voiceId: 'nobody-here', outputFile: join(dir, 'y.mp3') })).rejects.toThrow(
      /voice id not exist.*Trace ID: [0-9a-f]{32}/,
    );
  });
});
