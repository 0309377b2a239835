import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { Accounts, type Account } from './accounts.js';
import { BlobStore } from './blobs.js';
import { Clock } from './clock.js';
import { Faults, type SavedFaults } from './faults.js';
import type { LoadedFixtures } from './fixtures.js';
import { Ids, type SavedIds } from './ids.js';
import { Journal } from './journal.js';
import { RateWindows } from './limits.js';
import { Metrics } from './metrics.js';
import { SignatureRecords } from './signatures.js';
import { Sockets } from './sockets.js';
import { SlotQueue } from './queue.js';
import { loadUrlSecret, URL_SECRET_FILE } from './url-secret.js';
import { makeDirs } from './data-dir.js';

/**
 * A part of the state owned by one service area (custom voices, uploads, sessions…). Areas register
 * with the emulator so reset, the state view and persistence reach them without knowing them.
 */
export interface StateArea {
  name: string;
  /** Drop resources: all of them, or one account's. */
  reset(accountId?: string): void;
  /** Resources of one account for `GET /_emulator/state`. */
  view?(accountId: string): unknown;
  /** The same for many accounts at once, in one pass over the area (see `recordViews`). */
  viewAll?(accountIds: string[]): Map<string, unknown>;
  /** Plain serializable data for the snapshot in the data dir. */
  save?(): unknown;
  /** Restore from a snapshot; rebuild pending deadlines from their timestamps. */
  load?(data: unknown): void;
}

export type ServiceName = 'speech' | 'platform';

export interface RegisteredRoute {
  service: ServiceName;
  method: string;
  url: string;
  websocket: boolean;
}

export interface ServiceUrls {
  speech: string;
  speechBackup: string;
  platform: string;
}

const SNAPSHOT = 'state.json';

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
  readonly sockets = new Sockets();
  /** Syntheses running at once (HTTP T2A, platform TTS, speech sockets): `run`/`acquire` take a slot. */
  readonly synthesis = SlotQueue.forCores();
  readonly areas = new Map<string, StateArea>();
  /** Routes of both services as registered (method, URL pattern, WebSocket or not). */
  readonly routes: RegisteredRoute[] = [];
  /** Each service's OpenAPI generator (control/documents.ts), so any listener serves every document. */
  readonly documents = new Map<'speech' | 'platform', () => unknown>();
  /** Saved parts of areas not registered yet (they register on first use). */
  private unclaimed = new Map<string, unknown>();
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
          .filter((e) => e.status === null && (e.response.summary as { stream?: unknown } | undefined)?.stream)
          .map((e) => e.service),
      ),
  });
  private dirtyTimer: NodeJS.Timeout | null = null;
  private saving: Promise<void> = Promise.resolve();
  /** A snapshot waiting for the one being written: later callers share it (one write serves them all). */
  private queued: Promise<void> | null = null;
  /** Changes made so far, and how many of them the snapshot on disk holds. */
  private changes = 0;
  private durable = 0;
  private closed = false;
  private readonly shutdown = new AbortController();
  /** Aborted when the emulator begins to close: open streams end at their next event boundary. */
  readonly closing: AbortSignal = this.shutdown.signal;

  private constructor(
    readonly config: Config,
    readonly fixtures: LoadedFixtures,
    readonly logger: Logger,
    dataDir: string,
    persistent: boolean,
    secret: Buffer,
  ) {
    this.dataDir = dataDir;
    this.persistent = persistent;
    this.ids = new Ids(config.seed);
    this.accounts = new Accounts({
      strict: config.strictKeys,
      fixture: fixtures.data['accounts.json'],
      freeCallSeconds: fixtures.data['billing.json'].free_call_seconds,
    });
    this.faults = new Faults(
      () => this.ids.stream('faults'),
      () => this.markDirty(),
    );
    this.journal = new Journal(config.journalLimit);
    this.blobs = new BlobStore(join(dataDir, 'blobs'), secret, () => this.clock.now(), persistent);
    this.limits = new RateWindows(() => this.clock.now());
  }

  static async create(config: Config, fixtures: LoadedFixtures, logger: Logger): Promise<Emulator> {
    const persistent = config.dataDir !== undefined;
    const dataDir = config.dataDir ?? mkdtempSync(join(tmpdir(), 'speech-emulator-'));
    makeDirs(dataDir);
    const secret = await loadUrlSecret(dataDir, persistent, existsSync(join(dataDir, SNAPSHOT)));
    if (secret.replacedMissing)
      logger.warn(`${join(dataDir, URL_SECRET_FILE)} was missing: a new download-link secret is made, and links handed out before no longer verify`);
    return new Emulator(config, fixtures, logger, dataDir, persistent, secret.key);
  }

  /**
   * The state area of this name, created and registered on its first use (one per emulator instance),
   * typed as its owner made it: `emu.areaOf('podcasts', () => createPodcastArea(emu))`.
   */
  areaOf<A extends StateArea>(name: string, create: () => A): A {
    const existing = this.areas.get(name);
    if (existing) return existing as A;
    const area = create();
    this.registerArea(area);
    return area;
  }

  registerArea(area: StateArea): void {
    this.areas.set(area.name, area);
    // Areas may register on first use, after the snapshot was read: hand them their saved part then.
    if (this.unclaimed.has(area.name)) {
      area.load?.(this.unclaimed.get(area.name));
      this.unclaimed.delete(area.name);
    }
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
    for (const area of this.areas.values()) area.reset(id);
    this.sockets.closeAll(1012, 'emulator reset', id);
    this.clock.cancelAll(id);
    this.faults.clear(id);
    this.limits.reset(id === undefined ? undefined : `${id}:`);
    this.journal.clear(id);
    if (id === undefined) {
      this.unclaimed.clear();
      this.signatures.clear(); // content-addressed, shared by all accounts: only a full reset drops them
      this.accounts.reset();
      this.ids.reset();
      this.clock.resetToReal();
    } else {
      this.accounts.reset(id);
      this.ids.reset(id);
    }
    this.markDirty();
  }

  /** Key of a rate window of one account: reset by account uses this prefix. */
  windowKey(account: Account, name: string): string {
    return `${account.id}:${name}`;
  }

  /**
   * Records that the state changed. Persistent mode: the next answer waits for a snapshot that holds
   * the change (see `persist`), and a snapshot follows soon anyway for changes made outside a request
   * (timers).
   */
  markDirty(): void {
    this.changes += 1;
    if (!this.persistent || this.closed || this.dirtyTimer) return;
    this.dirtyTimer = setTimeout(() => {
      this.dirtyTimer = null;
      void this.saveNow();
    }, 100);
    this.dirtyTimer.unref();
  }

  /**
   * Resolves once every change made so far is on disk (fsynced): every answer waits for it, so what a
   * client saw acknowledged survives `kill -9`. In memory, or with nothing changed, it resolves at once.
   */
  persist(): Promise<void> {
    if (!this.persistent || this.closed || this.durable >= this.changes) return Promise.resolve();
    return this.saveNow();
  }

  /**
   * Writes the snapshot to a temporary file, fsyncs it and renames it: a crash never leaves half a
   * snapshot. Callers that arrive while one is being written share the next one.
   */
  saveNow(): Promise<void> {
    if (!this.persistent) return Promise.resolve();
    if (this.queued) return this.queued;
    const next = this.saving
      .then(() => {
        this.queued = null;
        return this.writeSnapshot();
      })
      .catch((err) => this.logger.error({ err }, 'saving state failed'));
    this.queued = next;
    this.saving = next;
    return next;
  }

  private async writeSnapshot(): Promise<void> {
    const covered = this.changes;
    const areas: Record<string, unknown> = {};
    for (const [name, data] of this.unclaimed) areas[name] = data;
    for (const a of this.areas.values()) if (a.save) areas[a.name] = a.save();
    const snapshot = {
      version: 1,
      saved_at_ms: this.clock.now(),
      accounts: this.accounts.save(),
      signatures: this.signatures.save(),
      faults: this.faults.save(),
      ids: this.ids.save(),
      areas,
    };
    const tmp = join(this.dataDir, `${SNAPSHOT}.tmp`);
    const file = await open(tmp, 'w');
    try {
      await file.writeFile(JSON.stringify(snapshot));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, join(this.dataDir, SNAPSHOT));
    await syncDir(this.dataDir);
    this.durable = Math.max(this.durable, covered);
  }

  /** Loads the snapshot of a data dir, after every area has registered. */
  async loadSnapshot(): Promise<void> {
    const file = join(this.dataDir, SNAPSHOT);
    if (!this.persistent || !existsSync(file)) return;
    let snapshot: { saved_at_ms?: number; accounts?: Account[]; signatures?: never[]; faults?: SavedFaults; ids?: SavedIds; areas?: Record<string, unknown> };
    try {
      snapshot = JSON.parse(await readFile(file, 'utf8'));
      if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot)) throw new Error('not a JSON object');
    } catch (err) {
      throw new Error(`state snapshot ${file} cannot be read (${(err as Error).message}); move it away to start empty`);
    }
    // The clock never runs backwards across a restart: a state saved after the clock was moved ahead
    // goes on from the time it was saved at (flowing), so its deadlines keep their meaning.
    if (typeof snapshot.saved_at_ms === 'number' && snapshot.saved_at_ms > this.clock.now()) this.clock.set(snapshot.saved_at_ms);
    if (snapshot.accounts) this.accounts.load(snapshot.accounts);
    if (snapshot.signatures) this.signatures.load(snapshot.signatures);
    if (snapshot.faults) this.faults.load(snapshot.faults);
    // Id streams go on where they stopped: an id handed out before a restart is never handed out again.
    if (snapshot.ids) this.ids.load(snapshot.ids);
    for (const [name, data] of Object.entries(snapshot.areas ?? {})) {
      const area = this.areas.get(name);
      if (area) area.load?.(data);
      else this.unclaimed.set(name, data);
    }
  }

  /** Tells open streams to end at their next event boundary (close() does it too). */
  beginClose(): void {
    if (!this.shutdown.signal.aborted) this.shutdown.abort(new Error('emulator shutting down'));
  }

  /** `save: false` when the start failed: a snapshot that could not be read must not be overwritten. */
  async close(opts: { save?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.beginClose();
    if (this.dirtyTimer) clearTimeout(this.dirtyTimer);
    this.dirtyTimer = null;
    this.sockets.closeAll(1001, 'emulator shutting down');
    if (opts.save !== false) await this.saveNow();
    this.closed = true;
    this.clock.stop();
    if (!this.persistent) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** A rename is durable once its folder is synced too. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
