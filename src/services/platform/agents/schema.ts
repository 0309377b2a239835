/** Wire shapes of agent sessions (`/api/v1/agents/openapi/sessions/*`). */
import * as z from 'zod';

const optionalText = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .max(max, { error: `must be at most ${max} characters` })
    .nullish();

export const createBody = z.object(
  {
    agentId: z.string({ error: 'is required and must be a string' }).trim().min(1, { error: 'must not be empty' }),
    userIdentifier: optionalText(256),
    clientRequestId: optionalText(256),
    traceId: optionalText(256),
  },
  { error: 'request body must be a JSON object' },
);
export type CreateBody = z.infer<typeof createBody>;

/** `session_id` of check, heartbeat and end: required (blank counts as missing), given once. */
export const sessionQuery = z.object({
  session_id: z
    .string({ error: (iss) => (iss.input === undefined ? 'query parameter is required' : 'must be given once, as a string') })
    .trim()
    .min(1, { error: 'query parameter is required' }),
});

export type AgentStatus = 'connecting' | 'in_call' | 'ended' | 'failed';
export type CloseReason = '' | 'client_end' | 'heartbeat_timeout' | 'fault' | 'balance_exhausted';

export interface CreateItem {
  sessionId: string;
  wsUrl: string;
  userToken: string;
  roomName: string;
  expireAt: number;
  status: AgentStatus;
  agentId: string;
}

export interface HeartbeatItem {
  sessionId: string;
  status: AgentStatus;
  shouldClose: boolean;
  closeReason: CloseReason;
  remainingSeconds: number;
}

export interface EndItem {
  sessionId: string;
  status: AgentStatus;
  shouldClose: boolean;
}

/** Our choice for the check response (the spec does not show it; docs/platform-sessions.md). */
export interface CheckItem {
  sessionId: string;
  status: AgentStatus;
  shouldClose: boolean;
  closeReason: CloseReason;
  expireAt: number;
  agentId: string;
}
