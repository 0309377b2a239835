// The state of a data dir is a SQLite database written change by change: what each write changed is
// there after a restart, an earlier JSON snapshot is migrated, and a database that cannot be read stops
// the start, naming the file, and stays as it was.
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listRecords } from '../../src/core/state/areas.js';
import { call, control, startTestEmulator } from '../helpers/emulator.js';

type RunningEmulator = Awaited<ReturnType<typeof startTestEmulator>>;
import { toneWav } from '../helpers/transcode.js';
import { upload } from '../platform/tts-helpers.js';
import { PANGRAM, speechApi } from '../speech/beyond.js';

const root = mkdtempSync(join(tmpdir(), 'emulator-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const KEY = 'store-key';
const h = { 'x-api-key': KEY };
let n = 0;
const fresh = () => mkdtempSync(join(root, `d${n++}-`));

/** One write of every kind the services make, answered successfully. */
async function writeEverything(emu: RunningEmulator): Promise<void> {
  const p = emu.platformUrl;
  expect((await control(emu.speechUrl).putAccount('store-other', { project: 'kept', balance_micro: 123 })).status).toBe(200);
  expect((await control(emu.speechUrl).addFault({ path: '/v1/voice_design', fault: { code: 1002 }, times: 2 })).status).toBeLessThan(300);
  const ref = await upload(p, KEY, toneWav(1), { name: 'ref.wav' });
  expect(ref.body.succeed).toBe(true);
  const voice = await call(`${p}/v1/voice/save`, {
    headers: h,
    json: { voice_id: 'store_voice', ref_audio: ref.body.data.object_key, ref_text: 'hello there' },
  });
  expect(voice.body.succeed).toBe(true);
  const session = await call(`${p}/api/v1/audio/sessions`, { headers: h, json: { voice_id: 'default' } });
  expect(session.body.succeed).toBe(true);
  expect((await call(`${p}/api/v1/audio/sessions/${session.body.data.session_id}`, { method: 'DELETE', headers: h })).status).toBe(200);
  expect((await call(`${p}/api/v1/audio/sessions`, { headers: h, json: { voice_id: 'default' } })).body.succeed).toBe(true);
  const started = await call(`${p}/v1/audio/assistant/start`, { headers: h, json: { client_nonce: '8b9d7c1e-3f4a-4b5c-9d6e-7f8091a2b3c4' } });
  expect(started.body.succeed).toBe(true);
  const agent = await call(`${p}/api/v1/agents/openapi/sessions/create`, { headers: { ...h, 'idempotency-key': 'store-1' }, json: { agentId: 'agent_demo' } });
  expect(agent.body.succeed).toBe(true);
  const api = speechApi(emu.speechUrl, KEY);
  const fileId = await api.uploadAudio('voice_clone', await api.audio(PANGRAM.repeat(4)));
  expect((await api.post('/v1/voice_clone', { file_id: fileId, voice_id: 'StoreClone1' })).body.base_resp.status_code).toBe(0);
  expect((await api.speak('StoreClone1')).body.base_resp.status_code).toBe(0);
  const design = await api.post('/v1/voice_design', { prompt: 'A calm narrator.', preview_text: 'Hello there.' });
  expect(design.body.base_resp.status_code).toBe(1002); // the fault rule above, used once
  const pod = await call(`${p}/v1/audio/podcast`, { headers: h, json: { dialogueText: 'Hello and welcome.\nThanks for having me.' } });
  expect(pod.body.succeed).toBe(true);
}

/** The state as the JSON snapshot held it, in an order that does not depend on how rows were read back. */
function comparable(state: unknown): unknown {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, sort(x)]));
    return v;
  };
  const { saved_at_ms: _, ...rest } = JSON.parse(JSON.stringify(state)) as Record<string, unknown>;
  return sort(rest);
}

describe('the state database', () => {
  let dir: string;
  let before: unknown;

  beforeAll(async () => {
    dir = fresh();
    const emu = await startTestEmulator({ dataDir: dir });
    try {
      await writeEverything(emu);
      before = emu.emulator.exportState();
    } finally {
      await emu.close();
    }
  }, 60_000);

  it('holds every write as it was answered: a restart shows the same state, part by part', async () => {
    expect(existsSync(join(dir, 'state.db'))).toBe(true);
    const emu = await startTestEmulator({ dataDir: dir });
    try {
      expect(comparable(emu.emulator.exportState())).toEqual(comparable(before));
    } finally {
      await emu.close();
    }
  });

  it('a reset of one account, then of everything, is in the database as answered', async () => {
    const own = fresh();
    let emu = await startTestEmulator({ dataDir: own });
    try {
      await writeEverything(emu);
      expect((await control(emu.speechUrl).reset(KEY)).status).toBe(200);
      const afterOne = emu.emulator.exportState();
      // The other account's settings stay.
      expect(JSON.stringify(afterOne)).toContain('"project":"kept"');
      await emu.close();
      emu = await startTestEmulator({ dataDir: own });
      expect(comparable(emu.emulator.exportState())).toEqual(comparable(afterOne));
      expect((await control(emu.speechUrl).reset()).status).toBe(200);
      const afterAll = emu.emulator.exportState();
      await emu.close();
      emu = await startTestEmulator({ dataDir: own });
      expect(comparable(emu.emulator.exportState())).toEqual(comparable(afterAll));
      const db = new DatabaseSync(join(own, 'state.db'), { readOnly: true });
      const left = db.prepare("SELECT count(*) AS n FROM records WHERE id != ''").get() as { n: number };
      db.close();
      // No record is left; only a small area's whole part (its row of id '') may be, emptied.
      expect(left.n).toBe(0);
    } finally {
      await emu.close();
    }
  }, 60_000);

  it('keeps one row per record, readable with sqlite3 (docs/state-store.md)', () => {
    const db = new DatabaseSync(join(dir, 'state.db'), { readOnly: true });
    try {
      const areas = db.prepare('SELECT area, count(*) AS n FROM records GROUP BY area').all() as { area: string; n: number }[];
      const byArea = Object.fromEntries(areas.map((a) => [a.area, a.n]));
      // One deleted and one kept REST session: only the kept one has a row.
      expect(byArea.conversation_sessions).toBe(1);
      expect(byArea['speech-files']).toBeGreaterThanOrEqual(1);
      const account = db.prepare('SELECT data FROM parts WHERE part = \'accounts\' AND data LIKE \'%"project":"kept"%\'').get() as { data: string };
      expect(JSON.parse(account.data).balanceMicro).toBe(123);
      expect((db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal');
    } finally {
      db.close();
    }
  });

  it('migrates a data dir holding the JSON snapshot of earlier versions, keeping the file as state.json.migrated', async () => {
    const own = fresh();
    cpSync(join(dir, 'blobs'), join(own, 'blobs'), { recursive: true });
    copyFileSync(join(dir, 'url-secret'), join(own, 'url-secret'));
    const json = JSON.stringify(before);
    writeFileSync(join(own, 'state.json'), json);
    let emu = await startTestEmulator({ dataDir: own });
    try {
      expect(comparable(emu.emulator.exportState())).toEqual(comparable(before));
      expect(existsSync(join(own, 'state.json'))).toBe(false);
      expect(readFileSync(join(own, 'state.json.migrated'), 'utf8')).toBe(json);
      expect((await control(emu.speechUrl).account('store-other')).body).toMatchObject({ project: 'kept', balance_micro: 123 });
    } finally {
      await emu.close();
    }
    // The second start reads the database; the backup stays as it was.
    emu = await startTestEmulator({ dataDir: own });
    try {
      expect(comparable(emu.emulator.exportState())).toEqual(comparable(before));
      expect(readFileSync(join(own, 'state.json.migrated'), 'utf8')).toBe(json);
    } finally {
      await emu.close();
    }
  });

  it('a migration stopped after its commit (state.db and state.json both there) reads the database and keeps the file as the backup', async () => {
    const own = fresh();
    cpSync(dir, own, { recursive: true });
    writeFileSync(join(own, 'state.json'), '{"version": 1, "accounts": []}');
    const emu = await startTestEmulator({ dataDir: own });
    try {
      expect(comparable(emu.emulator.exportState())).toEqual(comparable(before));
      expect(existsSync(join(own, 'state.json'))).toBe(false);
      expect(readFileSync(join(own, 'state.json.migrated'), 'utf8')).toBe('{"version": 1, "accounts": []}');
    } finally {
      await emu.close();
    }
  });

  it('an area registered after the start gets its migrated part, and is then kept record by record', async () => {
    const own = fresh();
    cpSync(join(dir, 'blobs'), join(own, 'blobs'), { recursive: true });
    copyFileSync(join(dir, 'url-secret'), join(own, 'url-secret'));
    const records = [
      { id: 'r1', account: 'acct-1', n: 1 },
      { id: 'r2', account: 'acct-2', n: 2 },
    ];
    writeFileSync(join(own, 'state.json'), JSON.stringify({ ...(before as object), areas: { ...(before as { areas: object }).areas, late_probe: records } }));
    const emu = await startTestEmulator({ dataDir: own });
    try {
      type R = (typeof records)[number];
      let loaded: unknown = null;
      const byId = new Map<string, R>();
      emu.emulator.registerArea({
        name: 'late_probe',
        reset: () => byId.clear(),
        save: () => [...byId.values()],
        load: (data) => {
          loaded = data;
          for (const r of data as R[]) byId.set(r.id, r);
        },
        records: listRecords<R>(
          (r) => r.id,
          (r) => r.account,
          { one: (id) => byId.get(id) },
        ),
      });
      expect(loaded).toEqual(records);
      byId.get('r2')!.n = 3;
      emu.emulator.markDirty('late_probe', 'acct-2', 'r2');
      await emu.emulator.persist();
    } finally {
      await emu.close();
    }
    const db = new DatabaseSync(join(own, 'state.db'), { readOnly: true });
    const rows = db.prepare("SELECT id, account, data FROM records WHERE area = 'late_probe' ORDER BY id").all() as {
      id: string;
      account: string;
      data: string;
    }[];
    db.close();
    expect(rows.map((r) => [r.id, r.account, JSON.parse(r.data).n])).toEqual([
      ['r1', 'acct-1', 1],
      ['r2', 'acct-2', 3],
    ]);
  });

  /** A copy of the data dir with its database changed by `spoil`; answers the start's refusal and the bytes before and after. */
  async function spoiled(spoil: (file: string) => void): Promise<{ message: string | null; file: string; before: Buffer; after: Buffer }> {
    const own = fresh();
    cpSync(dir, own, { recursive: true });
    const file = join(own, 'state.db');
    spoil(file);
    const bytes = readFileSync(file);
    const message = await startTestEmulator({ dataDir: own }).then(
      async (emu) => {
        await emu.close();
        return null;
      },
      (err: Error) => err.message,
    );
    return { message, file, before: bytes, after: readFileSync(file) };
  }

  const CASES: [string, (file: string) => void, RegExp][] = [
    [
      'garbage bytes over its pages',
      (file) => {
        const bytes = readFileSync(file);
        for (let at = 4096; at < bytes.length; at += 97) bytes[at] = (bytes[at]! + 101) & 0xff;
        writeFileSync(file, bytes);
      },
      /malformed|integrity check|not a database/,
    ],
    ['truncated to half', (file) => truncateSync(file, Math.floor(readFileSync(file).length / 2 / 4096) * 4096 || 4096), /malformed|integrity check/],
    ['not a database', (file) => writeFileSync(file, 'this is a text file, not a database\n'.repeat(200)), /file is not a database/],
    ['empty', (file) => writeFileSync(file, ''), /the file is empty|holds no emulator state/],
    [
      'a schema from a newer version',
      (file) => {
        const db = new DatabaseSync(file);
        db.exec('PRAGMA user_version = 99');
        db.close();
      },
      /schema version 99 was written by a newer emulator; this one reads version 1/,
    ],
    [
      'a session row whose turns are not a list',
      (file) => {
        const db = new DatabaseSync(file);
        db.exec(`UPDATE records SET data = json_set(data, '$.turns', 'none') WHERE area = 'conversation_sessions'`);
        db.close();
      },
      /part areas\.conversation_sessions: \[0\]\.turns: /,
    ],
  ];

  it.each(CASES)('a database %s stops the start with one line naming it, and stays as it was', async (_name, spoil, problem) => {
    const { message, file, before, after } = await spoiled(spoil);
    expect(message).not.toBeNull();
    expect(message).toContain(`state database ${file} cannot be read (`);
    expect(message).toMatch(problem);
    expect(message).toContain(`move it away (mv ${file} ${file}.bad`);
    expect(message).not.toContain('\n');
    expect(after.equals(before)).toBe(true);
  });

  const STORED_FILES: [string, (data: any) => string][] = [
    ['speech-files', (data) => data.blob],
    ['platform-voices', (data) => data.refBlob],
    ['podcasts', (data) => data[0].objectKey],
  ];

  it.each(STORED_FILES)('a stored file named by a record of %s but missing does not stop the start', async (area, fileOf) => {
    const own = fresh();
    cpSync(dir, own, { recursive: true });
    const db = new DatabaseSync(join(own, 'state.db'), { readOnly: true });
    const row = db.prepare('SELECT id, data FROM records WHERE area = ? LIMIT 1').get(area) as { id: string; data: string };
    db.close();
    const blob = join(own, 'blobs', fileOf(JSON.parse(row.data)));
    unlinkSync(blob);
    const message = await startTestEmulator({ dataDir: own }).then(
      async (emu) => {
        await emu.close();
        return null;
      },
      (err: Error) => err.message,
    );
    // The start names the record in its log (test/foundation/reset-crash.test.ts reads it); an operation on it answers that its content is missing.
    expect(message).toBeNull();
  });
});
