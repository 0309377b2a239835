import type { FastifyRequest } from 'fastify';
import type { Emulator } from '../core/emulator.js';
import { bearerMatches } from './access.js';

/** An answer of the control plane other than 200: `{error:{message}}` with this status. */
export class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra fields of the answer beside `error` (e.g. verify's count and near misses). */
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** A key named on the control plane, trimmed as the services trim presented keys. */
export function keyParam(value: string, what: string): string {
  const key = value.trim();
  if (!key) throw new ControlError(400, `${what} must be a non-empty key`);
  return key;
}

/**
 * What a control route accepts besides its own schema: query parameters, whether it reads a body,
 * whether it answers without the token, and what its input is called in error messages.
 */
export type ControlInput = { query?: string[]; body?: boolean; public?: boolean; what?: string; tokenInQuery?: boolean };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Control plane: what the route accepts (see ControlInput). */
    control?: ControlInput;
  }
}
export const input = (control: ControlInput) => ({ config: { control } });

/** True when the request may use the guarded routes (no token set, or the right one presented). */
export function authorized(emu: Emulator, req: FastifyRequest): boolean {
  const token = emu.config.controlToken;
  return !token || bearerMatches(req.headers.authorization, token);
}
