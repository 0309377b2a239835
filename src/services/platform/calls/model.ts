/**
 * Real-time call sessions: start (nonce window, limits, room credentials), heartbeats (30 s timeout on
 * the emulator clock), stop (settled billing, idempotent). Rules are documented in docs/platform-sessions.md.
 */
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { PlatformError } from '../envelope.js';
import { getSession, MAX_TURNS, type Turn } from '../shared/conversation-sessions.js';
import * as hb from '../shared/heartbeat-sessions.js';
import { budgetMs, newMeter, remainingSeconds, seconds, type Meter } from '../shared/meter.js';
import { requireRole } from '../shared/roles.js';
import type { HeartbeatData, StartBody, StartData, StopData } from './schema.js';

export const NONCE_WINDOW_MS = 30_000;
export const HEARTBEAT_TIMEOUT_MS = hb.HEARTBEAT_TIMEOUT_MS;
export const TOKEN_TTL_SEC = 2 * 3600;

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

/** Nonce replays: `${accountId}:${nonce}` → the session it started and when (expire after the window). */
type NonceEntry = { sessionId: string; atMs: number };
type CallStore = hb.SessionStore<CallSession, NonceEntry>;

const rules: hb.Rules<CallSession> = {
  area: 'calls',
  keysField: 'nonces',
  label: 'call',
  price: (emu) => emu.fixtures.data['billing.json'].prices_micro.call_second,
  useFreePool: true,
  live: (x) => x.state === 'active',
  lastSeenMs: (x) => x.lastHeartbeatMs,
  meter: (x) => x.meter,
  view: viewOf,
  timedOut: (emu, x, atMs) => end(emu, x, atMs, 'heartbeat_timeout'),
  exhausted: (emu, x, atMs) => end(emu, x, atMs, 'balance_exhausted'),
};

export function callStore(emu: Emulator): CallStore {
  return hb.sessionStore(emu, rules);
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

/** 40012: a single-channel account already has a call running. */
const callInProgress = (sessionId: string) => new PlatformError(40012, `a call is in progress (session ${sessionId}); end it first`);
/** 40013: the account's concurrent-call limit is reached. */
const tooManyCalls = (running: number, max: number) => new PlatformError(40013, `concurrency limit reached: ${running} of ${max} concurrent calls in progress`);

function end(emu: Emulator, x: CallSession, atMs: number, reason: EndReason): void {
  hb.close(emu, rules, x, atMs, (endedAtMs) => {
    x.state = 'ended';
    x.endedAtMs = endedAtMs;
    x.endReason = reason;
  });
}

function ownSession(emu: Emulator, account: Account, sessionId: string): CallSession {
  return hb.own(emu, rules, account.id, sessionId, () => new PlatformError('param', `session_id: no call session "${sessionId}" for this API key`));
}

async function startData(emu: Emulator, s: CallStore, x: CallSession): Promise<StartData> {
  const token = await hb.roomToken(s, x.sessionId, x.token);
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
  const store = callStore(emu);
  const now = emu.clock.now();
  const timbre = body.timbre ?? 'default';
  requireRole(emu, timbre, 'timbre');

  // The same nonce within the window answers the same session, whatever its state.
  const nonceKey = hb.keyFor(account.id, body.client_nonce.toLowerCase());
  for (const [key, entry] of store.keys) {
    if (now - entry.atMs <= NONCE_WINDOW_MS) continue;
    store.keys.delete(key);
    emu.markDirty(rules.area, key.slice(0, key.indexOf(':')));
  }
  const seen = store.keys.get(nonceKey);
  const replay = seen && store.sessions.get(seen.sessionId);
  if (replay) return startData(emu, store, replay);

  let turns: Turn[] = [];
  let resumed: CallSession | undefined;
  if (body.previous_session_id) {
    const id = body.previous_session_id;
    const call = store.sessions.get(id);
    const rest = getSession(emu, account.id, id);
    if (call && call.accountId === account.id) {
      turns = call.turns;
      if (call.state === 'active') resumed = call;
    } else if (rest) turns = rest.turns;
    else throw new PlatformError('param', `previous_session_id: no earlier session "${id}" of this API key`);
  }

  hb.advance(emu, rules, account, now);
  const price = rules.price(emu);
  if (budgetMs(account, price, true) < 1000) {
    throw new PlatformError('balance', `insufficient balance: a call needs at least 1 second (${price} micro-units); balance ${account.balanceMicro}`);
  }
  const others = hb.liveSessions(emu, rules, account.id).filter((session) => session !== resumed);
  const [inProgress] = others;
  if (account.limits.single_channel && inProgress) {
    throw callInProgress(inProgress.sessionId);
  }
  const max = account.limits.max_concurrent_calls;
  if (max !== undefined && others.length >= max) {
    throw tooManyCalls(others.length, max);
  }
  if (resumed) end(emu, resumed, now, 'resumed');

  const ids = emu.ids.stream(account.id);
  const sessionId = ids.uuid();
  const session: CallSession = {
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
  store.sessions.set(sessionId, session);
  store.keys.set(nonceKey, { sessionId, atMs: now });
  hb.pruneClosed(emu, rules, account.id);
  hb.armDeadline(emu, rules, session);
  hb.armExhaustion(emu, rules, account);
  emu.markDirty(rules.area, account.id);

  const room = { sessionId, identity: session.identity, room: session.roomName, nowMs: now, expireAt: session.expireAt };
  // The token comes after the session was marked (a commit may have written it in between): marked again.
  await hb.signRoomToken(emu, store, room, (token) => {
    session.token = token;
    emu.markDirty(rules.area, account.id);
  });
  return startData(emu, store, session);
}

function elapsedMs(x: CallSession, now: number): number {
  // The clock may be set backwards: never a negative duration.
  return x.state === 'ended' ? x.meter.billedMs : Math.max(0, now - x.startedAtMs);
}

export function heartbeat(emu: Emulator, account: Account, sessionId: string): HeartbeatData {
  const x = ownSession(emu, account, sessionId);
  const now = emu.clock.now();
  hb.advance(emu, rules, account, now);
  if (x.state === 'active') {
    x.lastHeartbeatMs = now;
    hb.armDeadline(emu, rules, x);
    hb.armExhaustion(emu, rules, account);
  }
  return {
    should_close: x.state === 'ended',
    remaining_seconds: remainingSeconds(account, rules.price(emu), true),
    elapsed_seconds: seconds(elapsedMs(x, now)),
  };
}

/** The room went away abnormally (fault `close_ws` on a heartbeat): ended now, billed up to now. */
export function endAbnormally(emu: Emulator, account: Account, sessionId: string): void {
  const x = ownSession(emu, account, sessionId);
  hb.advance(emu, rules, account, emu.clock.now());
  end(emu, x, emu.clock.now(), 'abnormal');
  hb.armExhaustion(emu, rules, account);
}

/** Ends the call (if still running) and answers its settled bill; repeating it charges nothing more. */
export function stopCall(emu: Emulator, account: Account, sessionId: string): StopData {
  const x = ownSession(emu, account, sessionId);
  const now = emu.clock.now();
  hb.advance(emu, rules, account, now);
  end(emu, x, now, 'stopped');
  hb.armExhaustion(emu, rules, account);
  return { total_sec: seconds(x.meter.billedMs), total_billed: Math.round(x.meter.costExact) };
}
