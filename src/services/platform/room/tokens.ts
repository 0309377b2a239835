/**
 * The join check of the room server, in LiveKit's order and words (its `APIKeyAuthMiddleware` and
 * `ValidateConnectRequest`): a token from `Authorization: Bearer …` or `?access_token=`, its API key, its
 * signature, its times, the `roomJoin` grant, the identity, then the room. Refusals carry LiveKit's HTTP
 * status and plain-text body, which its clients show (`/rtc/validate` answers the same).
 *
 * Emulator rule: `nbf` and `exp` are read on the emulator clock (the clock that minted them), with
 * LiveKit's one-minute leeway, so a test that advances the clock past `expire_at` sees the expiry.
 */
import type { FastifyRequest } from 'fastify';
import type { Emulator } from '../../../core/emulator.js';
import { findRoomHost, type RoomHost, type RoomHostArea } from '../shared/room-hosts.js';

/** go-jose's default leeway, which LiveKit's verifier uses for `nbf` and `exp`. */
export const TOKEN_LEEWAY_SEC = 60;

export interface Grants {
  identity: string;
  name: string;
  room: string;
  canPublish: boolean;
  canSubscribe: boolean;
  canPublishData: boolean;
  expiresAtSec: number | null;
}

export type JoinCheck = { ok: true; grants: Grants; host: RoomHost; area: RoomHostArea } | { ok: false; status: number; text: string };

const refuse = (status: number, text: string): JoinCheck => ({ ok: false, status, text });

/** The token a request carries: the bearer header first, as LiveKit reads it. */
export function tokenOf(req: FastifyRequest): { token: string } | { refusal: JoinCheck } {
  const header = req.headers.authorization;
  if (typeof header === 'string' && header !== '') {
    if (!header.startsWith('Bearer ')) return { refusal: refuse(401, 'invalid authorization header. Must start with Bearer ') };
    return { token: header.slice('Bearer '.length) };
  }
  const q = (req.query as Record<string, unknown> | undefined)?.access_token;
  return { token: typeof q === 'string' ? q : '' };
}

function decodePart(part: string | undefined): Record<string, unknown> | null {
  if (!part) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const bool = (v: unknown, fallback: boolean) => (typeof v === 'boolean' ? v : fallback);

export async function checkJoin(emu: Emulator, req: FastifyRequest): Promise<JoinCheck> {
  const found = tokenOf(req);
  if ('refusal' in found) return found.refusal;
  // No token: no grants, which LiveKit refuses as "no permissions".
  if (!found.token) return refuse(401, 'no permissions to access the room');
  const parts = found.token.split('.');
  const header = decodePart(parts[0]);
  const claims = decodePart(parts[1]);
  if (parts.length !== 3 || !header || !claims) return refuse(401, 'invalid authorization token');
  if (claims.iss !== emu.config.livekitApiKey) return refuse(401, 'invalid API key');

  const { compactVerify, errors } = await import('jose');
  try {
    // The signature only: the times are checked below, on the emulator clock.
    await compactVerify(found.token, new TextEncoder().encode(emu.config.livekitApiSecret), { algorithms: ['HS256', 'HS384', 'HS512'] });
  } catch (err) {
    const why =
      err instanceof errors.JWSSignatureVerificationFailed
        ? 'go-jose/go-jose: error in cryptographic primitive'
        : 'go-jose/go-jose: compact JWS format must have three parts';
    return refuse(401, `invalid authorization token: ${why}`);
  }
  const nowSec = emu.clock.now() / 1000;
  if (typeof claims.nbf === 'number' && nowSec + TOKEN_LEEWAY_SEC < claims.nbf) {
    return refuse(401, 'invalid authorization token: go-jose/go-jose/jwt: validation failed, token not valid yet (nbf)');
  }
  if (typeof claims.exp === 'number' && nowSec - TOKEN_LEEWAY_SEC > claims.exp) {
    return refuse(401, 'invalid authorization token: go-jose/go-jose/jwt: validation failed, token is expired (exp)');
  }

  const video = claims.video && typeof claims.video === 'object' ? (claims.video as Record<string, unknown>) : null;
  if (!video) return refuse(401, 'no permissions to access the room');
  if (video.roomJoin !== true) return refuse(401, 'permissions denied');
  const identity = typeof claims.sub === 'string' ? claims.sub : '';
  if (!identity) return refuse(400, 'identity cannot be empty');
  const room = typeof video.room === 'string' ? video.room : '';
  if (!room) return refuse(400, 'no room name');

  // Rooms exist while their session runs: an unknown room, or one whose session ended, does not exist
  // (the emulator creates no room on its own).
  const hosted = findRoomHost(emu, room);
  if (!hosted || !hosted.host.live) return refuse(404, 'requested room does not exist');
  return {
    ok: true,
    host: hosted.host,
    area: hosted.area,
    grants: {
      identity,
      name: typeof claims.name === 'string' ? claims.name : '',
      room,
      canPublish: bool(video.canPublish, true),
      canSubscribe: bool(video.canSubscribe, true),
      canPublishData: bool(video.canPublishData, true),
      expiresAtSec: typeof claims.exp === 'number' ? claims.exp : null,
    },
  };
}
