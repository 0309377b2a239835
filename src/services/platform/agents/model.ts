import type { Account } from '../../../core/accounts.js';
import type { Emulator, StateArea } from '../../../core/emulator.js';
import { mintRoomToken } from '../../shared/livekit.js';
import { budgetMs, newMeter, remainingSeconds, seconds, settleMeters, type Meter } from '../calls/meter.js';
import { PlatformError } from '../envelope.js';
import type { AgentStatus, CheckItem, CloseReason, CreateBody, CreateItem, EndItem, HeartbeatItem } from './schema.js';

/**
 * Agent sessions: `connecting` at create, `in_call` at the first heartbeat, `ended` by end (or when the
 * balance runs out), `failed` on a fault or after 30 s without a heartbeat. In-call time is billed per
 * second at the agent price. Rules are documented in docs/platform-sessions.md.
 */
export const AGENT_HEARTBEAT_TIMEOUT_MS = 30_000;
export const AGENT_TOKEN_TTL_SEC = 2 * 3600;
const MAX_CLOSED_PER_ACCOUNT = 200;

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

interface AgentStore {
  sessions: Map<string, AgentSession>;
  /** `${accountId}:${idempotency key}` → session id. */
  keys: Map<string, string>;
  deadlines: Map<string, number>;
  /** accountId → the timer at the moment its balance runs out (not saved: rebuilt on load). */
  exhaustTimers: Map<string, number>;
  signing: Map<string, Promise<string>>;
}

interface AgentArea extends StateArea {
  store: AgentStore;
}

const AREA = 'agent_sessions';
const live = (x: AgentSession) => x.status === 'connecting' || x.status === 'in_call';
const priceOf = (emu: Emulator) => emu.fixtures.data['billing.json'].prices_micro.agent_second;

export function agentStore(emu: Emulator): AgentStore {
  const found = emu.areas.get(AREA) as AgentArea | undefined;
  if (found) return found.store;
  const s: AgentStore = { sessions: new Map(), keys: new Map(), deadlines: new Map(), exhaustTimers: new Map(), signing: new Map() };
  const area: AgentArea = {
    name: AREA,
    store: s,
    reset(accountId) {
      for (const [id, x] of s.sessions) {
        if (accountId !== undefined && x.accountId !== accountId) continue;
        emu.clock.cancel(s.deadlines.get(id));
        s.deadlines.delete(id);
        s.sessions.delete(id);
      }
      for (const k of s.keys.keys()) if (accountId === undefined || k.startsWith(`${accountId}:`)) s.keys.delete(k);
      for (const [k, id] of s.exhaustTimers) {
        if (accountId !== undefined && k !== accountId) continue;
        emu.clock.cancel(id);
        s.exhaustTimers.delete(k);
      }
    },
    view: (accountId) => [...s.sessions.values()].filter((x) => x.accountId === accountId).map(viewOf),
    save: () => ({ sessions: [...s.sessions.values()], keys: [...s.keys.entries()] }),
    load(data) {
      const d = (data ?? {}) as { sessions?: AgentSession[]; keys?: [string, string][] };
      area.reset();
      for (const x of d.sessions ?? []) s.sessions.set(x.sessionId, x);
      for (const [k, v] of d.keys ?? []) s.keys.set(k, v);
      for (const x of s.sessions.values()) if (live(x)) armDeadline(emu, s, x);
      for (const accountId of new Set([...s.sessions.values()].filter(live).map((x) => x.accountId))) {
        const account = emu.accounts.byId(accountId);
        if (account) armExhaustion(emu, s, account);
      }
    },
  };
  emu.registerArea(area);
  return s;
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

/** Fails the session at the first millisecond past 30 s without a heartbeat (closed at +30 s). */
function armDeadline(emu: Emulator, s: AgentStore, x: AgentSession): void {
  emu.clock.cancel(s.deadlines.get(x.sessionId));
  const due = x.lastSeenMs + AGENT_HEARTBEAT_TIMEOUT_MS + 1;
  const id = emu.clock.at(
    due,
    () => {
      s.deadlines.delete(x.sessionId);
      const account = emu.accounts.byId(x.accountId);
      if (account) advance(emu, account, due);
    },
    `agent heartbeat timeout ${x.sessionId}`,
    x.accountId,
  );
  s.deadlines.set(x.sessionId, id);
}

/**
 * A timer at the moment the balance runs out for the account's in-call sessions (when that comes before
 * every heartbeat deadline), so a session ended by an exhausted balance shows in the state view at once.
 */
function armExhaustion(emu: Emulator, s: AgentStore, account: Account): void {
  emu.clock.cancel(s.exhaustTimers.get(account.id));
  s.exhaustTimers.delete(account.id);
  const mine = [...s.sessions.values()].filter((x) => x.accountId === account.id && live(x));
  const billing = mine.filter((x) => x.status === 'in_call' && x.meter);
  const budget = budgetMs(account, priceOf(emu), false);
  if (billing.length === 0 || !Number.isFinite(budget)) return;
  const at = Math.max(...billing.map((x) => x.meter!.settledToMs)) + Math.floor(budget / billing.length);
  if (at >= Math.min(...mine.map((x) => x.lastSeenMs + AGENT_HEARTBEAT_TIMEOUT_MS))) return;
  const id = emu.clock.at(
    at,
    () => {
      s.exhaustTimers.delete(account.id);
      advance(emu, account, at);
    },
    'agent balance runs out',
    account.id,
  );
  s.exhaustTimers.set(account.id, id);
}

function close(emu: Emulator, s: AgentStore, x: AgentSession, atMs: number, status: 'ended' | 'failed', reason: CloseReason): void {
  if (!live(x)) return;
  x.status = status;
  x.closeReason = reason;
  x.closedAtMs = Math.max(atMs, x.meter?.settledToMs ?? atMs);
  emu.clock.cancel(s.deadlines.get(x.sessionId));
  s.deadlines.delete(x.sessionId);
  const account = emu.accounts.byId(x.accountId);
  if (account) armExhaustion(emu, s, account);
  emu.markDirty();
}

/** Brings one account's agent sessions up to `untilMs`: bills in-call time, applies timeouts and exhaustion. */
function advance(emu: Emulator, account: Account, untilMs: number): void {
  const s = agentStore(emu);
  const price = priceOf(emu);
  for (;;) {
    const mine = [...s.sessions.values()].filter((x) => x.accountId === account.id && live(x));
    const overdue = mine.filter((x) => x.lastSeenMs + AGENT_HEARTBEAT_TIMEOUT_MS < untilMs).sort((a, b) => a.lastSeenMs - b.lastSeenMs)[0];
    const target = overdue ? overdue.lastSeenMs + AGENT_HEARTBEAT_TIMEOUT_MS : untilMs;
    const billing = mine.filter((x) => x.status === 'in_call');
    const ranOut = settleMeters(account, billing.map((x) => x.meter!), target, price, false);
    if (ranOut !== null) {
      for (const x of billing) close(emu, s, x, ranOut, 'ended', 'balance_exhausted');
      continue;
    }
    if (!overdue) {
      if (billing.length && budgetMs(account, price, false) < 1) for (const x of billing) close(emu, s, x, untilMs, 'ended', 'balance_exhausted');
      break;
    }
    close(emu, s, overdue, target, 'failed', 'heartbeat_timeout');
  }
  armExhaustion(emu, s, account);
  emu.markDirty();
}

function own(emu: Emulator, account: Account, sessionId: string): AgentSession {
  const x = agentStore(emu).sessions.get(sessionId);
  if (!x || x.accountId !== account.id) throw new PlatformError('notFound', `session_id: no agent session "${sessionId}" for this API key`);
  return x;
}

async function createItem(emu: Emulator, s: AgentStore, x: AgentSession): Promise<CreateItem> {
  const userToken = x.userToken || (await s.signing.get(x.sessionId)) || '';
  return { sessionId: x.sessionId, wsUrl: emu.config.rtcUrl, userToken, roomName: x.roomName, expireAt: x.expireAt, status: x.status, agentId: x.agentId };
}

export async function createAgentSession(emu: Emulator, account: Account, body: CreateBody, idempotencyKey: string): Promise<{ item: CreateItem; traceId: string }> {
  const s = agentStore(emu);
  const now = emu.clock.now();
  const keyOf = `${account.id}:${idempotencyKey}`;
  const earlier = s.sessions.get(s.keys.get(keyOf) ?? '');
  if (earlier) {
    if (earlier.agentId !== body.agentId) {
      throw new PlatformError('param', `Idempotency-Key "${idempotencyKey}" was already used for agent "${earlier.agentId}"; use a new key for another request`);
    }
    advance(emu, account, now);
    return { item: await createItem(emu, s, earlier), traceId: earlier.traceId };
  }

  const agent = emu.fixtures.data['agents.json'].find((a) => a.agentId === body.agentId);
  if (!agent || !agent.published) throw new PlatformError('notFound', `agentId: no published agent "${body.agentId}"`);
  if (agent.project !== account.project) throw new PlatformError('forbidden', `agentId: agent "${body.agentId}" belongs to another project space`);

  advance(emu, account, now);
  const price = priceOf(emu);
  if (budgetMs(account, price, false) < 1000) {
    throw new PlatformError('balance', `insufficient balance: an agent session needs at least 1 second (${price} micro-units); balance ${account.balanceMicro}`);
  }
  const running = [...s.sessions.values()].filter((x) => x.accountId === account.id && live(x)).length;
  const max = account.limits.max_concurrent_calls;
  if (max !== undefined && running >= max) throw new PlatformError('rate', `connection limit reached: ${running} of ${max} agent sessions are open`);

  const ids = emu.ids.stream(account.id);
  const x: AgentSession = {
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
  s.sessions.set(x.sessionId, x);
  s.keys.set(keyOf, x.sessionId);
  prune(s, account.id);
  armDeadline(emu, s, x);
  emu.markDirty();

  const signing = mintRoomToken({
    apiKey: emu.config.livekitApiKey,
    apiSecret: emu.config.livekitApiSecret,
    identity: x.userIdentifier,
    room: x.roomName,
    notBeforeSec: Math.floor(now / 1000),
    expiresAtSec: x.expireAt,
  });
  s.signing.set(x.sessionId, signing);
  try {
    x.userToken = await signing;
  } finally {
    s.signing.delete(x.sessionId);
  }
  return { item: await createItem(emu, s, x), traceId: x.traceId };
}

function prune(s: AgentStore, accountId: string): void {
  const closed = [...s.sessions.values()].filter((x) => x.accountId === accountId && !live(x));
  for (const old of closed.slice(0, Math.max(0, closed.length - MAX_CLOSED_PER_ACCOUNT))) {
    s.sessions.delete(old.sessionId);
    s.keys.delete(`${accountId}:${old.idempotencyKey}`);
  }
}

export function agentHeartbeat(emu: Emulator, account: Account, sessionId: string): HeartbeatItem {
  const s = agentStore(emu);
  const x = own(emu, account, sessionId);
  const now = emu.clock.now();
  advance(emu, account, now);
  if (live(x)) {
    if (x.status === 'connecting') {
      // The first heartbeat means the client is in the room: billing starts here.
      x.status = 'in_call';
      x.inCallAtMs = now;
      x.meter = newMeter(now);
    }
    x.lastSeenMs = now;
    armDeadline(emu, s, x);
    advance(emu, account, now);
  }
  return { sessionId: x.sessionId, status: x.status, shouldClose: !live(x), closeReason: x.closeReason, remainingSeconds: remainingSeconds(account, priceOf(emu), false) };
}

export function checkAgentSession(emu: Emulator, account: Account, sessionId: string): CheckItem {
  const x = own(emu, account, sessionId);
  advance(emu, account, emu.clock.now());
  return { sessionId: x.sessionId, status: x.status, shouldClose: !live(x), closeReason: x.closeReason, expireAt: x.expireAt, agentId: x.agentId };
}

/** Ends the session; a failed one is reported ended too (its closeReason keeps why it failed). Idempotent. */
export function endAgentSession(emu: Emulator, account: Account, sessionId: string): EndItem {
  const x = own(emu, account, sessionId);
  const now = emu.clock.now();
  advance(emu, account, now);
  close(emu, agentStore(emu), x, now, 'ended', 'client_end');
  if (x.status === 'failed') {
    x.status = 'ended';
    emu.markDirty();
  }
  return { sessionId: x.sessionId, status: x.status, shouldClose: true };
}

/** A fault hit a heartbeat or check of a live session: it fails now (billed up to now). */
export function failAgentSession(emu: Emulator, account: Account, sessionId: string): void {
  const x = agentStore(emu).sessions.get(sessionId);
  if (!x || x.accountId !== account.id || !live(x)) return;
  const now = emu.clock.now();
  advance(emu, account, now);
  close(emu, agentStore(emu), x, now, 'failed', 'fault');
}
