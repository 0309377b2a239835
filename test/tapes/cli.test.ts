import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as cli, spawnEmulator } from '../helpers/child.js';
import { t2a } from '../speech/helpers.js';
import { REAL_KEY, startRecorder, startReplayer, startUpstream, tapeDir, UPSTREAM_VOICE } from './helpers.js';

const speak = (text: string) => ({ model: 'speech-02-turbo', text, voice_setting: { voice_id: UPSTREAM_VOICE } });

describe('speech-emulator tapes list | show | prune', () => {
  const dir = tapeDir();
  const ids: string[] = [];
  beforeAll(async () => {
    const upstream = await startUpstream();
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      for (const text of ['Used by the suite.', 'Recorded once, never used again.']) await t2a(recorder.speechUrl, speak(text), { key: REAL_KEY });
    } finally {
      await recorder.close();
      await upstream.close();
    }
    ids.push(
      ...readdirSync(dir)
        .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
        .map((f) => f.slice(0, -5)),
    );
    // A replaying run that uses one of the two: it leaves its list of used tapes when it closes.
    const replayer = await startReplayer(dir);
    await t2a(replayer.speechUrl, speak('Used by the suite.'), { key: 'ci' });
    await replayer.close();
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('list names each tape with its operation and status, and which the last replay left unused', async () => {
    const r = await cli(['tapes', 'list', dir]);
    expect(r.status).toBe(0);
    expect(r.out).toContain(`2 tapes in ${dir}`);
    for (const id of ids) expect(r.out).toMatch(new RegExp(`${id}\\s+200\\s+json\\s+speech POST /v1/t2a_v2`));
    expect(r.out.split('\n').filter((l) => l.includes('(unused by the last replay)'))).toHaveLength(1);
    const json = JSON.parse((await cli(['tapes', 'list', dir, '--json'])).out);
    expect(json.tapes.map((t: any) => t.used).sort()).toEqual([false, true]);
  });

  it('show prints a tape as written and the files it references', async () => {
    const r = await cli(['tapes', 'show', dir, ids[0]!]);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.out.slice(0, r.out.indexOf('\n\nfiles:'))).id).toBe(ids[0]);
    expect(r.out).toMatch(/files:\n {2}files\/[0-9a-f]{64}\.mp3 {2}\d+ bytes/);
    const byPath = await cli(['tapes', 'show', join(dir, `${ids[0]}.json`)]);
    expect(byPath.out).toBe(r.out);
    const missing = await cli(['tapes', 'show', dir, 'speech-nothing-1']);
    expect(missing.status).toBe(1);
    expect(missing.err).toContain(`no tape speech-nothing-1 in ${dir}`);
  });

  it('prune drops the tape the last replay did not use, and its files; a run without --replay has nothing to say', async () => {
    const dry = await cli(['tapes', 'prune', dir, '--dry-run']);
    expect(dry.out).toContain('1 of 2 tapes unused');
    const filesBefore = readdirSync(join(dir, 'files')).length;
    const r = await cli(['tapes', 'prune', dir]);
    expect(r.status).toBe(0);
    expect(r.out).toMatch(/1 tapes dropped, [1-9]\d* files no tape references removed; 1 tapes kept/);
    expect(readdirSync(dir).filter((f) => f.endsWith('.json') && !f.startsWith('.'))).toHaveLength(1);
    expect(readdirSync(join(dir, 'files')).length).toBeLessThan(filesBefore);
    const fresh = tapeDir();
    const none = await cli(['tapes', 'prune', fresh]);
    expect(none.status).toBe(1);
    expect(none.err).toContain('no replaying run has left its list of used tapes');
    rmSync(fresh, { recursive: true, force: true });
  });

  it('bad use is named: no folder, an unknown command, a damaged folder', async () => {
    expect(await cli(['tapes', 'list'])).toMatchObject({ status: 2, err: expect.stringContaining('tapes list: a tape folder is needed') });
    expect(await cli(['tapes', 'rewind', dir])).toMatchObject({ status: 2, err: expect.stringContaining('unknown command rewind') });
    expect((await cli(['tapes', 'list', join(dir, 'nope')])).err).toContain('the tape folder cannot be read (ENOENT)');
  });

  it('the emulator starts replaying from the command line, and --help names the tape flags', async () => {
    const child = await spawnEmulator(['--replay', dir, '--replay-strict', '--log-level', 'silent']);
    try {
      const r = await t2a(child.speechUrl, speak('Used by the suite.'), { key: 'ci' });
      expect(r.body.base_resp.status_code).toBe(0);
    } finally {
      child.child.kill('SIGTERM');
      await child.exited;
    }
    const help = await cli(['--help']);
    for (const flag of ['--record', '--record-mode', '--replay', '--replay-strict', '--replay-speed', '--upstream-speech', '--upstream-platform'])
      expect(help.out).toContain(flag);
    const both = await cli(['--record', dir, '--replay', dir]);
    expect(both.status).toBe(2);
    expect(both.err).toContain('--record and --replay cannot be used together');
    const alone = await cli(['--record', dir]);
    expect(alone.err).toContain('--record needs an upstream to forward to');
  });
});
