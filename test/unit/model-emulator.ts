// An emulator instance for calling models directly: the real state, fixtures and clock, no listener.
import pino from 'pino';
import type { Account } from '../../src/core/state/accounts.js';
import type { Emulator } from '../../src/core/emulator.js';
import { createEmulator } from '../../src/app.js';
import { readConfig } from '../../src/config.js';

export async function modelEmulator(): Promise<Emulator> {
  return createEmulator(readConfig([], {}), pino({ level: 'silent' }));
}

/** The account of a key, as a request presenting it would have it. */
export function accountOf(emu: Emulator, key: string): Account {
  const resolution = emu.accounts.resolve(key);
  if (!resolution.ok) throw new Error(`key ${key} admits nobody: ${resolution.problem}`);
  return resolution.account;
}

/** What a model threw, for matching its code and text. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected the model to refuse');
}

export async function rejected(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the model to refuse');
}
