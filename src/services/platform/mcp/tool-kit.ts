/**
 * What a tool is: the HTTP operation it mirrors (error family and capability), its argument schema
 * (that operation's own zod schema) and a run function calling the area's model directly.
 */
import * as z from 'zod';
import type { Account, Capability } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import type { FamilyName } from '../families.js';
import { apiKeyArgument, type ToolListEntry } from './schema.js';

export interface ToolContext {
  emu: Emulator;
}

export interface ToolDef<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  /** The HTTP operation's zod schema of its arguments (without apiKey). */
  args: S;
  /** Error family of the mirrored HTTP operation: its codes are the tool's error codes. */
  family: FamilyName;
  capability: Capability;
  /** Runs with the arguments parsed by `args` (never parsed again); answers a JSON value shown as the result text. Throws PlatformError. */
  run(ctx: ToolContext, account: Account, args: z.output<S>): Promise<unknown>;
}

/** A tool with typed arguments, kept in one list with the others. */
export function defineTool<S extends z.ZodObject>(tool: ToolDef<S>): ToolDef {
  return tool as unknown as ToolDef;
}

/** A tool's full argument schema: the operation's own fields plus the required apiKey. */
export function argumentSchema(tool: ToolDef): z.ZodObject {
  return tool.args.extend({ apiKey: apiKeyArgument });
}

/**
 * The tool's `inputSchema`, generated from its zod schema (input side: fields with defaults are optional).
 * `$schema` is dropped: MCP's default dialect is the same draft, and clients expect a bare object schema.
 */
export function listEntry(tool: ToolDef): ToolListEntry {
  const json = z.toJSONSchema(argumentSchema(tool), { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema: _dialect, type: _type, properties, required, ...rest } = json;
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: {
      type: 'object',
      properties: (properties as Record<string, unknown>) ?? {},
      required: (required as string[] | undefined) ?? ['apiKey'],
      ...rest,
    },
  };
}
