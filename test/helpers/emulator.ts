import { afterAll, beforeAll, beforeEach } from 'vitest';
import { redactKey } from '../../src/core/state/accounts.js';
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

/** The control plane of one listener: `control(url).advance(1000)`. */
export function control(baseUrl: string, token?: string) {
  const c = (method: string, path: string, json?: unknown) =>
    call(`${baseUrl}/_emulator${path}`, { method, json, headers: token ? { authorization: `Bearer ${token}` } : {} });
  return {
    call: c,
    health: () => c('GET', '/health'),
    reset: (account?: string) => c('POST', `/reset${account ? `?account=${encodeURIComponent(account)}` : ''}`),
    clock: () => c('GET', '/clock'),
    setClock: (body: { advance_ms?: number; freeze?: boolean; set_ms?: number }) => c('POST', '/clock', body),
    advance: (ms: number) => c('POST', '/clock', { advance_ms: ms }),
    freeze: (on = true) => c('POST', '/clock', { freeze: on }),
    addFault: (rule: Record<string, unknown>) => c('POST', '/faults', rule),
    faults: () => c('GET', '/faults'),
    clearFaults: (id?: string) => c('DELETE', id ? `/faults/${id}` : '/faults'),
    journal: (q: Record<string, string | number> = {}) => {
      const qs = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)] as [string, string])).toString();
      return c('GET', `/journal${qs ? `?${qs}` : ''}`);
    },
    clearJournal: () => c('DELETE', '/journal'),
    putAccount: (key: string, settings: Record<string, unknown>) => c('PUT', `/accounts/${encodeURIComponent(key)}`, settings),
    account: (key: string) => c('GET', `/accounts/${encodeURIComponent(key)}`),
    state: () => c('GET', '/state'),
    /** One account's part of the state view (resources, open sockets, pending timers), found by the redacted label of its key. */
    accountState: async (key: string) => ((await c('GET', '/state')).body.accounts as any[]).find((a) => a.account === redactKey(key)),
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
