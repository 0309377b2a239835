import { decodeJwt } from 'jose';
import type { RunningEmulator } from '../../../src/index.js';
import { beforeAll } from 'vitest';
import { call, control, emulatorForFile } from '../../helpers/emulator.js';

/** One emulator for the file, its clock frozen, and the session shorthands on it. */
export function sessionsForFile() {
  const { emu } = emulatorForFile({ freeze: true });
  const c = {} as ReturnType<typeof sessionClient>;
  beforeAll(() => {
    Object.assign(c, sessionClient(emu));
  });
  return { emu, c };
}

/** Shorthands for the session suites: POST/GET/DELETE with a key, the account's state view, JWT claims. */
export function sessionClient(emu: RunningEmulator) {
  const base = emu.platformUrl;
  const ctl = control(base);
  const post = (path: string, json: unknown, key: string | null, headers: Record<string, string> = {}) =>
    call(`${base}${path}`, { method: 'POST', json, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });
  const send = (method: string, path: string, key: string | null, headers: Record<string, string> = {}) =>
    call(`${base}${path}`, { method, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });
  /** The `resources` and `pending_timers` of one key in GET /_emulator/state. */
  const stateOf = async (key: string) =>
    (await ctl.accountState(key)) as { account: string; resources: Record<string, any>; pending_timers: { label: string; due_ms: number }[] };
  const balance = async (key: string) => (await ctl.account(key)).body.balance_micro as number;
  return { ctl, post, send, stateOf, balance };
}

let counter = 0;
/** A fresh v4-shaped UUID for client nonces. */
export function nonce(): string {
  counter++;
  return `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`;
}

export const claims = (token: string) => decodeJwt(token) as Record<string, any>;
