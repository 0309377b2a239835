/**
 * Agent sessions: `connecting` at create, `in_call` when the user joins the room, `ended` by end (or when the
 * balance runs out), `failed` on a fault, when the room is lost, or after 30 s without a heartbeat. In-call time is billed per
 * second at the agent price. Rules are documented in docs/platform-sessions.md.
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { PlatformError } from '../envelope.js';
import * as hb from '../shared/heartbeat-sessions.js';
import { budgetMs, newMeter, remainingSeconds, seconds, type Meter } from '../shared/meter.js';
import { registerRoomHosts, roomServerUrl, roomSessionEnded, type RoomHost } from '../shared/room-hosts.js';
import type { AgentStatus, CheckItem, CloseReason, CreateBody, CreateItem, EndItem, HeartbeatItem } from './schema.js';

export const AGENT_HEARTBEAT_TIMEOUT_MS = hb.HEARTBEAT_TIMEOUT_MS;
export const AGENT_TOKEN_TTL_SEC = 2 * 3600;

export interface AgentSession {
  sessionId: string;
  accountId: string;
  agentId: string;
  idempotencyKey: string;
  userIdentifier: string;
  traceId: string;
  roomName: string;
  userToken: string;
  expireAt: number;
  status: AgentStatus;
  closeReason: CloseReason;
  createdAtMs: number;
  /** Last heartbeat, or creation before the first one: the timeout counts from here. */
  lastSeenMs: number;
  inCallAtMs: number | null;
  closedAtMs: number | null;
  meter: Meter | null;
}

/** Idempotency keys: `${accountId}:${Idempotency-Key}` → session id (forgotten with a pruned session). */
type AgentStore = hb.SessionStore<AgentSession, string>;

const live = (x: AgentSession) => x.status === 'connecting' || x.status === 'in_call';

const rules: hb.Rules<AgentSession> = {
  area: 'agent_sessions',
  keysField: 'keys',
  label: 'agent',
  price: (emu) => emu.fixtures.data['billing.json'].prices_micro.agent_second,
  useFreePool: false,
  live,
  lastSeenMs: (x) => x.lastSeenMs,
  // Billing starts when the user joins the room (in_call); a connecting session only times out.
  meter: (x) => (x.status === 'in_call' ? x.meter : null),
  view: viewOf,
  timedOut: (emu, x, atMs) => close(emu, x, atMs, 'failed', 'heartbeat_timeout'),
  exhausted: (emu, x, atMs) => close(emu, x, atMs, 'ended', 'balance_exhausted'),
  prunedKey: (x) => x.idempotencyKey,
};

export function agentStore(emu: Emulator): AgentStore {
  return hb.sessionStore(emu, rules);
}

function viewOf(x: AgentSession) {
  return {
    session_id: x.sessionId,
    agent_id: x.agentId,
    status: x.status,
    close_reason: x.closeReason,
    user_identifier: x.userIdentifier,
    trace_id: x.traceId,
    room_name: x.roomName,
    created_at_ms: x.createdAtMs,
    last_heartbeat_ms: x.lastSeenMs,
    heartbeat_deadline_ms: live(x) ? x.lastSeenMs + AGENT_HEARTBEAT_TIMEOUT_MS : null,
    in_call_at_ms: x.inCallAtMs,
    closed_at_ms: x.closedAtMs,
    billed_sec: x.meter ? seconds(x.meter.billedMs) : 0,
    billed_micro: x.meter ? Math.round(x.meter.costExact) : 0,
  };
}

function close(emu: Emulator, x: AgentSession, atMs: number, status: 'ended' | 'failed', reason: CloseReason): void {
  const closed = hb.close(emu, rules, x, atMs, (closedAtMs) => {
    x.status = status;
    x.closeReason = reason;
    x.closedAtMs = closedAtMs;
  });
  const account = closed ? emu.accounts.byId(x.accountId) : undefined;
  if (account) hb.armExhaustion(emu, rules, account);
  // The room ends with the session: the client is told, the bot leaves.
  if (closed) roomSessionEnded(emu, x.roomName);
}

/** The agent's participant identity in the room (LiveKit's agents join as `agent-…`). */
export const agentIdentity = (agentId: string): string => `agent-${agentId}`;

function roomHostOf(emu: Emulator, x: AgentSession): RoomHost {
  const agent = emu.fixtures.data['agents.json'].find((a) => a.agentId === x.agentId);
  return {
    kind: 'agent',
    sessionId: x.sessionId,
    accountId: x.accountId,
    roomName: x.roomName,
    userIdentity: x.userIdentifier,
    botIdentity: agentIdentity(x.agentId),
    botName: agent?.name ?? x.agentId,
    live: live(x),
    agentId: x.agentId,
  };
}

/**
 * The agent rooms for the room server: the user's join moves a connecting session to `in_call` (billing
 * starts there); a room lost under a live session fails it (`fault`).
 */
export function registerAgentRooms(emu: Emulator): void {
  const store = agentStore(emu);
  registerRoomHosts(emu, {
    find(roomName) {
      for (const x of store.sessions.values()) if (x.roomName === roomName) return roomHostOf(emu, x);
      return undefined;
    },
    joined(host) {
      const x = store.sessions.get(host.sessionId);
      const account = x && emu.accounts.byId(x.accountId);
      if (!x || !account || x.status !== 'connecting') return;
      const now = emu.clock.now();
      hb.advance(emu, rules, account, now);
      if (x.status !== 'connecting') return;
      x.status = 'in_call';
      x.inCallAtMs = now;
      x.meter = newMeter(now);
      emu.markDirty(rules.area, account.id);
      hb.advance(emu, rules, account, now);
    },
    turn() {
      // Agent sessions keep no turns.
    },
    lost(host) {
      const x = store.sessions.get(host.sessionId);
      const account = x && emu.accounts.byId(x.accountId);
      if (!x || !account || !live(x)) return;
      const now = emu.clock.now();
      hb.advance(emu, rules, account, now);
      close(emu, x, now, 'failed', 'fault');
    },
  });
}

function own(emu: Emulator, account: Account, sessionId: string): AgentSession {
  return hb.own(emu, rules, account.id, sessionId, () => new PlatformError('notFound', `session_id: no agent session "${sessionId}" for this API key`));
}

async function createItem(emu: Emulator, s: AgentStore, x: AgentSession): Promise<CreateItem> {
  const userToken = await hb.roomToken(s, x.sessionId, x.userToken);
  return { sessionId: x.sessionId, wsUrl: roomServerUrl(emu), userToken, roomName: x.roomName, expireAt: x.expireAt, status: x.status, agentId: x.agentId };
}

/** The idempotency key of a create: the `Idempotency-Key` header, else the body's `clientRequestId`; 10001 when neither. */
export function idempotencyKeyOf(header: string | undefined, body: CreateBody): string {
  const fromHeader = header?.trim();
  if (fromHeader) return fromHeader;
  const fromBody = body.clientRequestId?.trim();
  if (fromBody) return fromBody;
  throw new PlatformError('param', 'Idempotency-Key: header is required (or clientRequestId in the body)');
}

/**
 * Creates a session, or answers the one its idempotency key made (10001 when that key made one for
 * another agent). `headerKey` is the `Idempotency-Key` header as sent.
 */
export async function createAgentSession(
  emu: Emulator,
  account: Account,
  body: CreateBody,
  headerKey: string | undefined,
): Promise<{ item: CreateItem; traceId: string }> {
  const idempotencyKey = idempotencyKeyOf(headerKey, body);
  const store = agentStore(emu);
  const now = emu.clock.now();
  const keyOf = hb.keyFor(account.id, idempotencyKey);
  const earlier = store.sessions.get(store.keys.get(keyOf) ?? '');
  if (earlier) {
    if (earlier.agentId !== body.agentId) {
      throw new PlatformError(
        'param',
        `Idempotency-Key "${idempotencyKey}" was already used for agent "${earlier.agentId}"; use a new key for another request`,
      );
    }
    hb.advance(emu, rules, account, now);
    return { item: await createItem(emu, store, earlier), traceId: earlier.traceId };
  }

  const agent = emu.fixtures.data['agents.json'].find((a) => a.agentId === body.agentId);
  if (!agent || !agent.published) throw new PlatformError('notFound', `agentId: no published agent "${body.agentId}"`);
  if (agent.project !== account.project) throw new PlatformError('forbidden', `agentId: agent "${body.agentId}" belongs to another project space`);

  hb.advance(emu, rules, account, now);
  const price = rules.price(emu);
  if (budgetMs(account, price, false) < 1000) {
    throw new PlatformError(
      'balance',
      `insufficient balance: an agent session needs at least 1 second (${price} micro-units); balance ${account.balanceMicro}`,
    );
  }
  const running = hb.liveSessions(emu, rules, account.id).length;
  const max = account.limits.max_concurrent_calls;
  if (max !== undefined && running >= max) throw new PlatformError('rate', `connection limit reached: ${running} of ${max} agent sessions are open`);

  const ids = emu.ids.stream(account.id);
  const session: AgentSession = {
    sessionId: ids.uuid(),
    accountId: account.id,
    agentId: agent.agentId,
    idempotencyKey,
    userIdentifier: body.userIdentifier || `eu:anon_${ids.hex(12)}`,
    traceId: body.traceId || ids.hex(32),
    roomName: `agent_room_${ids.hex(16)}`,
    userToken: '',
    expireAt: Math.floor(now / 1000) + AGENT_TOKEN_TTL_SEC,
    status: 'connecting',
    closeReason: '',
    createdAtMs: now,
    lastSeenMs: now,
    inCallAtMs: null,
    closedAtMs: null,
    meter: null,
  };
  store.sessions.set(session.sessionId, session);
  store.keys.set(keyOf, session.sessionId);
  hb.pruneClosed(emu, rules, account.id);
  hb.armDeadline(emu, rules, session);
  emu.markDirty(rules.area, account.id);

  const room = { sessionId: session.sessionId, identity: session.userIdentifier, room: session.roomName, nowMs: now, expireAt: session.expireAt };
  // The token comes after the session was marked (a commit may have written it in between): marked again.
  await hb.signRoomToken(emu, store, room, (token) => {
    session.userToken = token;
    emu.markDirty(rules.area, account.id);
  });
  return { item: await createItem(emu, store, session), traceId: session.traceId };
}

export function agentHeartbeat(emu: Emulator, account: Account, sessionId: string): HeartbeatItem {
  const x = own(emu, account, sessionId);
  const now = emu.clock.now();
  hb.advance(emu, rules, account, now);
  if (live(x)) {
    // A heartbeat keeps the session alive; it goes in_call only when the user joins the room.
    x.lastSeenMs = now;
    hb.armDeadline(emu, rules, x);
    hb.advance(emu, rules, account, now);
  }
  return {
    sessionId: x.sessionId,
    status: x.status,
    shouldClose: !live(x),
    closeReason: x.closeReason,
    remainingSeconds: remainingSeconds(account, rules.price(emu), false),
  };
}

export function checkAgentSession(emu: Emulator, account: Account, sessionId: string): CheckItem {
  const x = own(emu, account, sessionId);
  hb.advance(emu, rules, account, emu.clock.now());
  return { sessionId: x.sessionId, status: x.status, shouldClose: !live(x), closeReason: x.closeReason, expireAt: x.expireAt, agentId: x.agentId };
}

/** Ends the session; a failed one is reported ended too (its closeReason keeps why it failed). Idempotent. */
export function endAgentSession(emu: Emulator, account: Account, sessionId: string): EndItem {
  const x = own(emu, account, sessionId);
  const now = emu.clock.now();
  hb.advance(emu, rules, account, now);
  close(emu, x, now, 'ended', 'client_end');
  if (x.status === 'failed') {
    x.status = 'ended';
    emu.markDirty(rules.area, account.id);
  }
  return { sessionId: x.sessionId, status: x.status, shouldClose: true };
}

/** A fault hit a heartbeat or check of a live session: it fails now (billed up to now). */
export function failAgentSession(emu: Emulator, account: Account, sessionId: string): void {
  const x = hb.findOwn(emu, rules, account.id, sessionId);
  if (!x || !live(x)) return;
  const now = emu.clock.now();
  hb.advance(emu, rules, account, now);
  close(emu, x, now, 'failed', 'fault');
}
