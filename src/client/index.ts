/**
 * `speech-emulator/client`: the typed control-plane client, usable without starting an emulator in
 * the same process (it needs only fetch). The same client is `control` on what `startEmulator()` returns.
 */
export { ControlClient, type CallOptions, type ControlClientOptions, type RawCall } from './client.js';
export { ControlClientError, VerificationError } from './errors.js';
export type * from './types.js';
