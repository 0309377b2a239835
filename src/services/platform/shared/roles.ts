/**
 * The roles (characters) of the conversation fixture: REST sessions, calls (`timbre`) and the
 * conversation WebSockets all speak with one, and GET /api/v1/audio/characters lists them.
 */
import type { Emulator } from '../../../core/emulator.js';
import { PlatformError } from '../envelope.js';

export interface Role {
  id: string;
  name: string;
  language: string;
  description: string;
  voice_id: string;
  /** What the call room's bot says when the user joins (fixture field; the room's default rule without it). */
  greeting?: string;
}

export function roles(emu: Emulator): Role[] {
  return emu.fixtures.data['roles.json'];
}

export function findRole(emu: Emulator, id: string): Role | undefined {
  return roles(emu).find((role) => role.id === id);
}

/** The role of a `voice_id`/`timbre` field, or the param error (10001 / the family's) naming the field. */
export function requireRole(emu: Emulator, id: string, field: string): Role {
  const role = findRole(emu, id);
  if (!role) throw new PlatformError('param', `${field}: unknown role "${id}"; the roles are listed by GET /api/v1/audio/characters`);
  return role;
}
