/**
 * `tapes check`: tapes recorded from an upstream emulator with the same seed and fixtures as the emulator checked
 * show no difference (HTTP whole and streamed, an error, the speech and conversation sockets); planted differences (a
 * changed code, a missing field, a longer audio) are found, exactly those and nothing else; through the control plane
 * and the CLI (its JSON report and its exit status).
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { spokenPcm } from '../platform/conversation/conversation-helpers.js';
import { runCli as cli } from '../helpers/child.js';
import { call, startTestEmulator } from '../helpers/emulator.js';
import { nameOf, talk, until, wsBase } from './socket-helpers.js';

const SEED = 'check-seed';
const KEY = 'tapes-check-recording-key';
const PLATFORM_VOICE = 'female_warm';
const dir = mkdtempSync(join(tmpdir(), 'tapes-check-'));
const planted = mkdtempSync(join(tmpdir(), 'tapes-check-planted-'));
const speak = (text: string, extra: object = {}) => ({ model: 'speech-02-turbo', text, voice_setting: { voice_id: 'male-qn-qingse' }, ...extra });
const tapeFiles = (d: string) => readdirSync(d).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
const read = (d: string, n: string) => JSON.parse(readFileSync(join(d, n), 'utf8'));

let checked: RunningEmulator;

beforeAll(async () => {
  const upstream = await startTestEmulator({ seed: SEED });
  const recorder = await startTestEmulator({ seed: 'recorder', record: dir, upstreamSpeech: upstream.speechUrl, upstreamPlatform: upstream.platformUrl });
  const bearer = { authorization: `Bearer ${KEY}` };
  await call(`${recorder.speechUrl}/v1/t2a_v2`, { json: speak('A whole answer with audio.'), headers: bearer });
  await call(`${recorder.speechUrl}/v1/t2a_v2`, { json: speak('A streamed answer.', { stream: true }), headers: bearer });
  await call(`${recorder.speechUrl}/v1/t2a_v2`, { json: speak('An unknown voice.', { voice_setting: { voice_id: 'no-such-voice' } }), headers: bearer });
  await call(`${recorder.speechUrl}/v1/t2a_v2`, { json: speak('Another whole answer, to be made longer.'), headers: bearer });
  await call(`${recorder.platformUrl}/v1/text-to-speech`, {
    json: { voice_id: PLATFORM_VOICE, generate_text: 'Platform synthesis.' },
    headers: { 'x-api-key': KEY },
  });
  await talk(
    `${wsBase(recorder.speechUrl)}/ws/v1/t2a_v2`,
    [
      speak('x', { event: 'task_start', text: undefined }),
      { event: 'task_continue', text: 'Socket words.' },
      until('task_continued'),
      { event: 'task_finish' },
    ],
    {
      headers: bearer,
    },
  );
  const pcm = (await spokenPcm(upstream.emulator, 'hello there')).pcm;
  const frames: Buffer[] = [];
  for (let at = 0; at < pcm.length; at += 3200) frames.push(pcm.subarray(at, at + 3200));
  await talk(
    `${wsBase(recorder.platformUrl)}/api/v1/audio/conversation/stream`,
    [{ meta: { voice_id: 'default', language: 'en' } }, until('session_created'), ...frames, { is_final: true }],
    {
      headers: { 'x-api-key': KEY },
      closeWhen: (got) => got.some((g) => nameOf(g) === 'done'),
    },
  );
  for (let i = 0; i < 250 && tapeFiles(dir).length < 7; i++) await new Promise((r) => setTimeout(r, 20));
  await recorder.close();
  await upstream.close();
  // The emulator checked: the upstream's seed and fixtures, so its own answers are those recorded. It must know the
  // recording's speech to answer the conversation the same way: its signature is the synthesis's own.
  checked = await startTestEmulator({ seed: SEED });
  await spokenPcm(checked.emulator, 'hello there');
}, 90_000);

afterAll(async () => {
  await checked?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(planted, { recursive: true, force: true });
});

describe('tapes check', () => {
  it('tapes of an upstream with the same seed and fixtures: no difference', async () => {
    expect(tapeFiles(dir).length).toBe(7);
    // Through the shipped control client.
    const report = await checked.control.tapesCheck(dir);
    const withDifferences = report.results.filter((x) => x.differences.length);
    expect(JSON.stringify(withDifferences, null, 1)).toBe('[]');
    expect(report).toMatchObject({ tapes: 7, differing: 0, summary: '7 tapes checked: 7 the same, 0 differ' });
  });

  it('planted differences are found, exactly those: a changed code, a missing field, a longer audio', async () => {
    cpSync(dir, planted, { recursive: true });
    const names = tapeFiles(planted);
    const t2a = names.map((n) => [n, read(planted, n)] as const).filter(([, t]) => t.operation === 'POST /v1/t2a_v2' && t.service === 'speech');
    const failed = t2a.find(([, t]) => t.answer.body?.json && t.answer.body.json.base_resp?.status_code !== 0)!;
    const [whole, longerTape] = t2a.filter(([, t]) => t.answer.body?.json?.base_resp?.status_code === 0) as [(typeof t2a)[number], (typeof t2a)[number]];
    // A changed code.
    failed[1].answer.body.json.base_resp.status_code = 1042;
    writeFileSync(join(planted, failed[0]), JSON.stringify(failed[1], null, 2));
    // A missing field.
    delete whole[1].answer.body.json.extra_info.audio_size;
    writeFileSync(join(planted, whole[0]), JSON.stringify(whole[1], null, 2));
    // A longer audio: the recorded MP3 twice over, stored by its hash.
    const ref = longerTape[1].answer.body.json.data.audio;
    const mp3 = readFileSync(join(planted, 'files', ref.$file));
    const longer = Buffer.concat([mp3, mp3, mp3]);
    const name = `${createHash('sha256').update(longer).digest('hex')}.mp3`;
    writeFileSync(join(planted, 'files', name), longer);
    longerTape[1].answer.body.json.data.audio = { ...ref, $file: name };
    writeFileSync(join(planted, longerTape[0]), JSON.stringify(longerTape[1], null, 2));

    const r: any = await checked.control.request({ method: 'POST', path: '/tapes/check', json: { dir: planted } });
    expect(r.body.summary).toBe('7 tapes checked: 4 the same, 3 differ');
    const byId = Object.fromEntries(r.body.results.map((x: any) => [x.id, x.differences]));
    expect(byId[failed[1].id]).toEqual([{ what: 'code', recorded: '1042', emulator: expect.stringMatching(/^20\d\d$/) }]);
    expect(byId[whole[1].id]).toEqual([{ what: 'field', where: 'extra_info.audio_size', recorded: 'absent', emulator: 'number' }]);
    expect(byId[longerTape[1].id]).toEqual([{ what: 'audio', where: 'duration_ms', recorded: expect.any(Number), emulator: expect.any(Number) }]);
    const d = byId[longerTape[1].id][0];
    expect(d.recorded).toBeGreaterThan(d.emulator * 2.5);
  });

  it('the CLI: a summary line, a JSON report with --json, and exit 1 when anything differs (0 when nothing does)', async () => {
    const same = await cli(['tapes', 'check', dir, '--seed', SEED]);
    // The conversation needs the recording's speech signature, which the CLI's fresh emulator does not hold: it may
    // hear something else and answer otherwise; every other tape is the same.
    const lines = (same.out || same.err).trim().split('\n');
    expect(lines.at(-1)).toMatch(/^7 tapes checked: [67] the same, [01] differ$/);
    expect(same.status).toBe(lines.at(-1)!.includes(' 0 differ') ? 0 : 1);
    for (const line of lines.filter((l) => /^\S+-\S+\s{2}/.test(l))) expect(line).toMatch(/conversation/);
    const r = await cli(['tapes', 'check', planted, '--seed', SEED, '--json']);
    expect(r.status).toBe(1);
    const report = JSON.parse(r.err || r.out);
    const planted3 = report.results.filter((x: any) => !x.operation.includes('conversation') && x.differences.length);
    expect(planted3.map((x: any) => x.differences.map((d: any) => d.what)).sort()).toEqual([['audio'], ['code'], ['field']]);
  }, 60_000);

  it('an emulator that replays refuses to check (its answers would be the tapes)', async () => {
    const replaying = await startTestEmulator({ replay: dir });
    try {
      const r = await call(`${replaying.speechUrl}/_emulator/tapes/check`, { json: { dir } });
      expect(r.status).toBe(409);
      expect(r.body.error.message).toMatch(/without --record or --replay/);
      const bad = await call(`${checked.speechUrl}/_emulator/tapes/check`, { json: { dir: join(dir, 'missing') } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toMatch(/^tapes check field dir: tape .*cannot be read/);
    } finally {
      await replaying.close();
    }
  });

  it('the control plane opens only folders of tapes, and never repeats what a file that is not a tape holds', async () => {
    const other = mkdtempSync(join(tmpdir(), 'not-tapes-'));
    try {
      // A folder of someone's files: one of them broken JSON holding a secret, which no answer may repeat.
      writeFileSync(join(other, 'settings.json'), '{"password": "hunter2-secret", oops');
      const r = await call(`${checked.speechUrl}/_emulator/tapes/check`, { json: { dir: other } });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toBe(
        "tapes check field dir: the folder is not a folder of tapes: it holds a .json file without the tape format's version field",
      );
      expect(r.text).not.toMatch(/hunter2|oops|password/);
      // Valid JSON that is not a tape is refused the same way; a folder without any .json is checked (nothing in it is read).
      writeFileSync(join(other, 'settings.json'), '{"password": "hunter2-secret"}');
      expect((await call(`${checked.speechUrl}/_emulator/tapes/check`, { json: { dir: other } })).body.error.message).toMatch(/not a folder of tapes/);
      rmSync(join(other, 'settings.json'));
      const empty = await call(`${checked.speechUrl}/_emulator/tapes/check`, { json: { dir: other } });
      expect(empty.status).toBe(200);
      expect(empty.body.summary).toBe('0 tapes checked: 0 the same, 0 differ');
      // The CLI (the user's own shell) still opens any folder it is given, and says what is wrong with it.
      writeFileSync(join(other, 'settings.json'), '{"password": "x"}');
      const viaCli = await cli(['tapes', 'check', other, '--seed', SEED]);
      expect(viaCli.status).not.toBe(0);
      expect(viaCli.err + viaCli.out).toMatch(/tape settings\.json/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 60_000);
});
