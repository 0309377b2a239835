/**
 * The data dirs of bench/persistence.ts: the seed it starts from, written directly (seeding 100k records
 * over HTTP would rewrite the whole snapshot 100k times), and what a build made of it.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Keys the records are spread over, and the role (voice) of every session. */
export const KEYS = 200;
export const ROLE = 'default';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
export const keyOf = (i: number) => `bench-persist-${String(i).padStart(3, '0')}`;

/**
 * A snapshot (format version 1) of `records` REST conversation sessions spread over KEYS accounts. The
 * account record is the one a key gets on first use (src/core/accounts.ts: id and label from the key's
 * hash, every capability, the default balance), the session the one POST /api/v1/audio/sessions makes.
 */
export function seedSnapshot(records: number): string {
  const capabilities = ['tts', 'cloning', 'upload', 'podcast', 'calls', 'recognition', 'detection', 'diarization', 'agents'];
  const accounts = Array.from({ length: KEYS }, (_, i) => {
    const key = keyOf(i);
    return {
      id: sha256(key).slice(0, 16),
      label: `${key.slice(0, 4)}…${sha256(key).slice(0, 6)}`,
      balanceMicro: 1_000_000_000_000_000,
      capabilities,
      project: 'default',
      disabled: false,
      limits: {},
      realNameVerified: true,
      freeCallSeconds: 0,
      listed: false,
    };
  });
  const t0 = Date.UTC(2026, 0, 1);
  const sessions = Array.from({ length: records }, (_, i) => ({
    sessionId: `sess_${sha256(`bench-session-${i}`).slice(0, 24)}`,
    accountId: accounts[i % KEYS]!.id,
    voiceId: ROLE,
    createdAtMs: t0 + i,
    turns: [],
  }));
  return JSON.stringify({ version: 1, saved_at_ms: t0 + records, accounts, areas: { conversation_sessions: sessions } });
}

/** `sqlite` when the data dir holds an SQLite database after a start, else `json` (the snapshot). */
export function storeKind(dir: string): 'sqlite' | 'json' {
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    if (!statSync(file).isFile() || statSync(file).size < 16) continue;
    const head = Buffer.alloc(16);
    const fd = openSync(file, 'r');
    readSync(fd, head, 0, 16, 0);
    closeSync(fd);
    if (head.toString('latin1') === 'SQLite format 3\0') return 'sqlite';
  }
  return 'json';
}

/** Bytes of the files in a data dir (not its folders). */
export const dirBytes = (dir: string) => readdirSync(dir).reduce((sum, n) => sum + (statSync(join(dir, n)).isFile() ? statSync(join(dir, n)).size : 0), 0);
