import { afterAll, beforeAll, beforeEach } from 'vitest';
import { redactKey } from '../../src/core/state/accounts.js';
import { ControlClient, ControlClientError, type CallOptions } from '../../src/client/index.js';
import type { AccountChange, ClockChange, ControlReply, FaultRuleInput, JournalQuery } from '../../src/client/types.js';
import { startEmulator, type RunningEmulator, type StartOptions } from '../../src/index.js';

/** Starts an emulator on free ports with the test seed; stop it with `close()` in afterAll. */
export function startTestEmulator(options: StartOptions = {}): Promise<RunningEmulator> {
  return startEmulator({ seed: 't', logLevel: 'silent', ...options });
}

export interface JsonReply<T = any> {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  body: T;
  /** The body as text (UTF-8, as `Response.text()` reads it). */
  text: string;
  /** The body as it came. */
  bytes: Buffer;
}

/** Reads an answer whole: status, headers, bytes, text and the parsed body (undefined unless JSON). */
export async function readReply<T = any>(res: { status: number; headers: Headers; arrayBuffer(): Promise<ArrayBuffer> }): Promise<JsonReply<T>> {
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text, bytes };
}

/**
 * One HTTP call with an optional JSON body (or any other body: text, bytes, a form); answers status,
 * headers, bytes, text and the parsed body. The method is POST when there is a body, else GET.
 */
export async function call<T = any>(
  url: string,
  init: { method?: string; json?: unknown; headers?: Record<string, string>; body?: string | Uint8Array | FormData | Blob } = {},
): Promise<JsonReply<T>> {
  const headers: Record<string, string> = { ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method: init.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body });
  return readReply<T>(res);
}

/** An answer of the control client as the tests read it (status, headers, bytes, text, parsed body). */
function asReply(reply: ControlReply): JsonReply {
  return { status: reply.status, headers: reply.headers, body: reply.body, text: reply.text, bytes: Buffer.from(reply.bytes) };
}

/**
 * Sends one call through a method of the shipped ControlClient and answers it whatever its status,
 * so a test can assert a refusal (4xx) as well as a success. What the client refuses on a 2xx (an
 * answer not of the method's shape) or no whole answer fails the test: the whole suite exercises the
 * client's transport, shape checks and error handling.
 */
async function through(send: (options: CallOptions) => Promise<unknown>): Promise<JsonReply> {
  let reply: ControlReply | undefined;
  try {
    await send({ onReply: (r) => (reply = r) });
  } catch (err) {
    if (!(err instanceof ControlClientError) || !reply || (reply.status >= 200 && reply.status < 300)) throw err;
  }
  return asReply(reply!);
}

/**
 * The control plane of one listener, driven by the shipped ControlClient (`client`): `control(url).advance(1000)`.
 * Each method answers status, headers, bytes, text and parsed body; `call` is any other call (the client's `request`).
 */
export function control(baseUrl: string, token?: string) {
  // Long enough for a clock advance that finishes a long job on a loaded machine; a test's own timeout bounds it first.
  const client = new ControlClient({ url: baseUrl, token, timeoutMs: 120_000 });
  const c = async (method: string, path: string, json?: unknown) => asReply(await client.request({ method, path, json }));
  return {
    client,
    call: c,
    health: () => through((o) => client.health(o)),
    reset: (account?: string) => through((o) => (account ? client.resetAccount(account, o) : client.reset(o))),
    clock: () => through((o) => client.clock.read(o)),
    setClock: (body: ClockChange) => through((o) => client.clock.change(body, o)),
    advance: (ms: number) => through((o) => client.clock.advance(ms, o)),
    freeze: (on = true) => through((o) => (on ? client.clock.freeze(o) : client.clock.unfreeze(o))),
    addFault: (rule: Record<string, unknown>) => through((o) => client.faults.add(rule as unknown as FaultRuleInput, o)),
    faults: () => through((o) => client.faults.list(o)),
    clearFaults: (id?: string) => through((o) => (id ? client.faults.remove(id, o) : client.faults.clear(o))),
    /** Journal filters as the route takes them; `header`/`query` as `name:value` strings go as written (a malformed one included). */
    journal: (q: Record<string, string | number> = {}) => {
      if (typeof q.header === 'string' || typeof q.query === 'string') {
        const qs = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)] as [string, string])).toString();
        return c('GET', `/journal${qs ? `?${qs}` : ''}`);
      }
      return through((o) => client.journal.list(q as JournalQuery, o));
    },
    clearJournal: () => through((o) => client.journal.clear(o)),
    /** The newest journal entry the filter selects (undefined when none): `ctl.lastEntry({ path: '/v1/t2a_v2' })`. */
    lastEntry: async (filter: JournalQuery = {}): Promise<any> => (await client.journal.list({ ...filter, limit: 1 }))[0],
    putAccount: (key: string, settings: Record<string, unknown>) => through((o) => client.accounts.put(key, settings as AccountChange, o)),
    account: (key: string) => through((o) => client.accounts.get(key, o)),
    state: () => through((o) => client.state(o)),
    /** One account's part of the state view (resources, open sockets, pending timers), found by the redacted label of its key. */
    accountState: async (key: string) => (await client.state()).accounts.find((a) => a.account === redactKey(key)) as any,
  };
}

export interface FileEmulatorOptions {
  /** The listener whose control plane `ctl` speaks to (default platform). */
  plane?: 'platform' | 'speech' | 'speech-backup';
  /** Freeze the clock once started. */
  freeze?: boolean;
  /** Start options on top of the test defaults (seed `t`, silent logs, free ports); a `controlToken` is also given to `ctl`. */
  start?: StartOptions;
  /** Reset the whole emulator (`POST /_emulator/reset`) before each test. */
  resetEach?: boolean;
}

/**
 * The emulator of one test file (or of the describe block it is called in): started in beforeAll
 * (clock frozen when asked), reset before each test when asked, closed in afterAll, with a control
 * client of one listener. Both objects are filled in when beforeAll runs, so use them inside hooks
 * and tests only.
 */
export function emulatorForFile(opts: FileEmulatorOptions = {}) {
  const emu = {} as RunningEmulator;
  const ctl = {} as ReturnType<typeof control>;
  beforeAll(async () => {
    Object.assign(emu, await startTestEmulator(opts.start));
    const url = opts.plane === 'speech' ? emu.speechUrl : opts.plane === 'speech-backup' ? emu.speechBackupUrl : emu.platformUrl;
    Object.assign(ctl, control(url, opts.start?.controlToken));
    if (opts.freeze) await ctl.freeze(true);
  });
  if (opts.resetEach)
    beforeEach(async () => {
      await ctl.reset();
    });
  afterAll(() => emu.close?.());
  return { emu, ctl };
}
