import type { FastifyInstance } from 'fastify';
import { acceptEmptyJson } from '../../../core/http/json-body.js';
import { PlatformError } from '../envelope.js';

/** The platform's words for a body that is not JSON, whichever parser refused it (the family's parameter error). */
export function badJsonText(problem: string): string {
  return `request body is not valid JSON (${problem})`;
}

/**
 * JSON bodies of the session operations (calls, sessions, agents): clients send `Content-Type:
 * application/json` on every call (the agent spec asks for it), also on DELETE/heartbeat requests that
 * carry nothing. An empty body is "no body"; one that is not JSON is the family's parameter error.
 */
export function acceptPlatformJson(app: FastifyInstance): void {
  acceptEmptyJson(app, (problem) => new PlatformError('param', badJsonText(problem)));
}
