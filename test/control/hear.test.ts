import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, control, emulatorForFile } from '../helpers/emulator.js';

/** `POST /_emulator/hear`: the emulator's own syntheses found in a recording, and what happened to them. */
const TOKEN = 'hear-token';
const { emu } = emulatorForFile({ plane: 'speech', start: { controlToken: TOKEN } });
const RATE = 16000;
const TEXT_A = 'Hello there, this recording checks what a listener actually heard today.';
const TEXT_B = 'Second reply follows quickly.';
const work = mkdtempSync(join(tmpdir(), 'hear-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function t2a(text: string, audio_setting: Record<string, unknown>) {
  const r = await call(`${emu.speechUrl}/v1/t2a_v2`, {
    json: { model: 'speech-02-turbo', text, voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting },
    headers: { authorization: 'Bearer hear-key' },
  });
  expect(r.body.base_resp.status_code).toBe(0);
  return { bytes: Buffer.from(r.body.data.audio, 'hex'), traceId: r.body.trace_id as string };
}

async function hear(bytes: Buffer | Uint8Array, contentType: string, token: string | null = TOKEN) {
  return call(`${emu.speechUrl}/_emulator/hear`, {
    method: 'POST',
    body: bytes,
    headers: { 'content-type': contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
}

/** PCM16 mono at 16 kHz of the text (the raw material the tests cut, repeat and pad). */
async function pcmOf(text: string) {
  const { bytes, traceId } = await t2a(text, { format: 'pcm', sample_rate: RATE });
  return { pcm: bytes, traceId };
}

const at = (ms: number) => Math.round((ms * RATE) / 1000) * 2;
const silence = (ms: number) => Buffer.alloc(at(ms));
/** The words of a text as the answer gives them (the timeline's words carry no punctuation). */
const words = (text: string) => text.split(/\s+/).map((w) => w.replace(/[,.]/g, ''));

/**
 * Converts PCM16 mono 16 kHz with ffmpeg; returns the converted file's bytes. Never synchronous: a test process
 * blocked for seconds on a busy machine lets the listener close its idle keep-alive connection under the client.
 */
async function ffmpeg(pcm: Buffer, ext: string, args: string[]): Promise<Buffer> {
  const src = join(work, `in-${Math.random().toString(36).slice(2)}.pcm`);
  const dst = src.replace(/\.pcm$/, `.${ext}`);
  writeFileSync(src, pcm);
  await promisify(execFile)('ffmpeg', ['-v', 'error', '-y', '-f', 's16le', '-ar', String(RATE), '-ac', '1', '-i', src, ...args, dst]);
  return readFileSync(dst);
}

const CONTAINERS: [string, string, (pcm: Buffer) => Promise<Buffer>][] = [
  ['audio/wav', 'wav', (p) => ffmpeg(p, 'wav', [])],
  ['audio/flac', 'flac', (p) => ffmpeg(p, 'flac', [])],
  ['audio/mpeg', 'mp3', (p) => ffmpeg(p, 'mp3', ['-b:a', '64k'])],
  ['audio/ogg', 'ogg', (p) => ffmpeg(p, 'ogg', ['-c:a', 'libopus', '-b:a', '32k'])],
  ['audio/ogg (Vorbis)', 'ogg', (p) => ffmpeg(p, 'ogg', ['-c:a', 'libvorbis', '-q:a', '4'])],
  [`audio/pcm;rate=${RATE}`, 'pcm', async (p) => p],
  ['audio/mpeg (32 kbps)', 'mp3', (p) => ffmpeg(p, 'mp3', ['-b:a', '32k'])],
  ['audio/wav (8 kHz mu-law)', 'wav', (p) => ffmpeg(p, 'wav', ['-ar', '8000', '-c:a', 'pcm_mulaw'])],
];
const typeOf = (label: string) => label.replace(/ \(.*\)$/, '');

describe('hear: whole syntheses in every format the emulator makes', () => {
  it('a large non-streamed answer (its journal summary only a byte count) is found with its trace_id and journal_id', async () => {
    const { bytes, traceId } = await t2a(TEXT_A, { format: 'wav', sample_rate: 32000 });
    expect(bytes.length * 2).toBeGreaterThan(65_536);
    const entry = (await control(emu.speechUrl, TOKEN).journal({ path: '/v1/t2a_v2', limit: 1 })).body.entries[0];
    expect(entry.response.summary).toEqual({ bytes: expect.any(Number), trace_id: traceId });
    const r = await hear(bytes, 'audio/wav');
    expect(r.body.utterances.map((u: any) => [u.trace_id, u.journal_id])).toEqual([[traceId, entry.id]]);
  });

  for (const format of ['mp3', 'wav', 'flac', 'opus', 'pcm'] as const) {
    it(`a whole ${format} answer is one complete utterance with every word, linked to its request`, async () => {
      const { bytes, traceId } = await t2a(TEXT_A, { format, sample_rate: 24000 });
      const type = { mp3: 'audio/mpeg', wav: 'audio/wav', flac: 'audio/flac', opus: 'audio/ogg', pcm: 'audio/pcm;rate=24000' }[format];
      const r = await hear(bytes, type);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.utterances).toHaveLength(1);
      const u = r.body.utterances[0];
      expect(u.heard_text, JSON.stringify(r.body)).toBe(words(TEXT_A).join(' '));
      expect(r.body.text).toBe(u.heard_text);
      expect([u.complete, u.full_text]).toEqual([true, TEXT_A]);
      // The trace id is known also when the answer was too large for the journal to summarize (wav, pcm).
      expect(u.trace_id).toBe(traceId);
      expect(u.journal_id).toMatch(/^req_/);
      expect(r.body.anomalies).toEqual([]);
      expect(u.start_ms).toBeLessThan(80);
      for (let i = 1; i < u.words.length; i++) expect(u.words[i].start_ms).toBeGreaterThan(u.words[i - 1].end_ms);
      expect(Math.abs(u.end_ms - r.body.duration_ms)).toBeLessThan(120);
    });
  }
});

describe('hear: damaged, joined and foreign recordings in each accepted container', () => {
  let base: { a: Buffer; b: Buffer; wordsA: { word: string; start_ms: number; end_ms: number }[] };
  const ready = (async () => undefined)();
  async function material() {
    await ready;
    if (base) return base;
    const a = (await pcmOf(TEXT_A)).pcm;
    const b = (await pcmOf(TEXT_B)).pcm;
    const whole = await hear(a, `audio/pcm;rate=${RATE}`);
    base = { a, b, wordsA: whole.body.utterances[0].words };
    return base;
  }
  /** The silence midway between word i and word i+1 of TEXT_A, in ms. */
  const between = (w: { start_ms: number; end_ms: number }[], i: number) => Math.round((w[i]!.end_ms + w[i + 1]!.start_ms) / 2);

  for (const [label, , make] of CONTAINERS) {
    const type = typeOf(label);
    const lossy = /mpeg|ogg|Vorbis|mu-law/.test(label);
    const tol = lossy ? 80 : 40;

    it(`${label}: truncated inside a word is complete:false with the words up to the cut`, async () => {
      const { a, wordsA } = await material();
      const cutMs = Math.round((wordsA[5]!.start_ms + wordsA[5]!.end_ms) / 2 + 20);
      const r = await hear(await make(a.subarray(0, at(cutMs))), type);
      expect(r.status).toBe(200);
      const u = r.body.utterances[0];
      expect(u.complete).toBe(false);
      expect(words(u.heard_text).length).toBeGreaterThanOrEqual(5);
      expect(words(u.heard_text).length).toBeLessThanOrEqual(6);
      expect(u.heard_text).toBe(words(TEXT_A).slice(0, words(u.heard_text).length).join(' '));
      const cut = r.body.anomalies.filter((x: any) => x.kind === 'cut');
      expect(cut).toHaveLength(1);
      expect(Math.abs(cut[0].at_ms - cutMs)).toBeLessThan(tol + 40);

      // The recording goes on in silence after the cut (a player that stopped): the same words, the same cut.
      const quiet = await hear(await make(Buffer.concat([a.subarray(0, at(cutMs)), silence(1500)])), type);
      const q = quiet.body.utterances[0];
      expect([q.complete, q.heard_text]).toEqual([false, u.heard_text]);
      expect(quiet.body.anomalies.map((x: any) => x.kind)).toEqual(['cut']);

      // Then another sound, shorter than the words that were due (a listener's "mm"): not taken for them.
      const mm = Buffer.alloc(at(150));
      for (let i = 0; i < mm.length / 2; i++) mm.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / RATE)), i * 2);
      const other = await hear(await make(Buffer.concat([a.subarray(0, at(cutMs)), silence(600), mm, silence(500)])), type);
      expect([other.body.utterances[0].complete, other.body.utterances[0].heard_text]).toEqual([false, u.heard_text]);
      expect(Math.abs(other.body.utterances[0].words.at(-1).end_ms - u.words.at(-1).end_ms)).toBeLessThan(tol);
      expect(other.body.anomalies.map((x: any) => x.kind)).toEqual(['cut']);

      // Cut by the next reply starting at once (a barge-in answered): the first is cut, the second whole.
      const next = await hear(await make(Buffer.concat([a.subarray(0, at(cutMs)), (await material()).b])), type);
      expect(next.body.utterances.map((x: any) => [x.full_text, x.complete, x.heard_text])).toEqual([
        [TEXT_A, false, u.heard_text],
        [TEXT_B, true, words(TEXT_B).join(' ')],
      ]);
      expect(next.body.anomalies.map((x: any) => x.kind)).toEqual(['cut']);
    });

    it(`${label}: two syntheses one after the other are two utterances in order; a gap inside one is reported`, async () => {
      const { a, b, wordsA } = await material();
      const g = between(wordsA, 3);
      // A second, shorter silence inside a word ("listener"): the word is still heard, in two parts.
      const inWord = Math.round(wordsA[7]!.start_ms + 0.4 * (wordsA[7]!.end_ms - wordsA[7]!.start_ms));
      const gapped = Buffer.concat([a.subarray(0, at(g)), silence(1000), a.subarray(at(g), at(inWord)), silence(400), a.subarray(at(inWord))]);
      const r = await hear(await make(Buffer.concat([gapped, silence(300), b])), type);
      expect(r.status).toBe(200);
      expect(r.body.utterances.map((u: any) => [u.full_text, u.complete])).toEqual([
        [TEXT_A, true],
        [TEXT_B, true],
      ]);
      expect(r.body.text, JSON.stringify(r.body)).toBe(`${words(TEXT_A).join(' ')} ${words(TEXT_B).join(' ')}`);
      expect(r.body.utterances[1].start_ms).toBeGreaterThan(r.body.utterances[0].end_ms - tol);
      const gaps = r.body.anomalies.filter((x: any) => x.kind === 'gap');
      expect(gaps, JSON.stringify(r.body.anomalies)).toHaveLength(2);
      expect(Math.abs(gaps[0].duration_ms - 1000)).toBeLessThan(tol);
      expect(gaps[0].at_ms).toBeGreaterThanOrEqual(wordsA[3]!.end_ms - tol);
      expect(gaps[0].at_ms).toBeLessThanOrEqual(g + tol);
      expect(Math.abs(gaps[1].duration_ms - 400)).toBeLessThan(tol);
      expect(Math.abs(gaps[1].at_ms - (inWord + 1000))).toBeLessThan(tol);
      const listener = r.body.utterances[0].words[7];
      expect(listener.word).toBe('listener');
      expect(Math.abs(listener.end_ms - (wordsA[7]!.end_ms + 1400))).toBeLessThan(tol);
      expect(gaps[0].trace_id).toBe(r.body.utterances[0].trace_id);
      expect(r.body.anomalies.filter((x: any) => x.kind !== 'gap')).toEqual([]);
    });

    it(`${label}: a 600 ms span heard twice (cut anywhere, not at word edges) is a repeat`, async () => {
      const { a } = await material();
      for (const end of [1600]) {
        const repeated = Buffer.concat([a.subarray(0, at(end)), a.subarray(at(end - 600), at(end)), a.subarray(at(end))]);
        const r = await hear(await make(repeated), type);
        expect(r.status).toBe(200);
        const kinds = r.body.anomalies.map((x: any) => x.kind);
        expect(kinds, `${end}: ${JSON.stringify(r.body.anomalies)}`).toEqual(['repeat']);
        expect(Math.abs(r.body.anomalies[0].at_ms - end)).toBeLessThan(tol + 60);
        expect(r.body.utterances[0].complete).toBe(true);
      }
    });

    it(`${label}: a span heard twice is a repeat, a span skipped is missing`, async () => {
      const { a, wordsA } = await material();
      const from = between(wordsA, 1);
      const to = between(wordsA, 3);
      const repeated = Buffer.concat([a.subarray(0, at(to)), a.subarray(at(from), at(to)), a.subarray(at(to))]);
      const r = await hear(await make(repeated), type);
      const u = r.body.utterances[0];
      const w = words(TEXT_A);
      expect(u.heard_text, JSON.stringify([wordsA, r.body])).toBe([...w.slice(0, 4), ...w.slice(2, 4), ...w.slice(4)].join(' '));
      expect(r.body.anomalies.map((x: any) => x.kind)).toEqual(['repeat']);
      expect(Math.abs(r.body.anomalies[0].duration_ms - (wordsA[3]!.end_ms - wordsA[2]!.start_ms))).toBeLessThan(tol);

      const skipped = Buffer.concat([a.subarray(0, at(from)), a.subarray(at(to))]);
      const s = await hear(await make(skipped), type);
      expect(s.body.utterances[0].heard_text).toBe([...w.slice(0, 2), ...w.slice(4)].join(' '));
      expect(s.body.anomalies.map((x: any) => x.kind)).toEqual(['missing']);
      expect(s.body.utterances[0].complete).toBe(true);
    });

    it(`${label}: audio the emulator did not make yields no utterance and the recognition fixture's text`, async () => {
      const tone = Buffer.alloc(at(2000));
      for (let i = 0; i < tone.length / 2; i++) tone.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE)), i * 2);
      const r = await hear(await make(tone), type);
      expect(r.status).toBe(200);
      expect(r.body.utterances).toEqual([]);
      expect(r.body.anomalies).toEqual([]);
      expect(typeof r.body.text).toBe('string');
      expect(r.body.text.length).toBeGreaterThan(0);
      expect(Math.abs(r.body.duration_ms - 2000)).toBeLessThan(120);
    });
  }
});

describe('hear: links to the answer', () => {
  it("a short answer's utterance carries its trace id and journal entry; a long text (cut in the journal) is still linked", async () => {
    const short = await t2a('Hi there.', { format: 'mp3', sample_rate: 16000, bitrate: 32000 });
    const j = await control(emu.speechUrl, TOKEN).journal({ limit: 1 });
    const r = await hear(short.bytes, 'audio/mpeg');
    expect(r.body.utterances.map((u: any) => [u.trace_id, u.journal_id, u.heard_text, u.complete])).toEqual([
      [short.traceId, j.body.entries[0].id, 'Hi there', true],
    ]);

    const longText = `${'Many words make a long request text here. '.repeat(8)}The end.`;
    const long = await t2a(longText, { format: 'mp3', sample_rate: 16000, bitrate: 32000 });
    const lj = await control(emu.speechUrl, TOKEN).journal({ limit: 1 });
    expect(lj.body.entries[0].request.body.text).toMatch(/…\(\d+ chars\)$/);
    const lr = await hear(long.bytes, 'audio/mpeg');
    expect([lr.body.utterances[0].journal_id, lr.body.utterances[0].complete]).toEqual([lj.body.entries[0].id, true]);
    expect(lr.body.utterances[0].heard_text).toBe(words(longText).join(' '));
  });
});

describe('hear: a stream cut short', () => {
  it('the audio of a T2A stream cut after 25 chunks (about 2.7 s) is one utterance, complete:false, with the words up to the cut', async () => {
    const text = 'A streamed answer that the connection drops part of the way through, so the listener hears only its start and never its end.';
    const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { authorization: 'Bearer hear-key', 'content-type': 'application/json', 'X-Emulator-Fault': 'cut_after_chunks=25' },
      body: JSON.stringify({ model: 'speech-02-turbo', text, stream: true, voice_setting: { voice_id: 'male-qn-qingse' }, audio_setting: { format: 'mp3' } }),
    });
    let raw = '';
    const reader = res.body!.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        raw += Buffer.from(value).toString('utf8');
      }
    } catch {
      // The connection is destroyed after the third chunk: what arrived before is what was played.
    }
    const played = raw
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)).data?.audio as string | undefined)
      .filter((a): a is string => !!a);
    expect(played.length).toBeGreaterThan(0);
    const r = await hear(Buffer.from(played.join(''), 'hex'), 'audio/mpeg');
    expect(r.body.utterances, JSON.stringify([played.map((p) => p.length), r.body])).toHaveLength(1);
    const u = r.body.utterances[0];
    expect(u.complete).toBe(false);
    expect(u.full_text).toBe(text);
    expect(u.heard_text.length).toBeLessThan(text.length);
    expect(u.heard_text.split(' ').length).toBeGreaterThanOrEqual(2);
    expect(words(text).join(' ').startsWith(u.heard_text)).toBe(true);
    expect(r.body.anomalies.map((a: any) => a.kind)).toEqual(['cut']);
  });
});

describe('hear: the journal entry of the same text', () => {
  it('is the one with the voice that spoke it and no error, not a later request with another voice or a refusal', async () => {
    const text = 'Which request made this audio?';
    const mine = await t2a(text, { format: 'mp3', sample_rate: 16000, bitrate: 32000 });
    const entry = (await control(emu.speechUrl, TOKEN).journal({ limit: 1 })).body.entries[0];
    const other = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: { model: 'speech-02-turbo', text, voice_setting: { voice_id: 'female-shaonv' }, audio_setting: { format: 'mp3' } },
      headers: { authorization: 'Bearer hear-key' },
    });
    expect(other.body.base_resp.status_code).toBe(0);
    const refused = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: { model: 'no-such-model', text, voice_setting: { voice_id: 'male-qn-qingse' } },
      headers: { authorization: 'Bearer hear-key' },
    });
    expect(refused.body.base_resp.status_code).not.toBe(0);
    const r = await hear(mine.bytes, 'audio/mpeg');
    expect(r.body.utterances.map((u: any) => [u.journal_id, u.trace_id])).toEqual([[entry.id, mine.traceId]]);
  });
});

describe('hear: bad input is 400 naming the problem', () => {
  it('refuses a format it does not read, an empty body, undecodable bytes, PCM without a rate, and more than 50 MB', async () => {
    const wrong = await hear(Buffer.from('{}'), 'application/json');
    expect([wrong.status, wrong.body.error.message]).toEqual([
      400,
      expect.stringContaining('Content-Type "application/json" is not an audio format hear reads'),
    ]);
    expect((await hear(Buffer.from('x'), 'audio/aac')).body.error.message).toContain('audio/mpeg, audio/wav, audio/flac, audio/ogg, audio/pcm;rate=N');
    const empty = await hear(Buffer.alloc(0), 'audio/wav');
    expect([empty.status, empty.body.error.message]).toEqual([400, 'the body is empty: send the audio bytes the listener heard']);
    for (const type of ['audio/mpeg', 'audio/wav', 'audio/flac', 'audio/ogg']) {
      const bad = await hear(Buffer.from('not audio at all, just text'), type);
      expect([bad.status, bad.body.error.message]).toEqual([400, expect.stringContaining(`the body is not decodable as ${type}`)]);
    }
    const odd = await hear(Buffer.alloc(3), 'audio/pcm;rate=16000');
    expect(odd.body.error.message).toContain('16-bit samples need an even byte count');
    const norate = await hear(Buffer.alloc(4), 'audio/pcm');
    expect([norate.status, norate.body.error.message]).toEqual([400, expect.stringContaining('audio/pcm needs rate=N')]);
    const elsewhere = await call(`${emu.speechUrl}/_emulator/reset`, {
      method: 'POST',
      body: Buffer.alloc(8),
      headers: { 'content-type': 'audio/wav', authorization: `Bearer ${TOKEN}` },
    });
    expect([elsewhere.status, elsewhere.body.error.message]).toEqual([400, 'body must be JSON (Content-Type: application/json), not audio/wav']);
    const big = await hear(Buffer.alloc(50 * 1024 * 1024 + 10), 'audio/pcm;rate=16000');
    expect([big.status, big.body.error.message]).toEqual([400, expect.stringContaining('over 50 MB')]);
  });

  it('is described in the control plane OpenAPI document', async () => {
    const doc = await call(`${emu.speechUrl}/_emulator/openapi/control.json`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const keys = Object.keys(doc.body.paths).filter((k) => k.endsWith('/hear'));
    expect(keys).toHaveLength(1);
    expect(doc.body.paths[keys[0]!].post.summary).toBe('What a listener heard in a recording');
  });

  it('is a guarded control route: without the token it is 401', async () => {
    const r = await hear(Buffer.alloc(3200), 'audio/pcm;rate=16000', null);
    expect(r.status).toBe(401);
    expect((await control(emu.speechUrl, TOKEN).health()).status).toBe(200);
  });
});
