/**
 * What each control area's calls (client/areas/) need of the ControlClient: one call answered whole, and one
 * answered as JSON checked to be of a shape. The client hands itself over as a Caller; the areas keep no state.
 */
import type { Call, CallOptions } from '../transport.js';
import type { ControlReply } from '../types.js';

export interface Caller {
  /** Sends one call; answers the whole answer of a 2xx (or an accepted) status, else throws. */
  send(call: Call, options?: CallOptions): Promise<ControlReply>;
  /** Sends one call and answers its JSON, checked to be `what` (`holds`). */
  json<T>(call: Call, what: string, holds: (body: any) => boolean, options?: CallOptions): Promise<T>;
}

export const seg = (value: string) => encodeURIComponent(value);
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const DELETED = 'the deletion {deleted}';
export const isDeleted = (b: any) => typeof b.deleted === 'string';
