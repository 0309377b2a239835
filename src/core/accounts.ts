/**
 * API key -> account. Keys are never stored: an account is known by the hash of its key (`id`),
 * and shown redacted (`label`). Every resource of every service belongs to one account id.
 */
import { sha256Hex } from './ids.js';
import type { SpeechSettings } from './speech-settings.js';
import type { StreamShape } from './stream-shaping.js';

export const CAPABILITIES = ['tts', 'cloning', 'upload', 'podcast', 'calls', 'recognition', 'detection', 'diarization', 'agents'] as const;
export type Capability = (typeof CAPABILITIES)[number];

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
  /** Settings of the speech service (the bidi socket's buffering); a PUT merges each group. */
  speech_settings?: SpeechSettings;
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
  speechSettings?: SpeechSettings;
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
}

export class Accounts {
  private accounts = new Map<string, Account>();
  private fixture = new Map<string, AccountSettings & { label: string }>();

  constructor(private readonly opts: AccountsOptions) {
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
    return { ok: true, account };
  }

  /** Creates or updates the settings of a key (control plane). */
  put(key: string, settings: AccountSettings): Account {
    const id = accountId(key);
    const account = this.accounts.get(id) ?? this.create(id, redactKey(key), this.fixture.get(id));
    account.listed = true;
    if (settings.balance_micro !== undefined) account.balanceMicro = settings.balance_micro;
    if (settings.free_call_seconds !== undefined) account.freeCallSeconds = settings.free_call_seconds;
    if (settings.capabilities !== undefined) account.capabilities = [...settings.capabilities];
    if (settings.project !== undefined) account.project = settings.project;
    if (settings.disabled !== undefined) account.disabled = settings.disabled;
    if (settings.limits !== undefined) account.limits = { ...account.limits, ...settings.limits };
    if (settings.real_name_verified !== undefined) account.realNameVerified = settings.real_name_verified;
    if (settings.speech_settings?.bidi)
      account.speechSettings = { ...account.speechSettings, bidi: { ...account.speechSettings?.bidi, ...settings.speech_settings.bidi } };
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
    if (id === undefined) this.accounts.clear();
    else this.accounts.delete(id);
  }

  canAfford(account: Account, micro: number): boolean {
    return account.balanceMicro >= micro && (micro > 0 || account.balanceMicro > 0);
  }

  charge(account: Account, micro: number): void {
    account.balanceMicro = Math.max(0, account.balanceMicro - Math.max(0, Math.round(micro)));
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
    return account;
  }

  private build(id: string, label: string, listed?: AccountSettings & { label: string }): Account {
    return {
      id,
      label: listed?.label ?? label,
      balanceMicro: listed?.balance_micro ?? DEFAULT_BALANCE_MICRO,
      capabilities: [...(listed?.capabilities ?? CAPABILITIES)],
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
