/**
 * What a refusal of admission is (core/http/admission.ts decides it; the request context keeps it for a
 * socket route, and each service renders it in its own shape).
 */
import type { Capability } from '../state/accounts.js';

/** Why a presented key admits nobody. */
export type KeyProblem = 'missing' | 'invalid' | 'disabled';

/** The texts a service gives each key problem (each service words them for where its key travels). */
export type KeyTexts = Record<KeyProblem, string>;

export type Refusal =
  | { kind: 'close_ws'; closeCode: number }
  | { kind: 'fault_code'; code: number }
  | { kind: 'fault_status'; status: number }
  | { kind: 'key'; problem: KeyProblem }
  | { kind: 'capability'; capability: Capability }
  /** The emulator stands in front of another service (tapes: recording) that could not answer: HTTP `status`, its words. */
  | { kind: 'upstream'; status: number; message: string };
