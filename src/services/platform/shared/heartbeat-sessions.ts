/**
 * The mechanism that call sessions and agent sessions share: a store registered as a state area, a
 * heartbeat deadline per session, one balance-exhaustion timer per account, and `advance`, which bills
 * an account's sessions up to a moment and ends those whose heartbeat or money ran out. Each model keeps
 * its own states, codes and fields, and tells this module how to read and end its sessions (`Rules`).
 */
import type { Account } from '../../../core/state/accounts.js';
import * as z from 'zod';
import { areaOf, checkWith, recordViews, type SavedRecord, type SavedRecords } from '../../../core/state/areas.js';
import type { Emulator, StateArea } from '../../../core/emulator.js';
import { mintRoomToken } from '../../shared/livekit.js';
import { budgetMs, settleMeters, type Meter } from './meter.js';
import { charge } from '../../shared/charges.js';

/** A session ends at the first millisecond past this much time without a heartbeat, billed up to it. */
export const HEARTBEAT_TIMEOUT_MS = 30_000;
/** Ended sessions kept per account for lookups and the state view; older ones are dropped. */
export const MAX_CLOSED_PER_ACCOUNT = 200;

export interface HeartbeatSession {
  sessionId: string;
  accountId: string;
}

export interface SessionStore<S, K> {
  sessions: Map<string, S>;
  /** `${accountId}:${client key}` → what that nonce / idempotency key answered. */
  keys: Map<string, K>;
  /** Not saved: clock timer ids, rebuilt from timestamps on load. */
  deadlines: Map<string, number>;
  /** accountId → the timer at the moment its balance runs out. */
  exhaustTimers: Map<string, number>;
  /** Tokens being signed (a replay during the signing waits for it). */
  signing: Map<string, Promise<string>>;
}

/** What a model tells the shared mechanism about its sessions. */
export interface Rules<S extends HeartbeatSession> {
  /** State-area name, and the snapshot field that holds the key map (kept as saved before). */
  area: string;
  keysField: string;
  /** First word of the clock timers' labels. */
  label: string;
  price(emu: Emulator): number;
  useFreePool: boolean;
  live(x: S): boolean;
  /** Last heartbeat (or start before the first one): the timeout counts from here. */
  lastSeenMs(x: S): number;
  /** The running meter, or null while the session is not billed (an agent still connecting). */
  meter(x: S): Meter | null;
  view(x: S): unknown;
  /** Ends a session whose heartbeat deadline passed, at `atMs` (last seen + 30 s). */
  timedOut(emu: Emulator, x: S, atMs: number): void;
  /** Ends a billed session whose account ran out of money at `atMs`. */
  exhausted(emu: Emulator, x: S, atMs: number): void;
  /** The key to forget with a pruned session, if keys do not expire on their own. */
  prunedKey?(x: S): string;
}

interface Area<S, K> extends StateArea {
  store: SessionStore<S, K>;
}

export const keyFor = (accountId: string, key: string): string => `${accountId}:${key}`;

/** The area's store, registered on first use. */
export function sessionStore<S extends HeartbeatSession, K>(emu: Emulator, rules: Rules<S>): SessionStore<S, K> {
  return areaOf(emu, rules.area, () => createArea<S, K>(emu, rules)).store;
}

function createArea<S extends HeartbeatSession, K>(emu: Emulator, rules: Rules<S>): Area<S, K> {
  const store: SessionStore<S, K> = { sessions: new Map(), keys: new Map(), deadlines: new Map(), exhaustTimers: new Map(), signing: new Map() };
  const area: Area<S, K> = {
    name: rules.area,
    store,
    reset(accountId) {
      for (const [id, session] of store.sessions) {
        if (accountId !== undefined && session.accountId !== accountId) continue;
        dropDeadline(emu, store, id);
        store.sessions.delete(id);
      }
      for (const key of store.keys.keys()) if (accountId === undefined || key.startsWith(`${accountId}:`)) store.keys.delete(key);
      for (const [owner, timer] of store.exhaustTimers) {
        if (accountId !== undefined && owner !== accountId) continue;
        emu.clock.cancel(timer);
        store.exhaustTimers.delete(owner);
      }
    },
    ...recordViews(
      () => store.sessions.values(),
      (session) => session.accountId,
      (session) => rules.view(session),
    ),
    save: () => ({ sessions: [...store.sessions.values()], [rules.keysField]: [...store.keys.entries()] }),
    records: sessionRecords(store, rules.keysField),
    check: checkWith(
      z.looseObject({
        sessions: z.array(z.looseObject({ sessionId: z.string().min(1), accountId: z.string().min(1) })),
        [rules.keysField]: z.array(z.tuple([z.string(), z.unknown()])).optional(),
      }),
    ),
    load(data) {
      const saved = (data ?? {}) as Record<string, unknown>;
      area.reset();
      for (const session of (saved.sessions ?? []) as S[]) store.sessions.set(session.sessionId, session);
      for (const [key, value] of (saved[rules.keysField] ?? []) as [string, K][]) store.keys.set(key, value);
      // Pending deadlines come back from their timestamps; overdue ones fire at once.
      const running = [...store.sessions.values()].filter((session) => rules.live(session));
      for (const session of running) armDeadline(emu, rules, session);
      for (const accountId of new Set(running.map((session) => session.accountId))) {
        const account = emu.accounts.byId(accountId);
        if (account) armExhaustion(emu, rules, account);
      }
    },
  };
  return area;
}

export function liveSessions<S extends HeartbeatSession>(emu: Emulator, rules: Rules<S>, accountId: string): S[] {
  return [...sessionStore(emu, rules).sessions.values()].filter((session) => session.accountId === accountId && rules.live(session));
}

/** The account's session by id, or undefined (each area answers its own error). */
export function findOwn<S extends HeartbeatSession>(emu: Emulator, rules: Rules<S>, accountId: string, sessionId: string): S | undefined {
  const session = sessionStore(emu, rules).sessions.get(sessionId);
  return session && session.accountId === accountId ? session : undefined;
}

/** The account's session by id; `notFound` is the area's own error when there is none. */
export function own<S extends HeartbeatSession>(emu: Emulator, rules: Rules<S>, accountId: string, sessionId: string, notFound: () => Error): S {
  const session = findOwn(emu, rules, accountId, sessionId);
  if (!session) throw notFound();
  return session;
}

/**
 * Ends a live session at `atMs`: `mark` records the area's own state, given the moment it ended (never
 * before what its meter already billed); then its deadline goes and the area is marked. False when the
 * session had already ended (nothing changes).
 */
export function close<S extends HeartbeatSession>(emu: Emulator, rules: Rules<S>, session: S, atMs: number, mark: (endedAtMs: number) => void): boolean {
  if (!rules.live(session)) return false;
  const meter = rules.meter(session);
  mark(Math.max(atMs, meter?.settledToMs ?? atMs));
  dropDeadline(emu, sessionStore(emu, rules), session.sessionId);
  emu.markDirty(rules.area, session.accountId);
  return true;
}

export function dropDeadline<S, K>(emu: Emulator, store: SessionStore<S, K>, sessionId: string): void {
  emu.clock.cancel(store.deadlines.get(sessionId));
  store.deadlines.delete(sessionId);
}

/** Ends the session at the first millisecond that is "more than 30 s" without a heartbeat; billed up to +30 s. */
export function armDeadline<S extends HeartbeatSession>(emu: Emulator, rules: Rules<S>, session: S): void {
  const store = sessionStore(emu, rules);
  emu.clock.cancel(store.deadlines.get(session.sessionId));
  const due = rules.lastSeenMs(session) + HEARTBEAT_TIMEOUT_MS + 1;
  const id = emu.clock.at(
    due,
    () => {
      store.deadlines.delete(session.sessionId);
      const account = emu.accounts.byId(session.accountId);
      if (account) advance(emu, rules, account, due);
    },
    `${rules.label} heartbeat timeout ${session.sessionId}`,
    session.accountId,
  );
  store.deadlines.set(session.sessionId, id);
}

/**
 * A timer at the moment the balance runs out for the account's billed sessions (when that comes before
 * every heartbeat deadline), so a session ended by an exhausted balance shows in the state view at once.
 */
export function armExhaustion<S extends HeartbeatSession>(emu: Emulator, rules: Rules<S>, account: Account): void {
  const store = sessionStore(emu, rules);
  emu.clock.cancel(store.exhaustTimers.get(account.id));
  store.exhaustTimers.delete(account.id);
  const mine = liveSessions(emu, rules, account.id);
  const billed = mine.map((session) => rules.meter(session)).filter((meter): meter is Meter => meter !== null);
  const budget = budgetMs(account, rules.price(emu), rules.useFreePool);
  if (billed.length === 0 || !Number.isFinite(budget)) return;
  const at = Math.max(...billed.map((meter) => meter.settledToMs)) + Math.floor(budget / billed.length);
  if (at >= Math.min(...mine.map((session) => rules.lastSeenMs(session) + HEARTBEAT_TIMEOUT_MS))) return;
  const id = emu.clock.at(
    at,
    () => {
      store.exhaustTimers.delete(account.id);
      advance(emu, rules, account, at);
    },
    `${rules.label} balance runs out`,
    account.id,
  );
  store.exhaustTimers.set(account.id, id);
}

/**
 * Brings one account's sessions up to `untilMs`: bills the metered ones, ends those whose heartbeat
 * deadline passed (at the deadline, oldest first) and every billed one when the money runs out (at that
 * moment), then re-arms the exhaustion timer.
 */
export function advance<S extends HeartbeatSession>(emu: Emulator, rules: Rules<S>, account: Account, untilMs: number): void {
  const price = rules.price(emu);
  for (;;) {
    const mine = liveSessions(emu, rules, account.id);
    const overdue = mine
      .filter((session) => rules.lastSeenMs(session) + HEARTBEAT_TIMEOUT_MS < untilMs)
      .sort((a, b) => rules.lastSeenMs(a) - rules.lastSeenMs(b))[0];
    const target = overdue ? rules.lastSeenMs(overdue) + HEARTBEAT_TIMEOUT_MS : untilMs;
    const billed = mine.filter((session) => rules.meter(session) !== null);
    const meters = billed.map((session) => rules.meter(session)).filter((meter): meter is Meter => meter !== null);
    const ranOut = settleMeters(account, meters, target, price, rules.useFreePool, (micro) => charge(emu, account, micro));
    if (ranOut !== null) {
      for (const session of billed) rules.exhausted(emu, session, ranOut);
      continue; // sessions not yet billed may still time out
    }
    if (!overdue) {
      if (billed.length && budgetMs(account, price, rules.useFreePool) < 1) for (const session of billed) rules.exhausted(emu, session, untilMs);
      break;
    }
    rules.timedOut(emu, overdue, target);
  }
  armExhaustion(emu, rules, account);
  // The meters changed with their sessions; the free pool with the account (its charges marked it too).
  emu.markDirty(rules.area, account.id);
  emu.markDirty('accounts', account.id, account.id);
}

/** Drops the account's oldest ended sessions beyond the cap. */
export function pruneClosed<S extends HeartbeatSession>(emu: Emulator, rules: Rules<S>, accountId: string): void {
  const store = sessionStore(emu, rules);
  const closed = [...store.sessions.values()].filter((session) => session.accountId === accountId && !rules.live(session));
  for (const old of closed.slice(0, Math.max(0, closed.length - MAX_CLOSED_PER_ACCOUNT))) {
    store.sessions.delete(old.sessionId);
    if (rules.prunedKey) store.keys.delete(keyFor(accountId, rules.prunedKey(old)));
  }
}

/** The session's room token; a replay that comes while it is being signed waits for it. */
export async function roomToken<S, K>(s: SessionStore<S, K>, sessionId: string, token: string): Promise<string> {
  return token || (await s.signing.get(sessionId)) || '';
}

/**
 * Signs the room token of a new session at `nowMs`; replays that arrive meanwhile wait on `signing`.
 * `store` runs before the pending entry goes, so a replay sees the token one way or the other.
 */
export async function signRoomToken<S, K>(
  emu: Emulator,
  s: SessionStore<S, K>,
  x: { sessionId: string; identity: string; room: string; nowMs: number; expireAt: number },
  store: (token: string) => void,
): Promise<void> {
  const signing = mintRoomToken({
    apiKey: emu.config.livekitApiKey,
    apiSecret: emu.config.livekitApiSecret,
    identity: x.identity,
    room: x.room,
    notBeforeSec: Math.floor(x.nowMs / 1000),
    expiresAtSec: x.expireAt,
  });
  s.signing.set(x.sessionId, signing);
  try {
    store(await signing);
  } finally {
    s.signing.delete(x.sessionId);
  }
}

/**
 * The saved part as rows: one per session (`session:<id>`) and one per nonce key (`key:<key>`), each
 * with its account, so a change rewrites only that account's rows.
 */
function sessionRecords<S extends HeartbeatSession, K>(store: SessionStore<S, K>, keysField: string): SavedRecords {
  const sessionRow = (s: S): SavedRecord => ({ id: `session:${s.sessionId}`, account: s.accountId, value: { session: s } });
  // Keys are `<account>:<key>` (keyFor).
  const keyRow = ([key, value]: [string, unknown]): SavedRecord => ({
    id: `key:${key}`,
    account: key.slice(0, key.indexOf(':')),
    value: { key: [key, value] },
  });
  return {
    split(part) {
      const saved = (part ?? {}) as { sessions?: S[] } & Record<string, unknown>;
      return [...(saved.sessions ?? []).map(sessionRow), ...((saved[keysField] ?? []) as [string, unknown][]).map(keyRow)];
    },
    join(records) {
      const values = records.map((r) => r.value as { session?: S; key?: [string, K] });
      return { sessions: values.flatMap((v) => (v.session ? [v.session] : [])), [keysField]: values.flatMap((v) => (v.key ? [v.key] : [])) };
    },
    ofAccount(accountId) {
      const rows: SavedRecord[] = [];
      for (const s of store.sessions.values()) if (s.accountId === accountId) rows.push(sessionRow(s));
      for (const entry of store.keys) if (entry[0].startsWith(`${accountId}:`)) rows.push(keyRow(entry));
      return rows;
    },
  };
}
