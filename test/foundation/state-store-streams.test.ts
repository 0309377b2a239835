// A streamed answer (T2A events, speech-to-text events, socket frames) never sends a byte that
// acknowledges a change before the change is committed to the data dir's database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { control, startTestEmulator } from '../helpers/emulator.js';
import { KEY, session, START } from '../speech/ws/ws-helpers.js';
import { connect, sendAll, silencePcm, wsUrl } from '../platform/conversation/conversation-helpers.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'emulator-streams-'));
  dirs.push(d);
  return d;
}

/** The balance of an account as committed in the database (read by a connection of its own). */
function committedBalance(dataDir: string, accountId: string): number | undefined {
  const db = new DatabaseSync(join(dataDir, 'state.db'), { readOnly: true });
  try {
    const row = db.prepare("SELECT data FROM parts WHERE part = 'accounts' AND key = ?").get(accountId) as { data: string } | undefined;
    return row ? (JSON.parse(row.data).balanceMicro as number) : undefined;
  } finally {
    db.close();
  }
}

const t2a = (url: string, stream: boolean) =>
  fetch(`${url}/v1/t2a_v2`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'speech-02-hd', text: 'Hello there, this is a stream.', stream, voice_setting: { voice_id: 'female-shaonv' } }),
  });

describe('streamed answers wait for the commit of what they acknowledge', () => {
  it('a T2A event stream sends its status line only once the charge is committed', async () => {
    const dataDir = freshDir();
    const emu = await startTestEmulator({ dataDir });
    try {
      const id = emu.emulator.accounts.peek(KEY)!.id;
      const res = await t2a(emu.speechUrl, true);
      // The headers are here: the charge they answer is in the database already.
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const charged = emu.emulator.accounts.byId(id)!.balanceMicro;
      expect(committedBalance(dataDir, id)).toBe(charged);
      await res.text();
    } finally {
      await emu.close();
    }
  });

  it('a T2A stream whose charge cannot be saved is the JSON internal error 1000, not an event stream', async () => {
    const emu = await startTestEmulator({ dataDir: freshDir() });
    try {
      emu.emulator.storageWrites.fail('ENOSPC');
      const res = await t2a(emu.speechUrl, true);
      expect(res.headers.get('content-type')).toContain('application/json');
      const body = (await res.json()) as { base_resp: { status_code: number; status_msg: string } };
      expect(body.base_resp.status_code).toBe(1000);
      expect(body.base_resp.status_msg).toMatch(/could not be saved: the disk of the data dir is full \(ENOSPC\)/);
    } finally {
      await emu.close();
    }
  });

  it('a speech socket sends the audio of a charged synthesis once the charge is committed', async () => {
    const dataDir = freshDir();
    const emu = await startTestEmulator({ dataDir });
    try {
      const id = emu.emulator.accounts.peek(KEY)!.id;
      const seen: { committed: number | undefined; charged: number }[] = [];
      const result = await session(emu.speechUrl, [START, { event: 'task_continue', text: 'Hello there.' }, { event: 'task_finish' }], {
        onMessage: (msg) => {
          if (msg.data?.audio && seen.length === 0)
            seen.push({ committed: committedBalance(dataDir, id), charged: emu.emulator.accounts.byId(id)!.balanceMicro });
        },
      });
      expect(result.messages.some((m) => m.event === 'task_finished')).toBe(true);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.committed).toBe(seen[0]!.charged);
    } finally {
      await emu.close();
    }
  });

  it('a speech socket whose charge cannot be saved sends no audio: the connection is cut', async () => {
    const dataDir = freshDir();
    const emu = await startTestEmulator({ dataDir });
    try {
      emu.emulator.storageWrites.fail('ENOSPC');
      const result = await session(emu.speechUrl, [START, { event: 'task_continue', text: 'Hello there.' }, { event: 'task_finish' }]);
      expect(result.messages.some((m) => m.data?.audio)).toBe(false);
      expect(result.messages.some((m) => m.event === 'task_finished')).toBe(false);
      expect(result.close.code).toBe(1006);
    } finally {
      await emu.close();
    }
  });
});

describe('an answer waits for the fsync of every change committed before it', () => {
  it('a change committed by the timer whose log fsync fails is not acknowledged by the next answer, and is written again', async () => {
    const dataDir = freshDir();
    const emu = await startTestEmulator({ dataDir });
    try {
      expect((await control(emu.speechUrl).putAccount('sync-key', { balance_micro: 1000 })).status).toBe(200);
      const id = emu.emulator.accounts.peek('sync-key')!.id;
      // The commit succeeds; the fsync of its log fails (an I/O error of the disk).
      emu.emulator.storageWrites.fail('EIO', 'state.db-wal');
      emu.emulator.accounts.byId(id)!.balanceMicro -= 7;
      emu.emulator.markDirty('accounts', null, id);
      const first = emu.emulator.persist();
      await new Promise((resolve) => setImmediate(resolve));
      // Committed, its fsync running: an answer with nothing marked of its own waits for that fsync.
      const second = emu.emulator.persist();
      await expect(first).rejects.toThrow(/could not be saved: the write failed \(EIO\)/);
      await expect(second).rejects.toThrow(/EIO/);
      // Over HTTP: no write is acknowledged while the log cannot be synced (a read answers from memory: docs/robustness.md).
      const refused = await control(emu.speechUrl).putAccount('other-key', { project: 'p' });
      expect(refused.status).toBe(500);
      expect((await control(emu.speechUrl).clock()).status).toBe(200);
      emu.emulator.storageWrites.fail(null);
      const answered = await control(emu.speechUrl).putAccount('other-key', { project: 'p' });
      expect(answered.status).toBe(200);
      expect(committedBalance(dataDir, id)).toBe(emu.emulator.accounts.byId(id)!.balanceMicro);
    } finally {
      await emu.close();
    }
  });
});

describe('a socket that closes after its last events sends them first', () => {
  it('recognition stream with a data dir: asr_final and done (which answer the charge) arrive before the close 1000', async () => {
    const emu = await startTestEmulator({ dataDir: freshDir() });
    try {
      const c = await connect(wsUrl(emu.platformUrl, '/v1/speech-to-text/stream', 'stt-durable'));
      sendAll(c.ws, [{ meta: { language: 'zh' } }, silencePcm(2000), { is_final: true }]);
      expect((await c.closed).code).toBe(1000);
      expect(c.events().map((e) => e.type)).toEqual(['asr_final', 'done']);
    } finally {
      await emu.close();
    }
  });
});
