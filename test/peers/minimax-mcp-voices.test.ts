import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { minimaxClient, textOf } from './minimax.js';

/**
 * Peer: the official MiniMax MCP server for JavaScript (npm `minimax-mcp-js`) over stdio, pointed at the
 * speech listener by MINIMAX_API_HOST alone, using the voice tools: `list_voices` (POST /v1/get_voice
 * with voice_type all), `voice_clone` (multipart upload with purpose voice_clone, then /v1/voice_clone
 * with text and its default model, then a plain GET of demo_audio), `voice_design` (hex trial_audio)
 * and `text_to_audio` with the cloned and the designed voice.
 */
const KEY = 'minimax-voices-peer-key';
const { emu } = emulatorForFile();
let dir: string;
let client: Client;

async function codec(file: string) {
  const p = await ffprobe(file);
  return { codec: p.codec, sampleRate: p.sampleRate, seconds: Number(p.raw.format.duration) };
}

/** The newest file written under a folder of the output directory. */
async function newestIn(sub: string, before: Set<string>): Promise<string> {
  const files = (await readdir(join(dir, sub))).filter((f) => !before.has(f));
  expect(files).toHaveLength(1);
  return join(dir, sub, files[0]!);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'minimax-voices-peer-'));
  client = await minimaxClient({ speechUrl: emu.speechUrl, key: KEY, mode: 'local', basePath: dir, name: 'minimax-voices-peer-test' });
}, 60_000);
afterAll(async () => {
  await client?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('minimax-mcp-js voice tools against the speech listener', () => {
  it('list_voices names the system voices', { timeout: 60_000 }, async () => {
    const text = textOf(await client.callTool({ name: 'list_voices', arguments: {} }));
    expect(text).toMatch(/^Success\. System voices: /);
    expect(text).toContain('Name: Wise Woman, ID: Wise_Woman');
    expect(text).toMatch(/Cloned voices: $/);
  });

  it(
    'voice_clone uploads a sample and clones it, the demo decodes; text_to_audio speaks with the clone, which is then listed',
    { timeout: 120_000 },
    async () => {
      // A 13 s sample made by the emulator (wav), saved where the tool reads it.
      const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'speech-02-hd',
          text: 'The quick brown fox jumps over the lazy dog. '.repeat(4),
          voice_setting: { voice_id: 'male-qn-qingse' },
          audio_setting: { format: 'wav', sample_rate: 16000 },
        }),
      });
      const sample = join(dir, 'sample.wav');
      await writeFile(sample, Buffer.from(((await res.json()) as { data: { audio: string } }).data.audio, 'hex'));

      const cloned = textOf(
        await client.callTool({
          name: 'voice_clone',
          arguments: { voiceId: 'PeerClone001', audioFile: sample, text: 'Hello from my new voice.', outputDirectory: 'clone' },
        }),
      );
      const m = /^Voice cloning successful: PeerClone001 \(Demo audio: (.+)\)$/.exec(cloned);
      expect(m, cloned).not.toBeNull();
      expect(await codec(m![1]!)).toMatchObject({ codec: 'mp3', sampleRate: 32000 });

      const spoken = textOf(
        await client.callTool({ name: 'text_to_audio', arguments: { text: 'Spoken by the clone.', voiceId: 'PeerClone001', outputDirectory: 'tts-clone' } }),
      );
      expect(spoken).toMatch(/^Audio file saved: /);
      const file = await newestIn('tts-clone', new Set());
      expect((await codec(file)).codec).toBe('mp3');

      const listed = textOf(await client.callTool({ name: 'list_voices', arguments: {} }));
      expect(listed).toContain('ID: PeerClone001');
    },
  );

  it('voice_design saves the trial audio; text_to_audio speaks with the designed voice', { timeout: 120_000 }, async () => {
    const designed = textOf(
      await client.callTool({
        name: 'voice_design',
        arguments: { prompt: 'A warm, deep male narrator', previewText: 'Once upon a time.', outputDirectory: 'design' },
      }),
    );
    const m = /^Success\. Voice ID: (ttv-voice-\d{16}-[A-Za-z0-9]{8})\. Voice saved as: (.+)$/.exec(designed);
    expect(m, designed).not.toBeNull();
    expect(await codec(m![2]!)).toMatchObject({ codec: 'mp3', sampleRate: 32000 });

    const spoken = textOf(
      await client.callTool({ name: 'text_to_audio', arguments: { text: 'Spoken by the designed voice.', voiceId: m![1]!, outputDirectory: 'tts-design' } }),
    );
    expect(spoken).toMatch(/^Audio file saved: /);
    const file = await newestIn('tts-design', new Set());
    const p = await codec(file);
    expect(p.codec).toBe('mp3');
    expect(p.seconds).toBeGreaterThan(1);
  });
});
