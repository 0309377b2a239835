import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { synthesizeDialogueStream } from '../../src/audio/index.js';
import { PlatformError } from '../../src/services/platform/envelope.js';
import { diarize } from '../../src/services/platform/diarization/model.js';
import { dialogueOf } from '../../src/services/platform/podcast/model.js';
import { pcm16Wav } from '../helpers/audio.js';
import { call, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile({ freeze: true });
const KEY = 'diar-key';

function diar(json: unknown, key: string | null = KEY, base = emu.platformUrl) {
  return call(`${base}/v1/diarize`, { json, headers: key ? { 'x-api-key': key } : {} });
}

function accountOf(key: string) {
  const r = emu.emulator.accounts.resolve(key);
  if (!r.ok) throw new Error('no account');
  return r.account;
}

/** 16 kHz mono WAV: silence with tone bursts over `spans` (seconds). */
function bursts(seconds: number, spans: [number, number][]): Buffer {
  const n = seconds * 16000;
  const b = pcm16Wav(n * 2);
  for (const [s, e] of spans) {
    for (let i = Math.round(s * 16000); i < Math.round(e * 16000); i++)
      b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 200 * i) / 16000)), 44 + i * 2);
  }
  return b;
}

/** Uploads a file with scene audio, as a client does before diarizing it; answers its object key. */
async function uploaded(key: string, name: string, bytes: Buffer, base = emu.platformUrl): Promise<string> {
  const form = new FormData();
  form.append('scene', 'audio');
  form.append('file', new Blob([bytes]), name);
  const res = await fetch(`${base}/v1/files/upload`, { method: 'POST', body: form, headers: { 'x-api-key': key } });
  const body = (await res.json()) as { error_code: number; data: { object_key: string } };
  expect(body.error_code).toBe(0);
  return body.data.object_key;
}

describe('emulator audio: its real turns', () => {
  it('a podcast is diarized into two speakers whose segments match its lines', async () => {
    const lines = ['Welcome back to the show.', 'Thank you, it is great to be here.', 'Let us talk about sound.', 'Sure thing.'];
    const pod = await call(`${emu.platformUrl}/v1/audio/podcast`, { json: { dialogueText: lines.join('\n'), speed: 300 }, headers: { 'x-api-key': KEY } });
    expect(pod.body.error_code).toBe(0);
    const pair = emu.emulator.fixtures.data['podcast-pairs.json'][0]!;
    const turns = synthesizeDialogueStream(dialogueOf({ lines, voices: [pair.speaker1, pair.speaker2], pair: pair.name, speed: 300 })).turns!;

    for (const body of [{ object_key: pod.body.data.objectKey }, { url: pod.body.data.audioUrl }]) {
      const r = await diar(body);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ error_code: 0, error_message: '', succeed: true });
      expect(r.body.data.trace_id).toMatch(/^[0-9a-f]{32}$/);
      const speakers = r.body.data.speakers;
      expect(speakers.map((s: any) => s.speaker_id)).toEqual(['SPEAKER_00', 'SPEAKER_01']);
      for (const [i, s] of speakers.entries()) {
        const mine = turns.filter((t) => t.speaker === i + 1);
        expect(s.segments).toHaveLength(mine.length);
        s.segments.forEach((g: any, j: number) => {
          // The MP3 decoder's encoder delay (about 46 ms) shifts the audio; segments follow the audio.
          expect(Math.abs(g.start_time - mine[j]!.startMs / 1000)).toBeLessThan(0.08);
          expect(Math.abs(g.end_time - mine[j]!.endMs / 1000)).toBeLessThan(0.08);
        });
        const total = s.segments.reduce((a: number, g: any) => a + g.end_time - g.start_time, 0);
        expect(s.total_dur).toBeCloseTo(total, 3);
      }
    }
  });

  it('turn times follow the audio when a user pads, resamples and turns it down', async () => {
    const lines = ['Padded audio here.', 'Still two speakers.'];
    const pod = await call(`${emu.platformUrl}/v1/audio/podcast`, { json: { dialogueText: lines.join('\n') }, headers: { 'x-api-key': KEY } });
    const dir = mkdtempSync(join(tmpdir(), 'diar-'));
    writeFileSync(join(dir, 'p.mp3'), Buffer.from(await (await fetch(pod.body.data.audioUrl)).arrayBuffer()));
    execFileSync('ffmpeg', ['-v', 'error', '-i', join(dir, 'p.mp3'), '-af', 'adelay=500,volume=0.3', '-ar', '16000', join(dir, 'p.wav')]);
    const key = await uploaded(KEY, 'padded.wav', readFileSync(join(dir, 'p.wav')));
    const pair = emu.emulator.fixtures.data['podcast-pairs.json'][0]!;
    const turns = synthesizeDialogueStream(dialogueOf({ lines, voices: [pair.speaker1, pair.speaker2], pair: pair.name, speed: 250 })).turns!;
    const speakers = (await diar({ object_key: key })).body.data.speakers;
    expect(speakers).toHaveLength(2);
    speakers.forEach((s: any, i: number) => {
      // 500 ms of padding plus the MP3 decoder delay (about 46 ms).
      expect(Math.abs(s.segments[0].start_time - (turns[i]!.startMs + 500) / 1000)).toBeLessThan(0.1);
    });
  });

  it('a single synthesis is one speaker over its sentences', async () => {
    const res = await fetch(`${emu.platformUrl}/v1/text-to-speech`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ voice_id: 'male_calm', generate_text: 'First sentence here. And a second one.' }),
    });
    const key = await uploaded(KEY, 'tts.wav', Buffer.from(await res.arrayBuffer()));
    const r = await diar({ object_key: key });
    expect(r.body.data.speakers).toHaveLength(1);
    expect(r.body.data.speakers[0].speaker_id).toBe('SPEAKER_00');
    expect(r.body.data.speakers[0].segments).toHaveLength(2);
  });
});

describe('other audio', () => {
  const spans: [number, number][] = [
    [0.5, 1.5],
    [2.5, 3.2],
  ];

  it('one speaker over the non-silent stretches; silence gives no speaker', async () => {
    const key = await uploaded(KEY, 'bursts.wav', bursts(4, spans));
    const r = await diar({ object_key: key });
    const [s] = r.body.data.speakers;
    expect(r.body.data.speakers).toHaveLength(1);
    expect(s.segments).toHaveLength(2);
    s.segments.forEach((g: any, i: number) => {
      expect(Math.abs(g.start_time - spans[i]![0])).toBeLessThan(0.1);
      expect(Math.abs(g.end_time - spans[i]![1])).toBeLessThan(0.1);
    });
    const silent = await uploaded(KEY, 'silent.wav', bursts(3, []));
    expect((await diar({ object_key: silent })).body.data.speakers).toEqual([]);
  });

  it('the diarization fixture by SHA-256 of the file wins over the energy detector', async () => {
    const bytes = bursts(4, spans);
    const dir = mkdtempSync(join(tmpdir(), 'diar-'));
    const rule = {
      sha256: createHash('sha256').update(bytes).digest('hex'),
      speakers: [
        { speaker_id: 'alice', segments: [{ start_time: 0.5, end_time: 1.5 }] },
        { speaker_id: 'bob', segments: [{ start_time: 2.5, end_time: 3.25 }] },
      ],
    };
    writeFileSync(join(dir, 'diarization.json'), JSON.stringify({ rules: [rule] }));
    const other = await startTestEmulator({ fixturesDir: dir });
    try {
      const objectKey = await uploaded(KEY, 'f.wav', bytes, other.platformUrl);
      const d = await diar({ object_key: objectKey }, KEY, other.platformUrl);
      expect(d.body.data.speakers).toEqual([
        { speaker_id: 'alice', total_dur: 1, segments: [{ start_time: 0.5, end_time: 1.5 }] },
        { speaker_id: 'bob', total_dur: 0.75, segments: [{ start_time: 2.5, end_time: 3.25 }] },
      ]);
    } finally {
      await other.close();
    }
  });
});

describe('request rules', () => {
  it('url wins over object_key when both are given', async () => {
    const key = await uploaded(KEY, 'both.wav', bursts(3, [[0.5, 1]]));
    const a = await diar({ object_key: key, url: 'https://cdn.emulator.test/audio/ref-5s.wav' });
    expect(a.body.error_code).toBe(0);
    const b = await diar({ object_key: key, url: 'https://nowhere.example.com/a.wav' });
    expect(b.body).toMatchObject({ error_code: 10001, succeed: false, data: null });
    expect(b.body.error_message).toMatch(/^url /);
  });

  it.each([
    [{}, 'one of object_key or url is required'],
    [{ object_key: 5 }, 'object_key must be a string'],
    [{ url: 'ftp://x.example.com/a.wav' }, 'url must be an http or https URL'],
    [{ url: 'http://localhost/a.wav' }, 'public'],
    [{ url: 'https://cdn.emulator.test/audio/broken.mp3' }, 'url '],
    [{ object_key: 'uploads/audio/nobody/x.wav' }, 'object_key does not name a file of this API key'],
  ])('%j → 10001 (%s) with HTTP 200', async (body, message) => {
    const r = await diar(body);
    expect([r.status, r.body.error_code]).toEqual([200, 10001]);
    expect(r.body.error_message).toContain(message);
  });

  it('type problems are reported in the operation’s own words, url first, and a body that is not an object is named', async () => {
    expect((await diar({ object_key: 5, url: 7 })).body.error_message).toBe('url must be a string');
    expect((await diar({ object_key: [] })).body.error_message).toBe('object_key must be a string');
    expect((await diar([1])).body.error_message).toBe('request body must be a JSON object');
    expect((await diar(null)).body.error_message).toBe('one of object_key or url is required');
    expect((await diar({ url: '  ', object_key: null })).body.error_message).toBe('one of object_key or url is required');
  });

  it("another account's object key is refused", async () => {
    const key = await uploaded('diar-owner', 'mine.wav', bursts(3, [[0.5, 1]]));
    expect((await diar({ object_key: key }, 'diar-owner')).body.error_code).toBe(0);
    const r = await diar({ object_key: key }, 'diar-stranger');
    expect(r.body).toMatchObject({ error_code: 10001, succeed: false });
  });

  it('key, capability, balance and faults; price per audio second', async () => {
    const body = { url: 'https://cdn.emulator.test/audio/ref-5s.wav' };
    expect((await diar(body, null)).body.error_code).toBe(10003);
    expect((await diar(body, 'emulator-tts-only-key')).body.error_code).toBe(10003);
    const broke = await diar(body, 'emulator-broke-key');
    expect([broke.status, broke.body.error_code]).toEqual([200, 20003]);
    const f = await call(`${emu.platformUrl}/v1/diarize`, { json: body, headers: { 'x-api-key': KEY, 'x-emulator-fault': 'code=10000' } });
    expect([f.status, f.body.error_code]).toEqual([200, 10000]);
    await ctl.putAccount('diar-paying', { balance_micro: 100_000 });
    const key = await uploaded('diar-paying', 'three.wav', bursts(3, [[0.5, 1]]));
    expect((await diar({ object_key: key }, 'diar-paying')).body.error_code).toBe(0);
    expect((await ctl.account('diar-paying')).body.balance_micro).toBe(100_000 - 3 * 500);
  });

  it('diarize() works without HTTP and throws PlatformError', async () => {
    const account = accountOf(KEY);
    const d = await diarize(emu.emulator, account, { url: 'https://cdn.emulator.test/audio/ref-5s.wav' });
    expect(d.speakers.length).toBe(1);
    await expect(diarize(emu.emulator, account, {})).rejects.toBeInstanceOf(PlatformError);
  });
});
