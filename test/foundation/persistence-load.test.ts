// A saved state is checked part by part before any of it is loaded: a wrong part stops the start.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, control, startTestEmulator } from '../helpers/emulator.js';
import { spawnEmulator } from '../helpers/child.js';
import { PANGRAM, speechApi } from '../speech/beyond.js';

/**
 * (Each case is a JSON snapshot of the earlier format, which a start migrates after these checks.)
 * A snapshot with the right syntax but the wrong types was loaded half (`accounts: "x"` started with one
 * account of many; `areas` of null started empty; garbage fault rules were dropped; `version: 99` was
 * accepted) and overwritten at the next write. Each case below edits one part of a real snapshot and
 * expects the start to stop with one message naming the file and the part and saying how to move the file
 * away, and the file to be left byte for byte as it was.
 */
const dir = mkdtempSync(join(tmpdir(), 'emulator-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = 'load-key';
let good: Record<string, any>;

beforeAll(async () => {
  const emu = await startTestEmulator({ dataDir: dir });
  try {
    await control(emu.speechUrl).putAccount(KEY, { project: 'saved' });
    await control(emu.speechUrl).addFault({ path: '/v1/voice_design', fault: { code: 1002 }, times: 3 });
    const api = speechApi(emu.speechUrl, KEY);
    await api.uploadAudio('voice_clone', await api.audio(PANGRAM));
    await call(`${emu.platformUrl}/v1/audio/assistant/start`, {
      headers: { 'x-api-key': KEY },
      json: { client_nonce: '8b9d7c1e-3f4a-4b5c-9d6e-7f8091a2b3c4' },
    });
    // The state in the JSON snapshot's shape: a data dir holding such a file is migrated on start,
    // through the same checks as the database's own rows.
    good = JSON.parse(JSON.stringify(emu.emulator.exportState()));
  } finally {
    await emu.close();
  }
}, 60_000);

/** Writes `snapshot` into its own data dir and answers the start's refusal (or null when it started). */
async function startWith(snapshot: unknown): Promise<{ message: string | null; file: string; before: string }> {
  const own = mkdtempSync(join(dir, 'case-'));
  // The stored files the snapshot names are there, as in the data dir it was taken from.
  cpSync(join(dir, 'blobs'), join(own, 'blobs'), { recursive: true });
  const file = join(own, 'state.json');
  const before = JSON.stringify(snapshot);
  writeFileSync(file, before);
  const message = await startTestEmulator({ dataDir: own }).then(
    async (emu) => {
      await emu.close();
      return null;
    },
    (err: Error) => err.message,
  );
  return { message, file, before };
}

function edited(edit: (s: Record<string, any>) => void): Record<string, any> {
  const copy = structuredClone(good);
  edit(copy);
  return copy;
}

const CASES: [string, () => Record<string, any>, RegExp][] = [
  ['accounts is a string', () => edited((s) => (s.accounts = 'x')), /part accounts: /],
  ['an account with a balance as text', () => edited((s) => (s.accounts[0].balanceMicro = '77')), /part accounts\[0\]\.balanceMicro: /],
  ['version 99', () => edited((s) => (s.version = 99)), /part version: must be 1, the only snapshot version this emulator reads/],
  ['no version', () => edited((s) => delete s.version), /part version: /],
  ['fault rules as garbage', () => edited((s) => (s.faults.rules = [{ id: 7, fault: 'x' }])), /part faults\.rules\[0\]\.id: /],
  ['a fault rule with an unknown field', () => edited((s) => (s.faults.rules[0].fault = { code: 1002, explode: true })), /part faults\.rules\[0\]\.fault: /],
  ['an id stream without its counter', () => edited((s) => (s.ids[Object.keys(s.ids)[0]!] = { counter: 'a' })), /part ids\..+\.counter: /],
  ['signatures as an object', () => edited((s) => (s.signatures = {})), /part signatures: /],
  ['areas as a list', () => edited((s) => (s.areas = [])), /part areas: /],
  ['every area null', () => edited((s) => Object.keys(s.areas).forEach((k) => (s.areas[k] = null))), /part areas\.[\w-]+: (must be|Invalid input: expected)/],
  [
    'a speech file record without its id',
    () => edited((s) => (s.areas['speech-files'] = [{ account_id: 'a' }])),
    /part areas\.speech-files: record \[0\]: file_id: /,
  ],
  [
    'speech file records as an object',
    () => edited((s) => (s.areas['speech-files'] = { a: 1 })),
    /part areas\.speech-files: must be a list of records, not object/,
  ],
  ['a speech file whose size is text', () => edited((s) => (s.areas['speech-files'][0].bytes = '12')), /part areas\.speech-files: record \[0\]: bytes: /],
  [
    'a speech voice of an unknown kind',
    () => edited((s) => (s.areas['speech-custom-voices'] = [{ voice_id: 'v', account_id: 'a', kind: 'x' }])),
    /part areas\.speech-custom-voices: record \[0\]: kind: /,
  ],
  [
    'an async task without its file',
    () => edited((s) => (s.areas['speech-async'] = [{ task_id: 1, account_id: 'a' }])),
    /part areas\.speech-async: record \[0\]: file_id: /,
  ],
  ['call sessions that are not a list', () => edited((s) => (s.areas.calls.sessions = 5)), /part areas\.calls/],
  ['podcasts as a number', () => edited((s) => (s.areas.podcasts = 3)), /part areas\.podcasts: /],
];

describe('a snapshot whose parts have the wrong types stops the start, and stays as it was', () => {
  it('the real snapshot loads (the cases below differ from it in one part each)', async () => {
    expect((await startWith(good)).message).toBeNull();
  });

  it.each(CASES)('%s', async (_name, make, part) => {
    const { message, file, before } = await startWith(make());
    expect(message).not.toBeNull();
    expect(message).toContain(`state snapshot ${file} cannot be read (`);
    expect(message).toMatch(part);
    expect(message).toContain(`move it away (mv ${file} ${file}.bad) to start empty`);
    expect(message).not.toMatch(/is not iterable|Cannot read properties|\n/);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('the CLI stops with one line naming the file and the part, exit code 1', async () => {
    const own = mkdtempSync(join(dir, 'cli-'));
    const file = join(own, 'state.json');
    writeFileSync(file, JSON.stringify(edited((s) => (s.accounts = 'x'))));
    const failed = await spawnEmulator(['--data-dir', own], 30_000).then(
      async (child) => {
        child.child.kill('SIGKILL');
        return null;
      },
      (err: Error) => err.message,
    );
    const lines = (failed ?? '').split('\n').filter((l) => l.startsWith('speech-emulator:'));
    expect(lines).toEqual([expect.stringMatching(/^speech-emulator: cannot start: state snapshot .+ cannot be read \(part accounts: .+\); move it away/)]);
    expect(failed).toContain('emulator exited (1)');
  }, 40_000);
});
