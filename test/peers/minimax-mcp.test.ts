import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { control, emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { minimaxClient, textOf } from './minimax.js';

/**
 * Peer: the official MiniMax MCP server for JavaScript (npm `minimax-mcp-js`), spawned over stdio and
 * driven by the MCP SDK client, pointed at the speech listener by MINIMAX_API_HOST alone. Its
 * text_to_audio tool coerces the model to speech-02-hd, sends language_boost "auto", subtitle_enable
 * false, emotion "happy", 32 kHz 128 kbps mono MP3, and reads the Trace-Id header on errors.
 */
const KEY = 'minimax-peer-key';
const { emu } = emulatorForFile();
let dir: string;
/** One url-mode server process for the tests that use it (spawning costs a second or two). */
let urlClient: Client;

const connect = (mode: 'url' | 'local') => minimaxClient({ speechUrl: emu.speechUrl, key: KEY, mode, basePath: dir, name: 'minimax-peer-test' });

async function probe(file: string) {
  return (await ffprobe(file)).raw as {
    streams: { codec_name: string; sample_rate: string; channels: number; bit_rate: string }[];
    format: { duration: string };
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'minimax-peer-'));
  urlClient = await connect('url');
}, 60_000);
afterAll(async () => {
  await urlClient?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('minimax-mcp-js against the speech listener', () => {
  it('url mode: text_to_audio answers a URL served by the emulator whose bytes decode as the MP3 it asked for', { timeout: 60_000 }, async () => {
    const { tools } = await urlClient.listTools();
    expect(tools.map((t) => t.name)).toContain('text_to_audio');
    const text = textOf(
      await urlClient.callTool({ name: 'text_to_audio', arguments: { text: 'Hello from the emulator.', voiceId: 'female-shaonv', model: 'speech-2.6-hd' } }),
    );
    const m = /Audio URL: (\S+?)\.?\s/.exec(`${text} `);
    expect(m, text).not.toBeNull();
    const url = m![1]!;
    expect(url.startsWith(emu.speechUrl)).toBe(true);
    const res = await fetch(url); // a plain GET with no credentials, as the client's users do
    expect(res.status).toBe(200);
    const file = join(dir, 'url-mode.mp3');
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    const p = await probe(file);
    expect(p.streams[0]).toMatchObject({ codec_name: 'mp3', sample_rate: '32000', channels: 1, bit_rate: '128000' });
    expect(Number(p.format.duration)).toBeGreaterThan(0.5);

    // What the client sent, as the journal saw it: the coerced model and the fixed extras.
    const journal = await control(emu.speechUrl).journal({ path: '/v1/t2a_v2' });
    const entries = journal.body.entries ?? journal.body;
    const sent = entries[0].request.body; // newest first
    expect(sent).toMatchObject({ model: 'speech-02-hd', language_boost: 'auto', subtitle_enable: false, output_format: 'url' });
    expect(entries[0].status).toBe(200);
  });

  it('local mode: the file it writes decodes', { timeout: 60_000 }, async () => {
    const client = await connect('local');
    const text = await client
      .callTool({ name: 'text_to_audio', arguments: { text: 'Saved on disk.', outputDirectory: 'out' } })
      .then(textOf)
      .finally(() => client.close());
    expect(text).toMatch(/^Audio file saved: /);
    const files = await readdir(join(dir, 'out'));
    expect(files).toHaveLength(1);
    const file = join(dir, 'out', files[0]!);
    expect(existsSync(file)).toBe(true);
    const p = await probe(file);
    expect(p.streams[0]).toMatchObject({ codec_name: 'mp3', sample_rate: '32000', channels: 1 });
  });

  it('an error reaches the client with its message and the Trace-Id header value', async () => {
    await control(emu.speechUrl).addFault({ service: 'speech', path: '/v1/t2a_v2', times: 1, fault: { code: 1039 } });
    const text = textOf(await urlClient.callTool({ name: 'text_to_audio', arguments: { text: 'This one fails.' } }));
    expect(text).toContain('Failed to generate audio');
    expect(text).toContain('token limit');
    expect(text).toMatch(/Trace ID: [0-9a-f]{32}/);
  });
});
