import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';

/**
 * Peer: the official MCP TypeScript SDK client (`Client` + `StreamableHTTPClientTransport`) against
 * `${platformUrl}/mcp`, doing what an agent does: connect, list tools, clone a voice, list it, speak
 * with it, delete it, and get an unknown tool rejected.
 */
const KEY = 'mcp-sdk-peer-key';
const { emu } = emulatorForFile();
let client: Client;

type TextResult = { content: { type: string; text: string }[]; isError?: boolean };
const json = (r: unknown) => JSON.parse((r as TextResult).content[0]!.text);

beforeAll(async () => {
  client = new Client({ name: 'sdk-peer-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${emu.platformUrl}/mcp`)));
});
afterAll(async () => {
  await client.close();
});

describe('MCP SDK client over Streamable HTTP', () => {
  it('connects: the server names itself and offers tools', () => {
    expect(client.getServerVersion()?.name).toEqual(expect.any(String));
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
  });

  it('lists the six tools with their input schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'diarize',
      'text_to_speech_generate',
      'text_to_speech_stream',
      'voice_delete',
      'voice_list',
      'voice_save',
    ]);
    for (const t of tools) expect(t.inputSchema.required).toContain('apiKey');
    expect(await client.ping()).toEqual({});
  });

  it('saves a voice, lists it, synthesizes with it and deletes it', async () => {
    const saved = (await client.callTool({
      name: 'voice_save',
      arguments: { apiKey: KEY, voice_id: 'sdk-voice', ref_audio: 'https://cdn.emulator.test/audio/ref-5s.wav', ref_text: 'A short reference recording.' },
    })) as TextResult;
    expect(saved.isError, saved.content[0]!.text).toBe(false);
    expect(json(saved)).toMatchObject({ error_code: 0, succeed: true });

    const listed = await client.callTool({ name: 'voice_list', arguments: { apiKey: KEY } });
    expect(json(listed).data.list.map((v: { voice_id: string }) => v.voice_id)).toEqual(['sdk-voice']);

    const spoken = (await client.callTool({
      name: 'text_to_speech_generate',
      arguments: { apiKey: KEY, voice_id: 'sdk-voice', generate_text: 'Hello from a cloned voice.', language: 'en', audio_format: 'wav' },
    })) as TextResult;
    expect(spoken.isError, spoken.content[0]!.text).toBe(false);
    const audio = json(spoken);
    const bytes = Buffer.from(audio.audio_base64, 'base64');
    expect(bytes.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(bytes.readUInt32LE(24)).toBe(audio.sample_rate);
    expect(audio.duration_ms).toBeGreaterThan(500);
    const download = await fetch(audio.download_url);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);

    const deleted = await client.callTool({ name: 'voice_delete', arguments: { apiKey: KEY, voice_id: 'sdk-voice' } });
    expect(json(deleted)).toMatchObject({ error_code: 0, succeed: true });
    expect(json(await client.callTool({ name: 'voice_list', arguments: { apiKey: KEY } })).data.list).toEqual([]);
  });

  it('a failing operation is a tool result with isError, not a protocol error', async () => {
    const r = (await client.callTool({ name: 'text_to_speech_generate', arguments: { voice_id: 'x', generate_text: 'x' } })) as TextResult;
    expect(r.isError).toBe(true);
    expect(json(r).error_code).toBe(10003);
  });

  it('an unknown tool is rejected with -32602 "unknown tool"', async () => {
    await expect(client.callTool({ name: 'make_coffee', arguments: { apiKey: KEY } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('unknown tool'),
    });
  });
});
