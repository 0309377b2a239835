import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RateWindows } from '../../src/core/state/limits.js';
import { SignatureRecords, type SignatureRecord } from '../../src/core/state/signatures.js';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });

function record(id: string, textLength: number): SignatureRecord {
  const text = 'a'.repeat(textLength);
  return {
    id,
    kind: 'speech',
    text,
    speakers: [{ speaker: 0, voices: ['v'] }],
    segments: [{ text, startMs: 0, endMs: 1000 }],
    durationMs: 1000,
    createdAtMs: 0,
  };
}

// A full collection from inside the test (the emulator runs in this process): what stays is what is kept.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  return process.memoryUsage().heapUsed;
};

describe('what a long run leaves behind is bounded, and a reset drops it', () => {
  it('the journal keeps a large answer by its summary, not its text (no id read from it keeps the whole answer)', async () => {
    // An MP3 answer of about 13 s: some 400 KB of JSON with its hex audio, over the size the journal summarizes.
    const mp3 = () =>
      call(`${emu.speechUrl}/v1/t2a_v2`, {
        json: {
          model: 'speech-02-turbo',
          text: 'A short sentence to say, then another one after it. '.repeat(4),
          voice_setting: { voice_id: 'male-qn-qingse' },
          audio_setting: { format: 'mp3', sample_rate: 32000 },
        },
        headers: { authorization: 'Bearer memory-key' },
      });
    const first = await mp3();
    expect(first.body.base_resp.status_code).toBe(0);
    expect(first.text.length).toBeGreaterThan(200_000);
    for (let i = 0; i < 2; i++) await mp3();
    const before = await heapUsed();
    const n = 20;
    for (let i = 0; i < n; i++) expect((await mp3()).body.base_resp.status_code).toBe(0);
    const grown = (await heapUsed()) - before;
    // Each answer's entry stays in the journal (limit 1000) with its trace id: held as a view of the
    // answer, 20 answers kept 20 times the answer; copied, each entry is a few KB.
    expect(grown).toBeLessThan(first.text.length * 4);
    // The id still names the answer.
    const entry = emu.emulator.journal.list({ path: '/v1/t2a_v2' })[0];
    expect(entry?.response.summary).toMatchObject({ trace_id: expect.stringMatching(/^[0-9a-f-]{16,}$/) });
  }, 120_000);

  it('a socket entry keeps its frames by their names and bounded contents, not the frames a client sent', async () => {
    // A speech socket: task_start, then `count` pieces of 9,000 characters each (empty text: refused at
    // once, nothing is synthesized) and task_finish. The entry keeps up to 150 frames.
    const PAD = 9000;
    const socket = (count: number) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`${emu.speechUrl.replace('http', 'ws')}/ws/v1/t2a_v2`, { headers: { authorization: 'Bearer memory-key' } });
        let answers = 0;
        ws.on('message', (data) => {
          const event = JSON.parse(String(data)) as { event?: string };
          if (event.event === 'connected_success') ws.send(JSON.stringify({ event: 'task_start', model: 'speech-02-turbo', voice_setting: { voice_id: 'male-qn-qingse' } }));
          if (event.event === 'task_started') {
            for (let i = 0; i < count; i++) ws.send(JSON.stringify({ event: 'task_continue', text: '', padding: 'x'.repeat(PAD) }));
            ws.send(JSON.stringify({ event: 'task_finish' }));
          }
          answers += 1;
        });
        ws.on('close', () => resolve(answers));
        ws.on('error', reject);
      });
    expect(await socket(10)).toBeGreaterThan(2);
    const before = await heapUsed();
    const sockets = 4;
    const pieces = 150;
    for (let i = 0; i < sockets; i++) await socket(pieces);
    const grown = (await heapUsed()) - before;
    // Each event name read from a piece was a view of the whole piece: the entries kept 4 x 150 x 9 KB
    // (5.4 MB); copied, a frame keeps its name and 1 KB of its padding.
    expect(grown).toBeLessThan((sockets * pieces * PAD) / 3);
    const frames = emu.emulator.journal.list({ path: '/ws/v1/t2a_v2' })[0]!.ws_frames!;
    expect(frames.some((f) => f.dir === 'in' && f.event === 'task_continue')).toBe(true);
  }, 120_000);

  it('signature records are bounded by count and by total text, oldest out', () => {
    const byCount = new SignatureRecords(3, 1_000_000);
    for (let i = 0; i < 10; i++) byCount.put(record(`r${i}`, 10));
    expect(byCount.size()).toBe(3);
    expect(byCount.get('r9')).toBeDefined();
    expect(byCount.get('r6')).toBeUndefined();

    const byWeight = new SignatureRecords(1000, 50_000);
    for (let i = 0; i < 100; i++) byWeight.put(record(`w${i}`, 10_000));
    expect(byWeight.totalWeight()).toBeLessThanOrEqual(50_000);
    expect(byWeight.size()).toBe(2);
    expect(byWeight.get('w99')).toBeDefined();
    byWeight.put(record('w99', 10)); // a record put again replaces itself, weight included
    expect(byWeight.size()).toBe(2);
    byWeight.clear();
    expect(byWeight.size()).toBe(0);
    expect(byWeight.totalWeight()).toBe(0);
  });

  it('rate windows keep only keys with hits in them, and forget the accounts the sweep forgot', () => {
    let now = 0;
    const windows = new RateWindows(() => now);
    for (let i = 0; i < 1000; i++) expect(windows.hit(`acct${i}:speech:async-query`, 1000, 5).allowed).toBe(true);
    expect(windows.size).toBe(1000);
    // A window whose hits have all left it is dropped when next looked at.
    now = 5000;
    expect(windows.check('acct1:speech:async-query', 1000, 5).allowed).toBe(true);
    expect(windows.size).toBe(999);
    // Hits still count while inside their window.
    for (let i = 0; i < 5; i++) windows.hit('kept:speech:requests', 60_000, 5);
    expect(windows.hit('kept:speech:requests', 60_000, 5).allowed).toBe(false);
    windows.forgetAccounts(new Set(Array.from({ length: 1000 }, (_, i) => `acct${i}`)));
    expect(windows.size).toBe(1);
    expect(windows.check('kept:speech:requests', 60_000, 5).allowed).toBe(false);
  });

  it('a full reset drops the signature records and the journal', async () => {
    const res = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: { model: 'speech-02-turbo', text: 'Remember me.', voice_setting: { voice_id: 'male-qn-qingse' } },
      headers: { authorization: 'Bearer memory-key' },
    });
    expect(res.body.base_resp.status_code).toBe(0);
    expect((await ctl.state()).body.totals.signature_records).toBeGreaterThan(0);
    expect((await ctl.reset()).status).toBeLessThan(300);
    const after = (await ctl.state()).body;
    expect(after.totals.signature_records).toBe(0);
    expect(emu.emulator.journal.list().length).toBe(0);
  });
});
