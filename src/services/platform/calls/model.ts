import type { Account } from '../../../core/accounts.js';
import type { Emulator, StateArea } from '../../../core/emulator.js';
import { mintRoomToken } from '../../shared/livekit.js';
import { PlatformError } from '../envelope.js';
import { getSession, MAX_TURNS, requireRole, type Turn } from '../sessions/model.js';
import { budgetMs, newMeter, remainingSeconds, seconds, settleMeters, type Meter } from './meter.js';
import type { HeartbeatData, StartBody, StartData, StopData } from './schema.js';

/**
 * Real-time call sessions: start (nonce window, limits, room credentials), heartbeats (30 s timeout on
 * the emulator clock), stop (settled billing, idempotent). Rules are documented in docs/platform-sessions.md.
 */
export const NONCE_WINDOW_MS = 30_000;
export const HEARTBEAT_TIMEOUT_MS = 30_000;
export const TOKEN_TTL_SEC = 2 * 3600;
const MAX_ENDED_PER_ACCOUNT = 200;

export type EndReason = 'stopped' | 'heartbeat_timeout' | 'balance_exhausted' | 'resumed' | 'abnormal';

export interface CallSession {
  sessionId: string;
  accountId: string;
  nonce: string;
  timbre: string;
  language: 'zh' | 'en';
  sampleRate: number | null;
  previousSessionId: string | null;
  /** Conversation context carried from `previous_session_id`. */
  turns: Turn[];
  roomName: string;
  identity: string;
  botIdentity: string;
  token: string;
  expireAt: number;
  startedAtMs: number;
  lastHeartbeatMs: number;
  state: 'active' | 'ended';
  endedAtMs: number | null;
  endReason: EndReason | null;
  meter: Meter;
}

interface CallStore {
  sessions: Map<string, CallSession>;
  /** `${accountId}:${nonce}` → the session it started and when. */
  nonces: Map<string, { sessionId: string; atMs: number }>;
  /** Not saved: clock timer ids, rebuilt from timestamps on load. */
  deadlines: Map<string, number>;
  exhaustTimers: Map<string, number>;
  /** Tokens being signed (a nonce replay during the signing waits for it). */
  signing: Map<string, Promise<string>>;
}

interface CallArea extends StateArea {
  store: CallStore;
}

const AREA = 'calls';

function priceOf(emu: Emulator): number {
  return emu.fixtures.data['billing.json'].prices_micro.call_second;
}

export function callStore(emu: Emulator): CallStore {
  const found = emu.areas.get(AREA) as CallArea | undefined;
  if (found) return found.store;
  const s: CallStore = { sessions: new Map(), nonces: new Map(), deadlines: new Map(), exhaustTimers: new Map(), signing: new Map() };
  const area: CallArea = {
    name: AREA,
    store: s,
    reset(accountId) {
      for (const [id, x] of s.sessions) {
        if (accountId !== undefined && x.accountId !== accountId) continue;
        emu.clock.cancel(s.deadlines.get(id));
        s.deadlines.delete(id);
        s.sessions.delete(id);
      }
      for (const k of s.nonces.keys()) if (accountId === undefined || k.startsWith(`${accountId}:`)) s.nonces.delete(k);
      for (const [k, v] of s.exhaustTimers) {
        if (accountId !== undefined && k !== accountId) continue;
        emu.clock.cancel(v);
        s.exhaustTimers.delete(k);
      }
    },
    view: (accountId) => [...s.sessions.values()].filter((x) => x.accountId === accountId).map(viewOf),
    save: () => ({ sessions: [...s.sessions.values()], nonces: [...s.nonces.entries()] }),
    load(data) {
      const d = (data ?? {}) as { sessions?: CallSession[]; nonces?: [string, { sessionId: string; atMs: number }][] };
      area.reset();
      for (const x of d.sessions ?? []) s.sessions.set(x.sessionId, x);
      for (const [k, v] of d.nonces ?? []) s.nonces.set(k, v);
      // Pending deadlines come back from their timestamps; overdue ones fire at once.
      for (const x of s.sessions.values()) if (x.state === 'active') armDeadline(emu, s, x);
      for (const accountId of new Set([...s.sessions.values()].filter((x) => x.state === 'active').map((x) => x.accountId))) {
        const account = emu.accounts.byId(accountId);
        if (account) armExhaustion(emu, s, account);
      }
    },
  };
  emu.registerArea(area);
  return s;
}

function viewOf(x: CallSession) {
  return {
    session_id: x.sessionId,
    state: x.state,
    end_reason: x.endReason,
    timbre: x.timbre,
    language: x.language,
    room_name: x.roomName,
    started_at_ms: x.startedAtMs,
    last_heartbeat_ms: x.lastHeartbeatMs,
    heartbeat_deadline_ms: x.state === 'active' ? x.lastHeartbeatMs + HEARTBEAT_TIMEOUT_MS : null,
    ended_at_ms: x.endedAtMs,
    billed_sec: seconds(x.meter.billedMs),
    billed_micro: Math.round(x.meter.costExact),
    previous_session_id: x.previousSessionId,
    carried_turns: x.turns.length,
  };
}

const active = (s: CallStore, accountId: string) => [...s.sessions.values()].filter((x) => x.accountId === accountId && x.state === 'active');

/** Ends at the first millisecond that is "more than 30 s" without a heartbeat; billed up to +30 s. */
function armDeadline(emu: Emulator, s: CallStore, x: CallSession): void {
  emu.clock.cancel(s.deadlines.get(x.sessionId));
  const due = x.lastHeartbeatMs + HEARTBEAT_TIMEOUT_MS + 1;
  const id = emu.clock.at(
    due,
    () => {
      s.deadlines.delete(x.sessionId);
      const account = emu.accounts.byId(x.accountId);
      if (account) advance(emu, account, due);
    },
    `call heartbeat timeout ${x.sessionId}`,
    x.accountId,
  );
  s.deadlines.set(x.sessionId, id);
}

/** A timer at the moment the balance runs out, when that comes before every heartbeat deadline. */
function armExhaustion(emu: Emulator, s: CallStore, account: Account): void {
  emu.clock.cancel(s.exhaustTimers.get(account.id));
  s.exhaustTimers.delete(account.id);
  const running = active(s, account.id);
  const budget = budgetMs(account, priceOf(emu), true);
  if (running.length === 0 || !Number.isFinite(budget)) return;
  const from = Math.max(...running.map((x) => x.meter.settledToMs));
  const at = from + Math.floor(budget / running.length);
  if (at >= Math.min(...running.map((x) => x.lastHeartbeatMs + HEARTBEAT_TIMEOUT_MS))) return;
  const id = emu.clock.at(
    at,
    () => {
      s.exhaustTimers.delete(account.id);
      advance(emu, account, at);
    },
    'call balance runs out',
    account.id,
  );
  s.exhaustTimers.set(account.id, id);
}

function end(emu: Emulator, s: CallStore, x: CallSession, atMs: number, reason: EndReason): void {
  if (x.state === 'ended') return;
  x.state = 'ended';
  x.endedAtMs = Math.max(atMs, x.meter.settledToMs);
  x.endReason = reason;
  emu.clock.cancel(s.deadlines.get(x.sessionId));
  s.deadlines.delete(x.sessionId);
  emu.markDirty();
}

/**
 * Brings one account's calls up to `untilMs`: bills them, ends those whose heartbeat deadline passed
 * (at the deadline) and all of them when the money runs out (at that moment).
 */
function advance(emu: Emulator, account: Account, untilMs: number): void {
  const s = callStore(emu);
  const price = priceOf(emu);
  for (;;) {
    const running = active(s, account.id);
    if (running.length === 0) break;
    const overdue = running
      .filter((x) => x.lastHeartbeatMs + HEARTBEAT_TIMEOUT_MS < untilMs)
      .sort((a, b) => a.lastHeartbeatMs - b.lastHeartbeatMs)[0];
    const target = overdue ? overdue.lastHeartbeatMs + HEARTBEAT_TIMEOUT_MS : untilMs;
    const ranOut = settleMeters(account, running.map((x) => x.meter), target, price, true);
    if (ranOut !== null) {
      for (const x of running) end(emu, s, x, ranOut, 'balance_exhausted');
      break;
    }
    if (!overdue) {
      if (budgetMs(account, price, true) < 1) for (const x of running) end(emu, s, x, untilMs, 'balance_exhausted');
      break;
    }
    end(emu, s, overdue, target, 'heartbeat_timeout');
  }
  armExhaustion(emu, s, account);
  emu.markDirty();
}

function ownSession(emu: Emulator, account: Account, sessionId: string): CallSession {
  const x = callStore(emu).sessions.get(sessionId);
  if (!x || x.accountId !== account.id) throw new PlatformError('param', `session_id: no call session "${sessionId}" for this API key`);
  return x;
}

async function startData(emu: Emulator, s: CallStore, x: CallSession): Promise<StartData> {
  const token = x.token || (await s.signing.get(x.sessionId)) || '';
  return {
    session_id: x.sessionId,
    rtc_url: emu.config.rtcUrl,
    room_name: x.roomName,
    identity: x.identity,
    token,
    bot_identity: x.botIdentity,
    expire_at: x.expireAt,
  };
}

export async function startCall(emu: Emulator, account: Account, body: StartBody): Promise<StartData> {
  const s = callStore(emu);
  const now = emu.clock.now();
  const timbre = body.timbre ?? 'default';
  requireRole(emu, timbre, 'timbre');

  // The same nonce within the window answers the same session, whatever its state.
  const nonceKey = `${account.id}:${body.client_nonce.toLowerCase()}`;
  for (const [k, v] of s.nonces) if (now - v.atMs > NONCE_WINDOW_MS) s.nonces.delete(k);
  const seen = s.nonces.get(nonceKey);
  const replay = seen && s.sessions.get(seen.sessionId);
  if (replay) return startData(emu, s, replay);

  let turns: Turn[] = [];
  let resumed: CallSession | undefined;
  if (body.previous_session_id) {
    const id = body.previous_session_id;
    const call = s.sessions.get(id);
    const rest = getSession(emu, account.id, id);
    if (call && call.accountId === account.id) {
      turns = call.turns;
      if (call.state === 'active') resumed = call;
    } else if (rest) turns = rest.turns;
    else throw new PlatformError('param', `previous_session_id: no earlier session "${id}" of this API key`);
  }

  advance(emu, account, now);
  const price = priceOf(emu);
  if (budgetMs(account, price, true) < 1000) {
    throw new PlatformError('balance', `insufficient balance: a call needs at least 1 second (${price} micro-units); balance ${account.balanceMicro}`);
  }
  const others = active(s, account.id).filter((x) => x !== resumed);
  if (account.limits.single_channel && others.length > 0) {
    throw new PlatformError(40012, `a call is in progress (session ${others[0]!.sessionId}); end it first`);
  }
  const max = account.limits.max_concurrent_calls;
  if (max !== undefined && others.length >= max) {
    throw new PlatformError(40013, `concurrency limit reached: ${others.length} of ${max} concurrent calls in progress`);
  }
  if (resumed) end(emu, s, resumed, now, 'resumed');

  const ids = emu.ids.stream(account.id);
  const sessionId = ids.uuid();
  const x: CallSession = {
    sessionId,
    accountId: account.id,
    nonce: body.client_nonce,
    timbre,
    language: body.language ?? 'zh',
    sampleRate: body.sample_rate ?? null,
    previousSessionId: body.previous_session_id ?? null,
    turns: turns.slice(-MAX_TURNS).map((t) => ({ ...t })),
    roomName: `room_${ids.hex(16)}`,
    identity: `user_${ids.hex(12)}`,
    botIdentity: `bot_${ids.hex(12)}`,
    token: '',
    expireAt: Math.floor(now / 1000) + TOKEN_TTL_SEC,
    startedAtMs: now,
    lastHeartbeatMs: now,
    state: 'active',
    endedAtMs: null,
    endReason: null,
    meter: newMeter(now),
  };
  s.sessions.set(sessionId, x);
  s.nonces.set(nonceKey, { sessionId, atMs: now });
  prune(s, account.id);
  armDeadline(emu, s, x);
  armExhaustion(emu, s, account);
  emu.markDirty();

  const signing = mintRoomToken({
    apiKey: emu.config.livekitApiKey,
    apiSecret: emu.config.livekitApiSecret,
    identity: x.identity,
    room: x.roomName,
    notBeforeSec: Math.floor(now / 1000),
    expiresAtSec: x.expireAt,
  });
  s.signing.set(sessionId, signing);
  try {
    x.token = await signing;
  } finally {
    s.signing.delete(sessionId);
  }
  return startData(emu, s, x);
}

function prune(s: CallStore, accountId: string): void {
  const ended = [...s.sessions.values()].filter((x) => x.accountId === accountId && x.state === 'ended');
  for (const old of ended.slice(0, Math.max(0, ended.length - MAX_ENDED_PER_ACCOUNT))) s.sessions.delete(old.sessionId);
}

function elapsedMs(x: CallSession, now: number): number {
  // The clock may be set backwards: never a negative duration.
  return x.state === 'ended' ? x.meter.billedMs : Math.max(0, now - x.startedAtMs);
}

export function heartbeat(emu: Emulator, account: Account, sessionId: string): HeartbeatData {
  const s = callStore(emu);
  const x = ownSession(emu, account, sessionId);
  const now = emu.clock.now();
  advance(emu, account, now);
  if (x.state === 'active') {
    x.lastHeartbeatMs = now;
    armDeadline(emu, s, x);
    armExhaustion(emu, s, account);
  }
  return {
    should_close: x.state === 'ended',
    remaining_seconds: remainingSeconds(account, priceOf(emu), true),
    elapsed_seconds: seconds(elapsedMs(x, now)),
  };
}

/** The room went away abnormally (fault `close_ws` on a heartbeat): ended now, billed up to now. */
export function endAbnormally(emu: Emulator, account: Account, sessionId: string): void {
  const x = ownSession(emu, account, sessionId);
  advance(emu, account, emu.clock.now());
  end(emu, callStore(emu), x, emu.clock.now(), 'abnormal');
  armExhaustion(emu, callStore(emu), account);
}

/** Ends the call (if still running) and answers its settled bill; repeating it charges nothing more. */
export function stopCall(emu: Emulator, account: Account, sessionId: string): StopData {
  const s = callStore(emu);
  const x = ownSession(emu, account, sessionId);
  const now = emu.clock.now();
  advance(emu, account, now);
  end(emu, s, x, now, 'stopped');
  armExhaustion(emu, s, account);
  return { total_sec: seconds(x.meter.billedMs), total_billed: Math.round(x.meter.costExact) };
}

/** Live call sessions of an account (other areas may count them). */
export function activeCalls(emu: Emulator, accountId: string): number {
  return active(callStore(emu), accountId).length;
}
