/**
 * Sockets on tape: recorded through the emulator from a second emulator standing for the real service (its own seed
 * and fixtures, so its answers are not the replaying emulator's), then replayed with that upstream gone, frame for
 * frame, over the speech socket, the bidirectional socket, the conversation socket and the recognition stream.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { spokenPcm } from '../platform/conversation/conversation-helpers.js';
import { control, startTestEmulator } from '../helpers/emulator.js';
import { audioOf, nameOf, talk, until as arrived, withoutFresh, wsBase, type Got, type Talk } from './socket-helpers.js';

const KEY = 'tape-socket-key';
const SPEECH_HEADERS = { authorization: `Bearer ${KEY}` };
const PLATFORM_HEADERS = { 'x-api-key': KEY };
const START = { event: 'task_start', model: 'speech-2.8-turbo', voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'mp3' } };

const dir = mkdtempSync(join(tmpdir(), 'tapes-sockets-'));
const upstreamFixtures = mkdtempSync(join(tmpdir(), 'tapes-upstream-fixtures-'));
let upstream: RunningEmulator;
let recorder: RunningEmulator;
let pcm: Buffer;

/** The client side of each exchange, as sent while recording and again on replay. */
const speechScript = [START, { event: 'task_continue', text: 'Hello from the tape. A second sentence.' }, arrived('task_continued'), { event: 'task_finish' }];
const bidiScript = () => [
  { ...START, session_id: 'client-session-1' },
  { event: 'task_continue', text: 'One sentence here. ' },
  { event: 'task_continue', text: 'And another one.' },
  { event: 'task_finish' },
];
const conversationScript = () => [{ meta: { voice_id: 'default', language: 'en' } }, arrived('session_created'), ...chunks(pcm), { is_final: true }];
// The recognition stream wants at least 2 s of audio.
const recognitionScript = () => [
  { meta: { audio_format: 'pcm16', language: 'en' } },
  ...chunks(Buffer.concat([pcm, Buffer.alloc(48_000)])),
  { is_final: true },
];

function chunks(bytes: Buffer, size = 3200): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

const recorded: Record<string, Talk> = {};

const tapeFiles = () => readdirSync(dir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function exchanges(speechUrl: string, platformUrl: string) {
  return {
    speech: () => talk(`${wsBase(speechUrl)}/ws/v1/t2a_v2`, speechScript, { headers: SPEECH_HEADERS }),
    bidi: () => talk(`${wsBase(speechUrl)}/ws/v1/t2a_v2_bidi`, bidiScript(), { headers: SPEECH_HEADERS }),
    conversation: () =>
      talk(`${wsBase(platformUrl)}/api/v1/audio/conversation/stream`, conversationScript(), {
        headers: PLATFORM_HEADERS,
        closeWhen: (got) => got.some((g) => nameOf(g) === 'done'),
      }),
    recognition: () => talk(`${wsBase(platformUrl)}/v1/speech-to-text/stream`, recognitionScript(), { headers: PLATFORM_HEADERS }),
  };
}

beforeAll(async () => {
  // The upstream answers "hello" its own way: a reply the replaying emulator's fixtures never give.
  const rules = JSON.parse(readFileSync(join(process.cwd(), 'fixtures', 'conversation.json'), 'utf8'));
  rules.rules[0].reply = 'Upstream here: hello from the recorded service.';
  writeFileSync(join(upstreamFixtures, 'conversation.json'), JSON.stringify(rules));
  upstream = await startTestEmulator({ seed: 'the-real-service', fixturesDir: upstreamFixtures });
  recorder = await startTestEmulator({
    seed: 'recorder',
    record: dir,
    upstreamSpeech: upstream.speechUrl,
    upstreamSpeechBackup: upstream.speechBackupUrl,
    upstreamPlatform: upstream.platformUrl,
  });
  // Speech the upstream recognises as "hello there" (its own signature).
  pcm = (await spokenPcm(upstream.emulator, 'hello there')).pcm;
  const ex = exchanges(recorder.speechUrl, recorder.platformUrl);
  for (const [name, run] of Object.entries(ex)) recorded[name] = await run();
  // Each tape is written once its socket ended on both sides.
  await until(() => tapeFiles().length === 4);
  await upstream.close();
}, 60_000);

afterAll(async () => {
  await recorder?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(upstreamFixtures, { recursive: true, force: true });
});

const FRESH = ['session_id', 'trace_id', 'connect_id'];

describe('recording sockets', () => {
  it('passes the upstream frames through as they come: the speech socket speaks with the upstream ids and audio', () => {
    const r = recorded.speech!;
    expect(r.got.map(nameOf)).toEqual(expect.arrayContaining(['connected_success', 'task_started', 'task_continued', 'task_finished']));
    expect(r.close.code).toBe(1000);
    expect(audioOf(r.got).length).toBeGreaterThan(1000);
    expect(recorded.bidi!.got.map(nameOf)).toContain('sentence_end');
    // The client's own session name is echoed (E5), by the upstream.
    expect(recorded.bidi!.got.find((g) => nameOf(g) === 'task_started')).toMatchObject({ json: { session_id: 'client-session-1' } });
  });

  it('the conversation socket carries the upstream reply (its fixtures) as binary audio, the recognition stream its results', () => {
    const c = recorded.conversation!;
    const names = c.got.map(nameOf);
    expect(names).toEqual(expect.arrayContaining(['session_created', 'asr_final', 'llm_first_token', 'binary', 'done']));
    expect(c.got.find((g) => nameOf(g) === 'done')).toMatchObject({ json: { reply_text: 'Upstream here: hello from the recorded service.' } });
    const rec = recorded.recognition!;
    expect(rec.got.map(nameOf)).toEqual(expect.arrayContaining(['asr_final', 'done']));
    expect(rec.got.find((g) => nameOf(g) === 'done')).toMatchObject({ json: { text: expect.stringMatching(/hello there/i) } });
    expect(rec.close.code).toBe(1000);
  });

  it('writes one tape per socket: a timeline both ways, audio in files by content hash, no credential', () => {
    const tapes = tapeFiles();
    expect(tapes.length).toBe(4);
    const all = tapes.map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')));
    const text = tapes.map((n) => readFileSync(join(dir, n), 'utf8')).join('\n');
    expect(text).not.toContain(KEY);
    const speech = all.find((t) => t.operation === 'GET /ws/v1/t2a_v2')!;
    expect(speech.request.headers.authorization).toBe('<credential>');
    expect(speech.answer.stream.kind).toBe('socket');
    const steps = speech.answer.stream.steps;
    expect(steps.find((s: any) => s.dir === 'out')).toMatchObject({ event: { event: 'connected_success' } });
    expect(steps.filter((s: any) => s.dir === 'in').map((s: any) => s.event?.event)).toEqual(['task_start', 'task_continue', 'task_finish']);
    const audio = steps.find((s: any) => s.event?.event === 'task_continued')!.event.data.audio;
    expect(audio).toMatchObject({ $file: expect.stringMatching(/^[0-9a-f]{64}\.mp3$/), encoding: 'hex' });
    expect(steps.at(-1)).toMatchObject({ dir: 'out', close: { code: 1000 } });
    const conversation = all.find((t) => t.operation === 'GET /api/v1/audio/conversation/stream')!;
    expect(conversation.request.headers['x-api-key']).toBe('<credential>');
    const frames = conversation.answer.stream.steps.filter((s: any) => s.frame);
    expect(frames.some((s: any) => s.dir === 'in' && s.frame.$file.endsWith('.pcm'))).toBe(true);
    expect(frames.some((s: any) => s.dir === 'out' && s.frame.$file.endsWith('.mp3'))).toBe(true);
    expect(readdirSync(join(dir, 'files')).every((n) => /^[0-9a-f]{64}\.[a-z0-9]+$/.test(n))).toBe(true);
  });

  it('an upstream that cannot be reached: the family failure and close, journaled, and no tape', async () => {
    const before = readdirSync(dir).length;
    const r = await talk(`${wsBase(recorder.speechUrl)}/ws/v1/t2a_v2`, [START], { headers: SPEECH_HEADERS });
    expect(r.got.map(nameOf)).toEqual(['task_failed']);
    expect((r.got[0] as any).json.base_resp).toMatchObject({ status_code: 1000, status_msg: expect.stringMatching(/upstream cannot be reached/) });
    expect(r.close.code).toBe(1011);
    const p = await talk(`${wsBase(recorder.platformUrl)}/v1/speech-to-text/stream`, [{ meta: { audio_format: 'pcm16' } }], { headers: PLATFORM_HEADERS });
    expect(p.got).toEqual([{ json: expect.objectContaining({ type: 'error', code: 10000 }) }]);
    expect(readdirSync(dir).length).toBe(before);
    const entry = await control(recorder.speechUrl).lastEntry({ path: '/ws/v1/t2a_v2' });
    expect(entry.tape).toMatchObject({ mode: 'forwarded', recorded: false, problem: expect.stringMatching(/the upstream cannot be reached/) });
  });
});

describe('replaying sockets with the upstream gone', () => {
  let replayer: RunningEmulator;
  beforeAll(async () => {
    replayer = await startTestEmulator({ seed: 'replayer', replay: dir, replaySpeed: 4 });
  });
  afterAll(async () => {
    await replayer?.close();
  });

  for (const name of ['speech', 'bidi', 'conversation', 'recognition']) {
    it(`${name}: the recorded frames, frame for frame (audio bytes identical), with fresh ids`, async () => {
      const run = exchanges(replayer.speechUrl, replayer.platformUrl)[name as 'speech']!;
      const again = await run();
      const was = recorded[name]!;
      expect(again.got.map(nameOf)).toEqual(was.got.map(nameOf));
      expect(again.got.map((g) => withoutFresh(g, FRESH))).toEqual(was.got.map((g) => withoutFresh(g, FRESH)));
      expect(audioOf(again.got).equals(audioOf(was.got))).toBe(true);
      expect(again.close.code).toBe(was.close.code);
      const ids = (got: Got[]) => new Set(got.filter((g) => 'json' in g && g.json.session_id).map((g: any) => g.json.session_id));
      // The bidirectional socket greets with its connect id, then echoes the session the client named (E5).
      if (name === 'bidi') expect([...ids(again.got)].slice(1)).toEqual(['client-session-1']);
      else if (ids(was.got).size) {
        // One fresh session id for the socket, not the recorded one.
        expect(ids(again.got).size).toBe(1);
        expect([...ids(again.got)][0]).not.toBe([...ids(was.got)][0]);
      }
    });
  }

  it('the journal entry names the tape that answered', async () => {
    await exchanges(replayer.speechUrl, replayer.platformUrl).speech();
    const entry = await control(replayer.speechUrl).lastEntry({ path: '/ws/v1/t2a_v2' });
    expect(entry.tape).toEqual({ mode: 'replayed', id: expect.stringMatching(/^speech-get-ws-v1-t2a-v2-[0-9a-f]{10}-1$/) });
  });

  it('a socket no tape matches falls through to the emulator own socket, with the session id it was greeted with', async () => {
    const r = await talk(
      `${wsBase(replayer.speechUrl)}/ws/v1/t2a_v2`,
      [START, { event: 'task_continue', text: 'Words never recorded.' }, arrived('task_continued'), { event: 'task_finish' }],
      {
        headers: SPEECH_HEADERS,
      },
    );
    expect(r.got.map(nameOf).filter((n) => n !== 'task_continued')).toEqual(['connected_success', 'task_started', 'task_finished']);
    const sessions = new Set(r.got.map((g: any) => g.json.session_id));
    expect(sessions.size).toBe(1);
    expect(audioOf(r.got).length).toBeGreaterThan(500);
    expect(audioOf(r.got).equals(audioOf(recorded.speech!.got))).toBe(false);
    const entries: any[] = await replayer.control.journal.list({ path: '/ws/v1/t2a_v2' });
    const missed = entries.find((e: any) => e.tape?.mode === 'missed');
    expect(missed.tape.nearest[0]).toEqual({ id: expect.stringMatching(/^speech-get-ws-v1-t2a-v2-/), differs: ['message 2 differs (text)'] });
    expect(missed.note).toBe("no tape matched: the emulator's own socket answered");
  });

  it('stream faults apply to the recorded audio: cut_after_chunks drops the connection', async () => {
    const r = await talk(`${wsBase(replayer.speechUrl)}/ws/v1/t2a_v2`, speechScript, {
      headers: { ...SPEECH_HEADERS, 'x-emulator-fault': 'cut_after_chunks=1' },
    });
    expect(r.got.filter((g) => nameOf(g) === 'task_continued').length).toBe(1);
    expect(r.close.code).toBe(1006);
  });
});

describe('strict replay', () => {
  let strict: RunningEmulator;
  beforeAll(async () => {
    strict = await startTestEmulator({ seed: 'strict', replay: dir, replayStrict: true, replaySpeed: 0 });
  });
  afterAll(async () => {
    await strict?.close();
  });

  it('a miss is the family error naming the nearest tape and what differs', async () => {
    const r = await talk(`${wsBase(strict.speechUrl)}/ws/v1/t2a_v2`, [START, { event: 'task_continue', text: 'Not on tape.' }], { headers: SPEECH_HEADERS });
    expect(r.got.map(nameOf)).toEqual(['connected_success', 'task_started', 'task_failed']);
    const failed = (r.got[2] as any).json;
    expect(failed.base_resp.status_msg).toMatch(
      /no tape matches GET \/ws\/v1\/t2a_v2; nearest: speech-get-ws-v1-t2a-v2-[0-9a-f]{10}-1 \(message 2 differs \(text\)\)/,
    );
    // The failure speaks with the session id the socket was greeted with.
    expect(failed.session_id).toBe((r.got[0] as any).json.session_id);
    expect(r.close.code).toBe(1011);
    const rec = await talk(`${wsBase(strict.platformUrl)}/v1/speech-to-text/stream`, [{ meta: { audio_format: 'pcm16', language: 'zh' } }], {
      headers: PLATFORM_HEADERS,
    });
    expect(rec.got).toEqual([
      { json: expect.objectContaining({ type: 'error', code: 10001, message: expect.stringMatching(/message 1 differs \(meta.language\)/) }) },
    ]);
  });
});

describe('record-missing on a socket', () => {
  it('records a socket no tape answers, replays it the next time, and records a new one when the client parts from it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tapes-sockets-missing-'));
    const source = await startTestEmulator({ seed: 'missing-upstream' });
    const emu = await startTestEmulator({ seed: 'missing', record: folder, recordMode: 'record-missing', upstreamSpeech: source.speechUrl });
    const url = `${wsBase(emu.speechUrl)}/ws/v1/t2a_v2`;
    const script = (text: string) => [START, { event: 'task_continue', text }, arrived('task_continued'), { event: 'task_finish' }];
    const jsonTapes = () => readdirSync(folder).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
    try {
      const first = await talk(url, script('Recorded when missing.'), { headers: SPEECH_HEADERS });
      await until(() => jsonTapes().length === 1);
      const again = await talk(url, script('Recorded when missing.'), { headers: SPEECH_HEADERS });
      expect(again.got.map((g) => withoutFresh(g, FRESH))).toEqual(first.got.map((g) => withoutFresh(g, FRESH)));
      const [replayed] = await emu.control.journal.list({ path: '/ws/v1/t2a_v2', limit: 1 });
      expect(replayed!.tape).toMatchObject({ mode: 'replayed', id: jsonTapes()[0]!.slice(0, -5) });
      // Parts from the tape at its second message: the upstream answers (one session id throughout), and is recorded.
      const other = await talk(url, script('Something new.'), { headers: SPEECH_HEADERS });
      expect(other.got.map(nameOf).filter((n) => n !== 'task_continued')).toEqual(['connected_success', 'task_started', 'task_finished']);
      expect(new Set(other.got.map((g: any) => g.json.session_id)).size).toBe(1);
      await until(() => jsonTapes().length === 2);
    } finally {
      await emu.close();
      await source.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('the key a socket client sends never reaches the tapes', () => {
  it('a credential field of a message and the presented key echoed in a message are the marker in every file of the folder; the tape still replays', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tapes-sockets-keys-'));
    const inMessage = 'sk-sent-inside-the-message-0123456789';
    const source = await startTestEmulator({ seed: 'keys-upstream' });
    const emu = await startTestEmulator({ seed: 'keys', record: folder, upstreamSpeech: source.speechUrl });
    const script = [
      { ...START, api_key: inMessage },
      { event: 'task_continue', text: `My key is ${KEY}, and the other is ${inMessage}.` },
      arrived('task_continued'),
      { event: 'task_finish' },
    ];
    const jsonTapes = () => readdirSync(folder).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
    try {
      const first = await talk(`${wsBase(emu.speechUrl)}/ws/v1/t2a_v2`, script, { headers: SPEECH_HEADERS });
      expect(first.got.map(nameOf), JSON.stringify(first.got)).toContain('task_finished');
      await until(() => jsonTapes().length === 1);
      const all = [...readdirSync(folder).map((n) => join(folder, n)), ...readdirSync(join(folder, 'files')).map((n) => join(folder, 'files', n))];
      for (const file of all.filter((f) => !f.endsWith('/files'))) {
        const bytes = readFileSync(file);
        expect(bytes.includes(KEY), file).toBe(false);
        expect(bytes.includes(inMessage), file).toBe(false);
      }
      const tape = JSON.parse(readFileSync(join(folder, jsonTapes()[0]!), 'utf8'));
      const start = tape.answer.stream.steps.find((s: any) => s.dir === 'in' && s.event?.event === 'task_start');
      expect(start.event.api_key).toBe('<credential>');
    } finally {
      await emu.close();
      await source.close();
    }
    // Replayed: the live message's key is compared as the marker, so the same client finds its tape.
    const replayer = await startTestEmulator({ seed: 'keys-replay', replay: folder, replayStrict: true, replaySpeed: 0 });
    try {
      const again = await talk(`${wsBase(replayer.speechUrl)}/ws/v1/t2a_v2`, script, { headers: SPEECH_HEADERS });
      expect(again.got.map(nameOf), JSON.stringify(again.got).slice(0, 600)).toContain('task_finished');
      const [entry] = await replayer.control.journal.list({ path: '/ws/v1/t2a_v2', limit: 1 });
      expect(entry!.tape).toMatchObject({ mode: 'replayed' });
    } finally {
      await replayer.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
