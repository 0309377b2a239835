/**
 * Room credentials in LiveKit's own shape (addendum B): an HS256 JWT with `iss` = API key, `sub` = the
 * participant identity, `nbf`, `exp` and a `video` grant for one room. A LiveKit verifier holding the
 * same key and secret accepts it; media itself is not emulated.
 */
export interface RoomTokenInput {
  apiKey: string;
  apiSecret: string;
  identity: string;
  room: string;
  /** Unix seconds of the emulator clock. */
  notBeforeSec: number;
  expiresAtSec: number;
  canPublish?: boolean;
  canSubscribe?: boolean;
  canPublishData?: boolean;
}

export async function mintRoomToken(input: RoomTokenInput): Promise<string> {
  const { SignJWT } = await import('jose'); // loaded on first use (start-up time)
  const video = {
    room: input.room,
    roomJoin: true,
    canPublish: input.canPublish ?? true,
    canSubscribe: input.canSubscribe ?? true,
    canPublishData: input.canPublishData ?? true,
  };
  // Claims are fixed by the input alone (no wall time, no random jti): same request, same token.
  return new SignJWT({ video })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(input.apiKey)
    .setSubject(input.identity)
    .setNotBefore(input.notBeforeSec)
    .setExpirationTime(input.expiresAtSec)
    .sign(new TextEncoder().encode(input.apiSecret));
}
