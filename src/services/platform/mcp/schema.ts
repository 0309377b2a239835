/**
 * Wire shapes of /mcp (JSON-RPC 2.0, MCP methods). The tool argument schemas are not here: each tool
 * reuses the zod schema of the HTTP operation of the same name (tools.ts).
 */
import * as z from 'zod';

/** Protocol versions echoed by `initialize`; anything else is answered with the first (addendum B1). */
export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[0];

export const SERVER_NAME = 'speech-emulator-voice-platform';

/** The key every tool requires, added to each HTTP schema. */
export const apiKeyArgument = z.string().min(1).describe('API key of the voice platform (the same key as the X-API-Key header of the HTTP operations).');

export const toolsCallParams = z.object({
  name: z.string({ error: 'params.name must be a string naming a tool' }),
  arguments: z.unknown().optional(),
});

export interface ToolListEntry {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required: string[]; [k: string]: unknown };
}

export interface ToolResult {
  content: { type: 'text'; text: string }[];
  isError: boolean;
}

export function textResult(value: unknown, isError: boolean): ToolResult {
  return { content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }], isError };
}
