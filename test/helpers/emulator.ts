import { afterAll, beforeAll } from 'vitest';
import { startEmulator, type RunningEmulator, type StartOptions } from '../../src/index.js';

/** Starts an emulator on free ports with the test seed; stop it with `close()` in afterAll. */
export function startTestEmulator(options: StartOptions = {}): Promise<RunningEmulator> {
  return startEmulator({ seed: 't', logLevel: 'silent', ...options });
}

export interface JsonReply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** One HTTP call with an optional JSON body; answers status, headers, text and the parsed body. */
export async function call<T = any>(
  url: string,
  init: { method?: string; json?: unknown; headers?: Record<string, string>; body?: string } = {},
): Promise<JsonReply<T>> {
  const headers: Record<string, string> = { ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method: init.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
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
  };
}

/**
 * The emulator of one test file: started in beforeAll (clock frozen when asked), closed in afterAll,
 * with a control client of the platform or speech listener. Both objects are filled in when
 * beforeAll runs, so use them inside hooks and tests only.
 */
export function emulatorForFile(opts: { plane?: 'platform' | 'speech'; freeze?: boolean } = {}) {
  const emu = {} as RunningEmulator;
  const ctl = {} as ReturnType<typeof control>;
  beforeAll(async () => {
    Object.assign(emu, await startTestEmulator());
    Object.assign(ctl, control(opts.plane === 'speech' ? emu.speechUrl : emu.platformUrl));
    if (opts.freeze) await ctl.freeze(true);
  });
  afterAll(() => emu.close());
  return { emu, ctl };
}
