import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Accounts, type Account } from './state/accounts.js';
import type { AccountRegistry } from './state/account-settings.js';
import type { StateArea } from './state/areas.js';
import { BlobStore } from './state/blobs.js';
import { Clock } from './state/clock.js';
import { Faults } from './faults/faults.js';
import type { LoadedFixtures } from './state/fixtures.js';
import { Ids } from './state/ids.js';
import { Journal } from './journal/journal.js';
import { RateWindows } from './state/limits.js';
import { Metrics } from './http/metrics.js';
import type { RegisteredRoute } from './http/lifecycle.js';
import { TapesSwitch, type ExchangeHook } from './http/exchange.js';
import { SignatureRecords, speechRecord } from './state/signatures.js';
import { Sockets } from './socket/open-sockets.js';
import { InFlight } from './http/in-flight.js';
import { SlotQueue } from './state/queue.js';
import { loadUrlSecret, URL_SECRET_FILE } from './state/url-secret.js';
import { dataDirProblem, makeDirs } from './state/data-dir.js';
import { DataDirLock } from './state/data-dir-lock.js';
import { savedSnapshot, SNAPSHOT } from './state/snapshots.js';
import type { SavedSnapshot } from './state/snapshot-schema.js';
import { DATABASE } from './state/store/database.js';
import { StateStore } from './state/store/state-store.js';
import { StorageWrites } from './state/storage.js';

// Areas are declared in core/state/areas.ts; importers of the emulator get the type here too.
export type { StateArea } from './state/areas.js';

export type ServiceName = 'speech' | 'platform';

/**
 * The settings of one instance that core reads. The entry (src/config.ts) reads every setting from flags and
 * environment and adds the rest of them to this interface (`declare module`), so a service reads its own
 * settings here too without core importing the entry.
 */
export interface EmulatorConfig {
  seed: string;
  dataDir?: string | undefined;
  publicUrl?: string | undefined;
  strictKeys: boolean;
  journalLimit: number;
}

export type { RegisteredRoute } from './http/lifecycle.js';

export interface ServiceUrls {
  speech: string;
  speechBackup: string;
  platform: string;
}

function countBy(keys: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const k of keys) out.set(k, (out.get(k) ?? 0) + 1);
  return out;
}

/** Everything one emulator instance owns. No module-level state: several instances can share a process. */
export class Emulator {
  readonly clock = new Clock();
  readonly ids: Ids;
  readonly accounts: Accounts;
  readonly faults: Faults;
  readonly journal: Journal;
  readonly blobs: BlobStore;
  readonly limits: RateWindows;
  readonly signatures = new SignatureRecords();
  /** The write path of the data dir (state database, stored files): a test fails it as a full or read-only disk would. */
  readonly storageWrites = new StorageWrites();
  readonly sockets = new Sockets();
  readonly inFlight = new InFlight();
  /** Syntheses running at once (HTTP T2A, platform TTS, speech sockets): `run`/`acquire` take a slot. */
  readonly synthesis = SlotQueue.forCores();
  readonly areas = new Map<string, StateArea>();
  /** Routes of both services as registered (method, URL pattern, WebSocket or not). */
  readonly routes: RegisteredRoute[] = [];
  /** Recording or replaying tapes (core/http/exchange.ts): loaded at start or by the control plane, unloaded by it. */
  readonly tapes = new TapesSwitch();
  /** The tapes' hook while tapes are in effect, else null: read by the lifecycle for each request. */
  get exchanges(): ExchangeHook | null {
    return this.tapes.hook;
  }
  /** Each service's OpenAPI generator (control/documents.ts), so any listener serves every document. */
  readonly documents = new Map<'speech' | 'platform', () => unknown>();
  readonly dataDir: string;
  readonly persistent: boolean;
  urls: ServiceUrls = { speech: '', speechBackup: '', platform: '' };
  /** Readiness for probes: ready only between the end of start-up and the start of close. */
  phase: 'starting' | 'ready' | 'closing' = 'starting';
  readonly metrics = new Metrics({
    sockets: () => countBy(this.sockets.list().map((s) => s.path)),
    streams: () =>
      countBy(
        this.journal
          .list()
          .filter((e) => e.streaming)
          .map((e) => e.service),
      ),
  });
  /** The state database of the data dir (core/state/store/): written through, change by change. */
  private readonly store: StateStore;
  private closed = false;
  private readonly shutdown = new AbortController();
  /** Aborted when the emulator begins to close: open streams end at their next event boundary. */
  readonly closing: AbortSignal = this.shutdown.signal;

  private constructor(
    readonly config: EmulatorConfig,
    readonly fixtures: LoadedFixtures,
    registry: AccountRegistry,
    readonly logger: Logger,
    dataDir: string,
    persistent: boolean,
    secret: Buffer,
    private readonly lock: DataDirLock | undefined,
  ) {
    this.dataDir = dataDir;
    this.persistent = persistent;
    this.ids = new Ids(config.seed);
    this.accounts = new Accounts({
      strict: config.strictKeys,
      fixture: fixtures.data['accounts.json'],
      freeCallSeconds: fixtures.data['billing.json'].free_call_seconds,
      registry,
    });
    this.faults = new Faults(
      () => this.ids.stream('faults'),
      // One row per rule: an add writes that rule (and the counter), not the whole list.
      (id) => (id === undefined ? this.markDirty('faults') : this.markDirty('faults', null, id)),
    );
    this.journal = new Journal(config.journalLimit);
    this.blobs = new BlobStore(join(dataDir, 'blobs'), secret, () => this.clock.now(), persistent, this.storageWrites);
    this.limits = new RateWindows(() => this.clock.now());
    this.store = new StateStore(this, dataDir, persistent);
  }

  /** `accounts`: the capabilities and settings the services registered (core/service.ts `Registry`). */
  static async create(config: EmulatorConfig, accounts: AccountRegistry, fixtures: LoadedFixtures, logger: Logger): Promise<Emulator> {
    const persistent = config.dataDir !== undefined;
    const dataDir = config.dataDir ?? mkdtempSync(join(tmpdir(), 'speech-emulator-'));
    makeDirs(dataDir);
    // A data dir that cannot take a durable write stops the start: nothing could be acknowledged there.
    const problem = persistent ? dataDirProblem(dataDir) : null;
    if (problem) throw new Error(`data dir ${dataDir} cannot hold the emulator's state: ${problem}`);
    // Before anything is read: the state of a data dir another emulator writes to is not this one's to read.
    const lock = persistent ? DataDirLock.acquire(dataDir) : undefined;
    try {
      const hadState = existsSync(join(dataDir, DATABASE)) || existsSync(join(dataDir, SNAPSHOT));
      const secret = await loadUrlSecret(dataDir, persistent, hadState);
      if (secret.replacedMissing)
        logger.warn(`${join(dataDir, URL_SECRET_FILE)} was missing: a new download-link secret is made, and links handed out before no longer verify`);
      return new Emulator(config, fixtures, accounts, logger, dataDir, persistent, secret.key, lock);
    } catch (err) {
      lock?.release();
      throw err;
    }
  }

  /** Registers a state area (core/state/areas.ts declares them); one registered late gets its saved part now. */
  registerArea(area: StateArea): void {
    this.areas.set(area.name, area);
    this.store.claim(area);
  }

  /** Base of links handed out by a service: EMULATOR_PUBLIC_URL, else the listener's own address. */
  publicBase(service: ServiceName): string {
    if (this.config.publicUrl) return this.config.publicUrl.replace(/\/+$/, '');
    return service === 'speech' ? this.urls.speech : this.urls.platform;
  }

  /** A full signed download URL for a blob. */
  downloadUrl(service: ServiceName, rel: string, expiresMs: number): string {
    return this.publicBase(service) + this.blobs.signedPath(rel, expiresMs);
  }

  /** Drops resources, sessions, faults, windows and journal (all, or one account's). */
  reset(id?: string): void {
    // Commit first, remove files after: a kill in between leaves files without a record (swept at
    // start), never a record whose file is gone.
    this.blobs.holdRemovals();
    try {
      this.resetState(id);
    } finally {
      const folders = this.blobs.releaseRemovals();
      if (this.store.commitNow()) for (const folder of folders) void this.blobs.removeTree(folder).catch(() => undefined);
    }
  }

  private resetState(id?: string): void {
    for (const area of this.areas.values()) area.reset(id);
    this.sockets.closeAll(1012, 'emulator reset', id);
    this.clock.cancelAll(id);
    this.faults.clear(id);
    this.limits.reset(id === undefined ? undefined : `${id}:`);
    this.journal.clear(id);
    if (id === undefined) {
      this.store.forgetUnclaimed();
      this.signatures.clear(); // content-addressed, shared by all accounts: only a full reset drops them
      this.accounts.reset();
      this.ids.reset();
      this.clock.resetToReal();
    } else {
      this.accounts.reset(id);
      this.ids.reset(id);
    }
    // A full reset rewrites everything; one account's reset, the records of that account in each part.
    if (id === undefined) this.markDirty();
    else {
      for (const area of this.areas.values()) this.markDirty(area.name, id);
      this.markDirty('accounts', id, id);
      this.markDirty('faults');
    }
  }

  /** Key of a rate window of one account: reset by account uses this prefix. */
  windowKey(account: Account, name: string): string {
    return `${account.id}:${name}`;
  }

  /**
   * Records that the state changed, as precisely as the caller knows: a part (an area's name,
   * `accounts`, `faults`), one account's records of it, or one record by id; nothing names everything.
   * With a data dir the rows named are committed before the next answer (core/state/store/); in memory it
   * costs nothing.
   */
  markDirty(part?: string, account?: string | null, id?: string | number): void {
    this.store.markDirty(part, account, id);
  }

  /**
   * Records what a synthesis said (core/state/signatures.ts `speechRecord`), at the emulator clock's now,
   * and marks it to be saved with the answer: one call for what a speaking operation keeps of its audio.
   */
  recordSpeech(input: Omit<Parameters<typeof speechRecord>[0], 'atMs'>): void {
    const record = speechRecord({ ...input, atMs: this.clock.now() });
    this.signatures.put(record);
    this.markDirty('signatures', null, record.id);
  }

  /** Why the data dir refuses writes now (the last commit failed), or null (readiness says it). */
  get storageFailing(): string | null {
    return this.store.failing;
  }

  /** Resolves once every change made so far is on disk; at once in memory. */
  persist(): Promise<void> {
    return this.store.persist();
  }

  /** The commit a frame of a stream must wait for (changes are marked and not on disk yet), or null. */
  pendingCommit(): Promise<void> | null {
    return this.store.pending();
  }

  /** Opens the data dir's state (migrating a JSON snapshot) and loads it, after every area present at start has registered. */
  loadSnapshot(): Promise<void> {
    return this.store.load();
  }

  /** Stored files no record named, removed by the start (core/state/store/orphans.ts). */
  get sweptFiles(): number {
    return this.store.sweptFiles;
  }

  /** How much the state holds: accounts, records of every area, queued fault rules (a start's banner compares them). */
  stateCounts(): { accounts: number; resources: number; faultRules: number } {
    let resources = 0;
    for (const area of this.areas.values()) if (area.records && area.save) resources += area.records.split(area.save()).length;
    return { accounts: this.accounts.all().length, resources, faultRules: this.faults.list().length };
  }

  /** The whole state in the shape of the JSON snapshot earlier versions kept (tests, and migration checks). */
  exportState(): SavedSnapshot {
    return savedSnapshot(this, new Map());
  }

  /** Tells open streams to end at their next event boundary (close() does it too). */
  beginClose(): void {
    if (!this.shutdown.signal.aborted) this.shutdown.abort(new Error('emulator shutting down'));
  }

  /** `save: false` when the start failed: a snapshot that could not be read must not be overwritten. */
  async close(opts: { save?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.beginClose();
    this.store.stop();
    this.sockets.closeAll(1001, 'emulator shutting down');
    // A last save that fails is logged (saveNow does): nobody waits for it any more.
    if (opts.save !== false) await this.store.saveNow().catch(() => undefined);
    try {
      await this.store.close();
    } finally {
      // Released last, and whatever happened: the next emulator on this data dir may start now.
      this.lock?.release();
    }
    this.closed = true;
    this.clock.stop();
    if (!this.persistent) rmSync(this.dataDir, { recursive: true, force: true });
  }
}
