import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, control } from '../helpers/emulator.js';
import { t2a } from '../speech/helpers.js';
import { REAL_KEY, startRecorder, startReplayer, startUpstream, tapeDir, UPSTREAM_PLATFORM_VOICE, UPSTREAM_VOICE } from './helpers.js';
import { startTestEmulator } from '../helpers/emulator.js';

const speak = (text: string) => ({ model: 'speech-02-turbo', text, voice_setting: { voice_id: UPSTREAM_VOICE } });
const platformTts = (base: string, key: string, text: string) =>
  call(`${base}/v1/text-to-speech`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ voice_id: UPSTREAM_PLATFORM_VOICE, generate_text: text }),
  });

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe('tapes: what goes wrong is said, and nothing half is kept', () => {
  const dir = tapeDir();
  beforeAll(async () => {
    const upstream = await startUpstream();
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      expect((await t2a(recorder.speechUrl, speak('The one recorded sentence.'), { key: REAL_KEY })).body.base_resp.status_code).toBe(0);
      expect((await platformTts(recorder.platformUrl, REAL_KEY, 'The one recorded platform sentence.')).status).toBe(200);
    } finally {
      await recorder.close();
      await upstream.close();
    }
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("--replay-strict: a request no tape matches answers the operation's own error, naming the nearest tape and the field that differs", async () => {
    const emu = await startReplayer(dir, { replayStrict: true });
    try {
      const tapeId = readdirSync(dir)
        .find((f) => f.startsWith('speech-post-v1-t2a-v2-'))!
        .slice(0, -5);
      const miss = await t2a(emu.speechUrl, speak('A sentence never recorded.'), { key: 'ci' });
      // No recorded answer is the family's "not found": HTTP 404 in its own shape, never a 500.
      expect(miss.status).toBe(404);
      expect(miss.body.base_resp.status_code).toBe(1000);
      expect(miss.body.base_resp.status_msg).toBe(`replay: no tape matches POST /v1/t2a_v2; nearest: ${tapeId} (differs in body.text)`);
      const entry = (await control(emu.speechUrl).journal({ limit: 1 })).body.entries[0];
      expect(entry.tape).toEqual({ mode: 'missed', nearest: [{ id: tapeId, differs: ['body.text'] }] });
      // The platform's own shape for the same miss.
      const platformMiss = await platformTts(emu.platformUrl, 'ci', 'Not this one.');
      expect(platformMiss.status).toBe(404);
      expect(platformMiss.body.error_code).toBe(10001);
      expect(platformMiss.body.error_message ?? platformMiss.text).toMatch(
        /no tape matches POST \/v1\/text-to-speech; nearest: platform-post-v1-text-to-speech-[0-9a-f]{10}-1 \(differs in body\.generate_text\)/,
      );
      // An operation never recorded says so.
      const never = await call(`${emu.speechUrl}/v1/get_voice`, {
        method: 'POST',
        headers: { authorization: 'Bearer ci', 'content-type': 'application/json' },
        body: '{"voice_type":"all"}',
      });
      expect(never.status).toBe(404);
      expect(never.body.base_resp.status_msg).toBe('replay: no tape matches POST /v1/get_voice: none was recorded for this operation');
    } finally {
      await emu.close();
    }
  });

  it("an unreachable upstream answers the operation's own error, is journaled, and writes no tape", async () => {
    const empty = tapeDir();
    const port = await deadPort();
    const emu = await startTestEmulator({ record: empty, upstreamSpeech: `http://127.0.0.1:${port}`, upstreamPlatform: `http://127.0.0.1:${port}` });
    try {
      const r = await t2a(emu.speechUrl, speak('Nobody is there.'), { key: REAL_KEY });
      expect(r.status).toBe(502);
      expect(r.body.base_resp.status_code).toBe(1000);
      expect(r.body.base_resp.status_msg).toMatch(
        new RegExp(`^the upstream http://127\\.0\\.0\\.1:${port} could not be reached \\(ECONNREFUSED: .*\\); no tape was written$`),
      );
      const p = await platformTts(emu.platformUrl, REAL_KEY, 'Nobody is there.');
      expect(p.status).toBe(502);
      expect(p.body.error_code).toBe(10000);
      const entries = (await control(emu.speechUrl).journal({ limit: 2 })).body.entries;
      for (const e of entries) expect(e.tape).toMatchObject({ mode: 'forwarded', upstream: `http://127.0.0.1:${port}`, recorded: false });
      expect(readdirSync(empty).filter((f) => f.endsWith('.json'))).toEqual([]);
      expect(readdirSync(join(empty, 'files'))).toEqual([]);
    } finally {
      await emu.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('a damaged or hand-edited tape stops the start, named with its file and what is wrong', async () => {
    const name = readdirSync(dir).find((f) => f.startsWith('speech-post-v1-t2a-v2-'))!;
    const good = readFileSync(join(dir, name), 'utf8');
    try {
      const edited = JSON.parse(good);
      edited.answer.status = 999;
      writeFileSync(join(dir, name), JSON.stringify(edited));
      await expect(startReplayer(dir)).rejects.toThrow(`tape ${name}: answer.status: Too big: expected number to be <=599`);
      writeFileSync(join(dir, name), good.slice(0, 100));
      await expect(startReplayer(dir)).rejects.toThrow(new RegExp(`^tape ${name.replace(/\./g, '\\.')}: not JSON \\(`));
      writeFileSync(join(dir, name), JSON.stringify({ ...JSON.parse(good), tape: 2 }));
      await expect(startReplayer(dir)).rejects.toThrow(`tape ${name}: format version 2 is not 1, the one this emulator reads`);
      const ref = /"\$file": "([0-9a-f]{64}\.[a-z0-9]+)"/.exec(good)![1]!;
      writeFileSync(join(dir, name), good);
      const hidden = join(dir, 'files', ref);
      const bytes = readFileSync(hidden);
      rmSync(hidden);
      await expect(startReplayer(dir)).rejects.toThrow(`tape ${name}: references files/${ref}, which is missing`);
      writeFileSync(hidden, bytes);
    } finally {
      writeFileSync(join(dir, name), good);
    }
    const emu = await startReplayer(dir);
    await emu.close();
  });

  it('--record-mode record-missing replays what matches and records only the rest', async () => {
    const upstream = await startUpstream();
    const emu = await startRecorder(dir, upstream.emu, { recordMode: 'record-missing' });
    try {
      const before = readdirSync(dir).filter((f) => f.endsWith('.json')).length;
      expect((await t2a(emu.speechUrl, speak('The one recorded sentence.'), { key: REAL_KEY })).body.base_resp.status_code).toBe(0);
      expect((await t2a(emu.speechUrl, speak('A new sentence, recorded now.'), { key: REAL_KEY })).body.base_resp.status_code).toBe(0);
      const entries = (await control(emu.speechUrl).journal({ limit: 2 })).body.entries;
      expect(entries.map((e: any) => e.tape.mode).sort()).toEqual(['forwarded', 'replayed']);
      expect(readdirSync(dir).filter((f) => f.endsWith('.json')).length).toBe(before + 1);
    } finally {
      await emu.close();
      await upstream.close();
    }
  });

  it('--record-per-account: a tape answers the account that recorded it, and no other', async () => {
    const own = tapeDir();
    const upstream = await startUpstream();
    const recorder = await startRecorder(own, upstream.emu, { recordPerAccount: true });
    try {
      expect((await t2a(recorder.speechUrl, speak('Mine only.'), { key: 'owner-key' })).body.base_resp.status_code).toBe(0);
    } finally {
      await recorder.close();
      await upstream.close();
    }
    const tape = JSON.parse(
      readFileSync(
        join(
          own,
          readdirSync(own).find((f) => f.endsWith('.json'))!,
        ),
        'utf8',
      ),
    );
    expect(tape.account).toMatch(/^[0-9a-f]{16}$/);
    const emu = await startReplayer(own);
    try {
      expect((await t2a(emu.speechUrl, speak('Mine only.'), { key: 'owner-key' })).body.base_resp.status_code).toBe(0);
      // Another account misses the tape: the emulator's own rules answer (they do not know the upstream's voice).
      expect((await t2a(emu.speechUrl, speak('Mine only.'), { key: 'other-key' })).body.base_resp.status_code).toBe(2054);
    } finally {
      await emu.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('tapes: a write that fails is seen, never half a tape', () => {
  it('the files of the folder cannot be written (as on a full disk): the whole answer fails, the stream breaks, no tape is left', async () => {
    const broken = tapeDir();
    const upstream = await startUpstream();
    const emu = await startRecorder(broken, upstream.emu);
    try {
      // Once recording: `files` becomes a plain file, so every write under it fails, as a full disk would make it fail.
      rmSync(join(broken, 'files'), { recursive: true, force: true });
      writeFileSync(join(broken, 'files'), 'not a folder');
      const whole = await t2a(emu.speechUrl, speak('Nowhere to write this.'), { key: REAL_KEY });
      expect(whole.body.base_resp.status_code).toBe(1000);
      // Told as a tape problem (the data dir's failure), not the bare internal error of an unexpected failure.
      expect(whole.body.base_resp.status_msg).toMatch(/the tape could not be written \(E[A-Z]+.*\); the exchange was not kept/);
      const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
        method: 'POST',
        headers: { authorization: `Bearer ${REAL_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...speak('Nor this stream.'), stream: true }),
      });
      await expect(res.text()).rejects.toThrow();
      const entries = (await control(emu.speechUrl).journal({ limit: 2 })).body.entries;
      expect(entries).toHaveLength(2);
      for (const e of entries)
        expect(e.tape).toMatchObject({ mode: 'forwarded', recorded: false, problem: expect.stringMatching(/^the tape could not be written/) });
      expect(readdirSync(broken).filter((f) => f.endsWith('.json'))).toEqual([]);
    } finally {
      await emu.close();
      await upstream.close();
      rmSync(broken, { recursive: true, force: true });
    }
  });
});
