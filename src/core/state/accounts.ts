/**
 * API key -> account. Keys are never stored: an account is known by the hash of its key (`id`),
 * and shown redacted (`label`). Every resource of every service belongs to one account id.
 */
import { accountSchemas, type AccountRegistry, type AccountSchemas, type Capability, type ServiceSettings } from './account-settings.js';
import { sha256Hex } from './ids.js';
import type { StreamShape } from '../faults/faults.js';

export type { Capability, ServiceSettings } from './account-settings.js';

export interface AccountLimits {
  requests_per_minute?: number;
  characters_per_minute?: number;
  /** Speech-to-text requests a minute (off unless set). */
  speech_to_text_per_minute?: number;
  max_concurrent_calls?: number;
  single_channel?: boolean;
}

export interface AccountSettings {
  balance_micro?: number;
  /** Free pool of call seconds left (billing counts it as 0). */
  free_call_seconds?: number;
  capabilities?: Capability[];
  project?: string;
  disabled?: boolean;
  limits?: AccountLimits;
  /** Identity verification done (speech voice cloning needs it: 2038 otherwise). Default true. */
  real_name_verified?: boolean;
  /** Settings the services registered (the speech service's bidi buffering, stt pace); a PUT merges each group. */
  speech_settings?: ServiceSettings;
  /** Pace and audio faults of every audio stream of the account (docs/voice-agents.md); a PUT replaces them, `{}` clears. */
  stream_faults?: StreamShape;
}

export interface Account {
  id: string;
  label: string;
  balanceMicro: number;
  capabilities: Capability[];
  project: string;
  disabled: boolean;
  limits: AccountLimits;
  /** False only when set so: voice cloning on the speech service then answers 2038. */
  realNameVerified: boolean;
  /** Free pool of call seconds not yet used. */
  freeCallSeconds: number;
  /** True when the account comes from the fixture or a PUT (strict mode accepts only these). */
  listed: boolean;
  /** The values set; the service applies its defaults to the others. */
  speechSettings?: ServiceSettings;
  /** Pace and audio faults of every audio stream (the stream guard reads them). */
  streamFaults?: StreamShape;
}

export type Resolution = { ok: true; account: Account } | { ok: false; problem: 'missing' | 'invalid' | 'disabled' };

export const DEFAULT_BALANCE_MICRO = 1_000_000_000_000_000; // a balance that never matters

/** Ids of recently presented keys: hashing the key of every request is a visible share of a cheap answer. */
const recentIds = new Map<string, string>();
const RECENT_IDS_MAX = 4096;

export function accountId(key: string): string {
  let id = recentIds.get(key);
  if (id === undefined) {
    id = sha256Hex(key).slice(0, 16);
    // A pure memo (the id depends only on the key), bounded: cleared whole when full.
    if (recentIds.size >= RECENT_IDS_MAX) recentIds.clear();
    recentIds.set(key, id);
  }
  return id;
}

export function redactKey(key: string): string {
  return `${key.slice(0, Math.min(4, Math.floor(key.length / 2)))}…${sha256Hex(key).slice(0, 6)}`;
}

export interface AccountsOptions {
  strict: boolean;
  fixture: (AccountSettings & { key: string })[];
  freeCallSeconds: number;
  /** The registered capabilities (a key holds all of them unless its settings name fewer) and settings. */
  registry: AccountRegistry;
}

/** How long (wall time) an account stays after its last request before a sweep may forget it. */
export const ACCOUNT_GRACE_MS = 60_000;

export class Accounts {
  private accounts = new Map<string, Account>();
  private fixture = new Map<string, AccountSettings & { label: string }>();
  /** Wall time of each account's last request: a sweep leaves accounts whose request may be in flight. */
  private seenAt = new Map<string, number>();
  private createdSinceSweep = 0;
  /** @internal How long an account stays after its last request (tests shorten it). */
  graceMs = ACCOUNT_GRACE_MS;
  /** Called when enough accounts were created since the last sweep (set by the listeners' owner). */
  onSweepDue: (() => void) | null = null;
  /** Told of each account added, changed or dropped (the state store writes only those). */
  onChange: (id: string) => void = () => {};

  /** The schemas of an account's settings (fixture, control plane) for the registered services. */
  readonly schemas: AccountSchemas;

  constructor(private readonly opts: AccountsOptions) {
    this.schemas = accountSchemas(opts.registry);
    this.useFixture(opts.fixture, opts.freeCallSeconds);
  }

  /**
   * Replaces the accounts fixture at run time: keys it lists get its settings at once (their balance
   * too), keys it no longer lists keep what they have; new accounts get the new free call seconds.
   * `reapply: false` (a snapshot being restored) leaves the accounts as they were saved.
   */
  useFixture(fixture: (AccountSettings & { key: string })[], freeCallSeconds: number, reapply = true): void {
    this.opts.freeCallSeconds = freeCallSeconds;
    this.fixture.clear();
    for (const f of fixture) this.fixture.set(accountId(f.key), { ...f, label: redactKey(f.key) });
    for (const [id, account] of reapply ? this.accounts : []) {
      const listed = this.fixture.get(id);
      if (listed) this.accounts.set(id, { ...this.build(id, account.label, listed), freeCallSeconds: account.freeCallSeconds });
      if (listed) this.onChange(id);
    }
  }

  /** Resolves a presented key; unknown non-empty keys become their own account unless strict. */
  resolve(key: string | undefined | null): Resolution {
    const k = (key ?? '').trim();
    if (!k) return { ok: false, problem: 'missing' };
    const id = accountId(k);
    let account = this.accounts.get(id);
    if (!account) {
      const listed = this.fixture.get(id);
      if (!listed && this.opts.strict) return { ok: false, problem: 'invalid' };
      account = this.create(id, redactKey(k), listed);
    }
    if (this.opts.strict && !account.listed) return { ok: false, problem: 'invalid' };
    if (account.disabled) return { ok: false, problem: 'disabled' };
    // Wall time, not the emulator clock: this is memory management, not a rule.
    this.seenAt.set(id, performance.now());
    return { ok: true, account };
  }

  /**
   * Forgets accounts that hold nothing: never set (no PUT, not listed), balance and free pool as
   * created, no request within the grace, and `holds` false (no resource, session, socket or timer).
   * Such an account is rebuilt the same at its next request. Answers the ids forgotten.
   */
  sweep(holds: (ids: string[]) => Set<string>): string[] {
    this.createdSinceSweep = 0;
    const now = performance.now();
    const candidates: string[] = [];
    for (const [id, a] of this.accounts) {
      if (now - (this.seenAt.get(id) ?? -Infinity) < this.graceMs) continue;
      if (this.pristine(a)) candidates.push(id);
    }
    if (candidates.length === 0) return [];
    const held = holds(candidates);
    const dropped = candidates.filter((id) => !held.has(id));
    for (const id of dropped) {
      this.accounts.delete(id);
      this.seenAt.delete(id);
      this.onChange(id);
    }
    return dropped;
  }

  /** As a request with its key would build it: nothing set, nothing spent. */
  private pristine(a: Account): boolean {
    if (a.listed || a.speechSettings !== undefined) return false;
    const fresh = this.build(a.id, a.label);
    return (
      a.balanceMicro === fresh.balanceMicro &&
      a.freeCallSeconds === fresh.freeCallSeconds &&
      a.project === fresh.project &&
      a.disabled === fresh.disabled &&
      a.realNameVerified === fresh.realNameVerified &&
      a.capabilities.length === fresh.capabilities.length &&
      Object.keys(a.limits).length === 0
    );
  }

  /** Creates or updates the settings of a key (control plane). */
  put(key: string, settings: AccountSettings): Account {
    const id = accountId(key);
    const account = this.accounts.get(id) ?? this.create(id, redactKey(key), this.fixture.get(id));
    account.listed = true;
    this.onChange(id);
    if (settings.balance_micro !== undefined) account.balanceMicro = settings.balance_micro;
    if (settings.free_call_seconds !== undefined) account.freeCallSeconds = settings.free_call_seconds;
    if (settings.capabilities !== undefined) account.capabilities = [...settings.capabilities];
    if (settings.project !== undefined) account.project = settings.project;
    if (settings.disabled !== undefined) account.disabled = settings.disabled;
    if (settings.limits !== undefined) account.limits = { ...account.limits, ...settings.limits };
    if (settings.real_name_verified !== undefined) account.realNameVerified = settings.real_name_verified;
    // Each group of speech settings merges field by field: a PUT changes only what it names.
    for (const [group, values] of Object.entries(settings.speech_settings ?? {}) as [keyof ServiceSettings, object | undefined][]) {
      if (values) account.speechSettings = { ...account.speechSettings, [group]: { ...account.speechSettings?.[group], ...values } };
    }
    if (settings.stream_faults !== undefined) account.streamFaults = { ...settings.stream_faults };
    return account;
  }

  /**
   * The account of a key for the control plane's read: like a request with that key, it materialises a
   * valid key's account (defaults or fixture), so it is then listed in the state view; under strict keys an
   * unlisted key answers undefined and is not created.
   */
  peek(key: string): Account | undefined {
    const id = accountId(key);
    // A key never used is shown with the settings it would get, but not added to the state view.
    return this.accounts.get(id) ?? (this.fixture.has(id) || !this.opts.strict ? this.build(id, redactKey(key), this.fixture.get(id)) : undefined);
  }

  byId(id: string): Account | undefined {
    return this.accounts.get(id);
  }

  all(): Account[] {
    return [...this.accounts.values()];
  }

  /** Forget settings and balances (all, or one account): they come back from the fixture/defaults. */
  reset(id?: string): void {
    if (id === undefined) (this.accounts.clear(), this.seenAt.clear());
    else (this.accounts.delete(id), this.seenAt.delete(id), this.onChange(id));
  }

  canAfford(account: Account, micro: number): boolean {
    return account.balanceMicro >= micro && (micro > 0 || account.balanceMicro > 0);
  }

  charge(account: Account, micro: number): void {
    const due = Math.max(0, Math.round(micro));
    account.balanceMicro = Math.max(0, account.balanceMicro - due);
    this.onChange(account.id);
    // A request that outlived the grace may hold an account a sweep forgot: the charge brings it back.
    const stored = this.accounts.get(account.id);
    if (stored === undefined) this.accounts.set(account.id, account);
    else if (stored !== account) stored.balanceMicro = Math.max(0, stored.balanceMicro - due);
  }

  get registry(): AccountRegistry {
    return this.opts.registry;
  }

  has(account: Account, capability: Capability): boolean {
    return account.capabilities.includes(capability);
  }

  save(): Account[] {
    return this.all().map((a) => ({ ...a }));
  }

  load(saved: Account[]): void {
    this.accounts.clear();
    for (const a of saved) this.accounts.set(a.id, { ...a });
  }

  private create(id: string, label: string, listed?: AccountSettings & { label: string }): Account {
    const account = this.build(id, label, listed);
    this.accounts.set(id, account);
    this.onChange(id);
    this.seenAt.set(id, performance.now());
    // Amortized: a sweep after as many new accounts as half those kept (at least 1,000).
    if (++this.createdSinceSweep >= Math.max(1000, this.accounts.size / 2)) this.onSweepDue?.();
    return account;
  }

  private build(id: string, label: string, listed?: AccountSettings & { label: string }): Account {
    return {
      id,
      label: listed?.label ?? label,
      balanceMicro: listed?.balance_micro ?? DEFAULT_BALANCE_MICRO,
      capabilities: [...(listed?.capabilities ?? this.opts.registry.capabilities)],
      project: listed?.project ?? 'default',
      disabled: listed?.disabled ?? false,
      limits: { ...(listed?.limits ?? {}) },
      realNameVerified: listed?.real_name_verified ?? true,
      freeCallSeconds: this.opts.freeCallSeconds,
      listed: listed !== undefined,
      ...(listed?.speech_settings ? { speechSettings: structuredClone(listed.speech_settings) } : {}),
    };
  }
}

/** The control plane's view of an account: same field names as PUT accepts. */
export function accountView(a: Account) {
  return {
    account: a.label,
    balance_micro: a.balanceMicro,
    free_call_seconds: a.freeCallSeconds,
    capabilities: a.capabilities,
    project: a.project,
    disabled: a.disabled,
    limits: a.limits,
    real_name_verified: a.realNameVerified !== false,
    speech_settings: a.speechSettings ?? {},
    stream_faults: a.streamFaults ?? {},
  };
}
