import type { Account } from '../../../core/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { VERSION } from '../../../version.js';
import { failure as envelopeFailure, PlatformError, resolveCode } from '../envelope.js';
import { codeOfHttpStatus, FAMILIES, type Family } from '../families.js';
import { RPC_ERRORS, RpcFault, type Dispatcher } from './jsonrpc.js';
import { LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS, SERVER_NAME, textResult, toolsCallParams, type ToolResult } from './schema.js';
import { argumentSchema, issueText, listEntry, type ToolDef } from './tool-kit.js';

/**
 * The MCP methods of /mcp: `initialize`, `ping`, `tools/list`, `tools/call`. Nothing of HTTP: the route
 * passes the request's fault directive and learns the account a tool call resolved.
 */
export interface CallHooks {
  /** The request's fault directive (`code`, `status`), taken when a tool call expresses it. */
  takeFault(field: 'code' | 'status'): number | undefined;
  /** The account named by `arguments.apiKey` (for the journal). */
  onAccount(account: Account): void;
  logError(err: unknown, what: string): void;
}

const AUTH_TEXT = {
  missing: 'apiKey is missing: pass the API key in arguments.apiKey',
  invalid: 'apiKey is not a valid API key',
  disabled: 'apiKey belongs to a disabled API key',
} as const;

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
        const parsed = toolsCallParams.safeParse(params ?? {});
        if (!parsed.success || Array.isArray(params)) {
          throw new RpcFault(RPC_ERRORS.invalidParams, `invalid params: ${parsed.success ? 'params must be an object' : issueText(parsed.error)}`);
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
 * One tool call, in the order of checks of the HTTP operations: fault directive, key, capability,
 * argument validation, then the operation. Every failure is a result with `isError: true` whose text is
 * the operation's error envelope (code and message), as its HTTP operation would have answered.
 */
export async function callTool(emu: Emulator, tool: ToolDef, rawArgs: unknown, hooks: CallHooks): Promise<ToolResult> {
  const family: Family = FAMILIES[tool.family];
  const fail = (err: PlatformError) => textResult(envelopeFailure(resolveCode(family, err.codeOrKind), err.message), true);
  try {
    const code = hooks.takeFault('code');
    if (code !== undefined) throw new PlatformError(code, `injected fault: error ${code}`);
    const status = hooks.takeFault('status');
    if (status !== undefined) throw new PlatformError(codeOfHttpStatus(family, status), `injected fault: HTTP ${status}`);

    const args = rawArgs ?? {};
    if (typeof args !== 'object' || Array.isArray(args)) throw new PlatformError('param', 'arguments must be an object');
    const key = (args as Record<string, unknown>).apiKey;
    if (key !== undefined && typeof key !== 'string') throw new PlatformError('auth', 'apiKey must be a string');
    const resolution = emu.accounts.resolve(key);
    if (!resolution.ok) throw new PlatformError('auth', AUTH_TEXT[resolution.problem]);
    const account = resolution.account;
    hooks.onAccount(account);
    if (!emu.accounts.has(account, tool.capability)) {
      throw new PlatformError(family.codes.forbidden ? 'forbidden' : 'auth', `this API key lacks the ${tool.capability} capability`);
    }

    const checked = argumentSchema(tool).safeParse(args);
    if (!checked.success) throw new PlatformError('param', issueText(checked.error));
    const { apiKey: _key, ...operationArgs } = checked.data as Record<string, unknown>;
    return textResult(await tool.run({ emu }, account, operationArgs), false);
  } catch (err) {
    if (err instanceof PlatformError) return fail(err);
    hooks.logError(err, `tools/call ${tool.name}`);
    return fail(new PlatformError('internal', `internal error in ${tool.name}`));
  }
}
