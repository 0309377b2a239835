// The official MiniMax MCP server for JavaScript (npm `minimax-mcp-js`) as the peer tests run it.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

function serverEntry(): string {
  const require = createRequire(import.meta.url);
  const pkgFile = require.resolve('minimax-mcp-js/package.json');
  const bin = (require(pkgFile) as { bin: Record<string, string> }).bin['minimax-mcp-js']!;
  return join(dirname(pkgFile), bin);
}

/**
 * Spawns the server over stdio, pointed at a speech listener by MINIMAX_API_HOST alone, and connects
 * an MCP SDK client to it; `basePath` is where the server writes files in local mode.
 */
export async function minimaxClient(opts: { speechUrl: string; key: string; mode: 'url' | 'local'; basePath: string; name: string }): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [serverEntry()],
    env: {
      MINIMAX_API_HOST: opts.speechUrl,
      MINIMAX_API_KEY: opts.key,
      MINIMAX_RESOURCE_MODE: opts.mode,
      MINIMAX_MCP_BASE_PATH: opts.basePath,
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: opts.name, version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The text of a tool result's first content item. */
export const textOf = (r: unknown) => (r as { content: { type: string; text: string }[] }).content[0]?.text ?? '';
