/**
 * The MCP methods of /mcp: `initialize`, `ping`, `tools/list`, `tools/call`. Nothing of HTTP: the route
 * passes the request's fault directive and learns the account a tool call resolved.
 */
import type { Account } from '../../../core/state/accounts.js';
import { admit, type AdmissionFaultField, type KeyTexts } from '../../../core/http/admission.js';
import type { Emulator } from '../../../core/emulator.js';
import { VERSION } from '../../../version.js';
import { failure as envelopeFailure, PlatformError, resolveCode } from '../envelope.js';
import { FAMILIES, type Family } from '../families.js';
import { readWorded } from '../issues.js';
import { refusalError } from '../refusal.js';
import { RPC_ERRORS, RpcFault, type Dispatcher } from './jsonrpc.js';
import { LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS, SERVER_NAME, textResult, toolsCallParams, type ToolResult } from './schema.js';
import { argumentSchema, listEntry, type ToolDef } from './tool-kit.js';

export interface CallHooks {
  /** A field of the request's fault directive, taken (marked expressed) when a tool call asks for it. */
  fault(field: AdmissionFaultField): number | undefined;
  /** The account named by `arguments.apiKey` (for the journal). */
  onAccount(account: Account): void;
  logError(err: unknown, what: string): void;
}

/** Key texts of tool calls (the key travels in `arguments.apiKey`). */
const TOOL_KEY_TEXTS: KeyTexts = {
  missing: 'apiKey is missing: pass the API key in arguments.apiKey',
  invalid: 'apiKey is not a valid API key',
  disabled: 'apiKey belongs to a disabled API key',
};

/** How argument problems are worded: `field: rule`, unknown keys named. */
const ARGUMENT_WORDING = { withKeys: true, none: 'arguments are invalid' };

export function dispatcher(emu: Emulator, tools: ToolDef[], hooks: CallHooks): Dispatcher {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return {
    methods: {
      initialize: (params) => {
        const asked = params && !Array.isArray(params) ? params.protocolVersion : undefined;
        const protocolVersion = typeof asked === 'string' && (PROTOCOL_VERSIONS as readonly string[]).includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
        return { protocolVersion, capabilities: { tools: { listChanged: false } }, serverInfo: { name: SERVER_NAME, version: VERSION } };
      },
      ping: () => ({}),
      'tools/list': () => ({ tools: tools.map(listEntry) }),
      'tools/call': async (params) => {
        const parsed = readWorded(toolsCallParams, params ?? {}, ARGUMENT_WORDING);
        if (!parsed.success || Array.isArray(params)) {
          throw new RpcFault(RPC_ERRORS.invalidParams, `invalid params: ${parsed.success ? 'params must be an object' : parsed.text}`);
        }
        const tool = byName.get(parsed.data.name);
        if (!tool) throw new RpcFault(RPC_ERRORS.invalidParams, `unknown tool: ${parsed.data.name} (tools: ${tools.map((t) => t.name).join(', ')})`);
        return callTool(emu, tool, parsed.data.arguments, hooks);
      },
    },
    onInternalError: (err, method) => hooks.logError(err, method),
  };
}

/**
 * One tool call: the admission path (core/http/admission.ts: fault code, fault status, the key of
 * `arguments.apiKey`, capability), then the arguments parsed once with the tool's schema, then the
 * operation with typed arguments. Every failure is a result with `isError: true` whose text is the
 * operation's error envelope (code and message), as its HTTP operation would have answered.
 */
export async function callTool(emu: Emulator, tool: ToolDef, rawArgs: unknown, hooks: CallHooks): Promise<ToolResult> {
  const family: Family = FAMILIES[tool.family];
  const fail = (err: PlatformError) => textResult(envelopeFailure(resolveCode(family, err.codeOrKind), err.message), true);
  try {
    const args = rawArgs ?? {};
    const admission = admit(emu, {
      fault: hooks.fault,
      // Read only once the faults let the call pass: arguments that are no object, or a key that is no string, refuse here.
      key: () => {
        if (typeof args !== 'object' || Array.isArray(args)) throw new PlatformError('param', 'arguments must be an object');
        const key = (args as Record<string, unknown>).apiKey;
        if (key !== undefined && typeof key !== 'string') throw new PlatformError('auth', 'apiKey must be a string');
        const resolution = emu.accounts.resolve(key);
        // The journal names the account even when its capability then refuses the call.
        if (resolution.ok) hooks.onAccount(resolution.account);
        return resolution;
      },
      capability: tool.capability,
    });
    if (!admission.ok) throw refusalError(admission.refusal, family, TOOL_KEY_TEXTS);

    const checked = readWorded(argumentSchema(tool), args, ARGUMENT_WORDING);
    if (!checked.success) throw new PlatformError('param', checked.text);
    const { apiKey: _key, ...operationArgs } = checked.data;
    return textResult(await tool.run({ emu }, admission.account, operationArgs), false);
  } catch (err) {
    if (err instanceof PlatformError) return fail(err);
    hooks.logError(err, `tools/call ${tool.name}`);
    return fail(new PlatformError('internal', `internal error in ${tool.name}`));
  }
}
