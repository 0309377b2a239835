import type { FastifyInstance } from 'fastify';
import { acceptEmptyJson as acceptEmptyJsonIn } from '../../../core/json-body.js';
import { PlatformError } from '../envelope.js';

/**
 * JSON bodies of the session operations (calls, sessions, agents): clients send `Content-Type:
 * application/json` on every call (the agent spec asks for it), also on DELETE/heartbeat requests that
 * carry nothing. An empty body is "no body"; one that is not JSON is the family's parameter error.
 */
export function acceptEmptyJson(app: FastifyInstance): void {
  acceptEmptyJsonIn(app, (problem) => new PlatformError('param', `request body is not valid JSON (${problem})`));
}
