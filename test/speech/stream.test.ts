import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { frameAt } from '../../src/audio/encode/mp3.js';
import { emulatorForFile } from '../helpers/emulator.js';
import { flacTest, mp3Frames, req, strictEvents, t2a } from './helpers.js';
import { ffprobe } from '../helpers/ffprobe.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech' });
let url: string;

beforeAll(() => {
  url = emu.speechUrl;
});

const TEXT = 'Streaming speech arrives in pieces. Each piece is a whole frame, and the last one says how long it all was.';

async function open(body: Record<string, unknown>, key = 'speech-stream-key', headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${url}/v1/t2a_v2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

/** Reads a body until it ends or the connection breaks; says which. */
async function readAll(res: Response): Promise<{ text: string; broken: boolean }> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, broken: false };
      text += dec.decode(value, { stream: true });
    }
  } catch {
    return { text, broken: true };
  }
}

/** Checks the A1 framing of a complete stream and returns intermediate audio pieces and the final chunk. */
function checkFraming(text: string) {
  const events = strictEvents(text);
  expect(events.length).toBeGreaterThanOrEqual(2);
  const inter = events.slice(0, -1);
  const last = events[events.length - 1];
  const traceId = last.trace_id;
  expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  for (const e of inter) {
    expect(Object.keys(e)).toEqual(['data', 'trace_id', 'base_resp']); // no extra_info key at all
    expect(e.data).toEqual({ audio: e.data.audio, status: 1, ced: '' });
    expect(e.data.audio).toMatch(/^[0-9a-f]+$/);
    expect(e.base_resp).toEqual({ status_code: 0, status_msg: '' });
    expect(e.trace_id).toBe(traceId);
  }
  expect(last.data.status).toBe(2);
  expect(last.extra_info).toBeTypeOf('object');
  expect(last.base_resp.status_code).toBe(0);
  for (const line of text.split('\n\n').slice(0, -2)) expect(line.length).toBeLessThanOrEqual(32 * 1024);
  expect(text.split('data:').length - 1).toBe(events.length); // "data:" only as the prefix of each event
  return { pieces: inter.map((e) => Buffer.from(e.data.audio, 'hex')), last, events };
}

describe('streaming framing (addendum A1)', () => {
  it('MP3: text/event-stream, whole frames per chunk, final chunk with extra_info and the aggregated file', async () => {
    const res = await open(req({ stream: true, audio_setting: { sample_rate: 32000, format: 'mp3' } }, TEXT));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const { text } = await readAll(res);
    const { pieces, last } = checkFraming(text);
    expect(res.headers.get('trace-id')).toBe(last.trace_id);
    expect(pieces.length).toBeGreaterThan(3);
    // Each piece starts on a frame and its frames add up to its length: it also ends on a frame boundary.
    for (const p of pieces) expect(mp3Frames(p).reduce((a, f) => a + f.len, 0)).toBe(p.length);
    const whole = Buffer.concat(pieces);
    expect(last.data.audio).toBe(whole.toString('hex'));
    expect(last.extra_info).toMatchObject({ audio_format: 'mp3', audio_sample_rate: 32000, audio_channel: 1, bitrate: 128000, audio_size: whole.length });
    const p = await ffprobe(whole, { ext: 'mp3' });
    expect(Math.abs(p.durationMs - last.extra_info.audio_length)).toBeLessThanOrEqual(37);
    expect(last.extra_info.usage_characters).toBeGreaterThan(50);
  });

  it('PCM stereo: chunks of whole sample frames, each line well under 32 KiB', async () => {
    const res = await open(req({ stream: true, audio_setting: { sample_rate: 44100, format: 'pcm', channel: 2 } }, TEXT));
    const { pieces, last } = checkFraming((await readAll(res)).text);
    for (const p of pieces) expect(p.length % 4).toBe(0);
    const whole = Buffer.concat(pieces);
    expect(last.extra_info).toMatchObject({ audio_format: 'pcm', audio_channel: 2, audio_size: whole.length });
    expect(last.extra_info.audio_length).toBe(Math.round((whole.length / 4 / 44100) * 1000));
  });

  it('every format: event audio is at most 12 KiB cut on frame boundaries; an MP3 piece decodes on its own', async () => {
    const long = `${TEXT} ${TEXT} ${TEXT}`;
    for (const [format, sample_rate, channel] of [
      ['mp3', 44100, 2],
      ['flac', 44100, 2],
      ['pcm', 44100, 2],
    ] as const) {
      const res = await open(req({ stream: true, audio_setting: { sample_rate, format, channel, bitrate: 256000 } }, long));
      const { pieces, last } = checkFraming((await readAll(res)).text);
      expect(pieces.length, format).toBeGreaterThan(5);
      for (const p of pieces) expect(p.length, format).toBeLessThanOrEqual(12 * 1024);
      if (format === 'pcm') for (const p of pieces) expect(p.length % 4).toBe(0);
      if (format === 'flac') for (const p of pieces.slice(1)) expect(p.readUInt16BE(0)).toBe(0xfff8); // a frame sync
      if (format === 'mp3') {
        for (const p of pieces) {
          let at = 0;
          while (at < p.length) {
            const f = frameAt(p, at)!;
            expect(f.mainDataBegin).toBe(0); // no bit reservoir: nothing borrowed from an earlier piece
            at += f.len;
          }
          expect(at).toBe(p.length);
        }
        const middle = pieces[Math.floor(pieces.length / 2)]!;
        const frames = mp3Frames(middle).length;
        expect((await ffprobe(middle, { ext: 'mp3' })).durationMs).toBeCloseTo((frames * 1152 * 1000) / 44100, 0);
      }
      expect(last.extra_info.audio_size).toBe(Buffer.concat(pieces).length);
    }
  });

  it('FLAC: the aggregated file passes flac -t and matches extra_info', async () => {
    const res = await open(req({ stream: true, audio_setting: { sample_rate: 22050, format: 'flac' } }, 'Lossless streaming.'));
    const { last } = checkFraming((await readAll(res)).text);
    const file = Buffer.from(last.data.audio, 'hex');
    await flacTest(file);
    const p = await ffprobe(file, { ext: 'flac' });
    expect(p).toMatchObject({ sampleRate: 22050, channels: 1 });
    expect(Math.abs(p.durationMs - last.extra_info.audio_length)).toBeLessThanOrEqual(1);
  });

  it('the stream parses with eventsource-parser (a parser no one here wrote) to the same events', async () => {
    const res = await open(req({ stream: true, audio_setting: { format: 'mp3', sample_rate: 16000 } }, 'Parsed by others.'));
    const { text } = await readAll(res);
    const seen: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (e) => seen.push(e) });
    for (let i = 0; i < text.length; i += 777) parser.feed(text.slice(i, i + 777)); // arbitrary network splits
    const strict = strictEvents(text);
    expect(seen.length).toBe(strict.length);
    seen.forEach((e, i) => {
      expect(e.event).toBeUndefined();
      expect(e.id).toBeUndefined();
      expect(JSON.parse(e.data)).toEqual(strict[i]);
    });
    expect('extra_info' in JSON.parse(seen[seen.length - 1]!.data)).toBe(true);
  });

  it('exclude_aggregated_audio leaves the final audio empty; non-streaming-only options are ignored', async () => {
    const body = req({ stream: true, stream_options: { exclude_aggregated_audio: true }, audio_setting: { format: 'pcm', sample_rate: 16000 } }, 'Short one.');
    const { last, pieces } = checkFraming((await readAll(await open(body))).text);
    expect(last.data.audio).toBe('');
    const plain = Buffer.concat(pieces);
    // subtitle_enable now streams subtitles (rule E16, subtitles-http.test.ts); the others stay ignored.
    const extras = { ...body, output_format: 'url', aigc_watermark: true, audio_setting: { format: 'pcm', sample_rate: 16000 } };
    const r = checkFraming((await readAll(await open(extras))).text);
    expect(r.last.data.subtitle_file).toBeUndefined();
    expect(Buffer.concat(r.pieces).equals(plain)).toBe(true); // no watermark, hex not url
    expect(r.last.data.audio).toBe('');
  });

  it('force_cbr is accepted for streaming mp3; voice_modify applies to streaming mp3 only', async () => {
    const base = { stream: true, audio_setting: { format: 'mp3', sample_rate: 16000, force_cbr: true } };
    const a = checkFraming((await readAll(await open(req(base, 'Robot voice')))).text).last.data.audio;
    const b = checkFraming((await readAll(await open(req({ ...base, voice_modify: { sound_effects: 'robotic' } }, 'Robot voice')))).text).last.data.audio;
    expect(a).not.toBe(b);
    const pcm = { stream: true, audio_setting: { format: 'pcm', sample_rate: 16000 } };
    const c = checkFraming((await readAll(await open(req(pcm, 'Robot voice')))).text).last.data.audio;
    const d = checkFraming((await readAll(await open(req({ ...pcm, voice_modify: { sound_effects: 'robotic' } }, 'Robot voice')))).text).last.data.audio;
    expect(c).toBe(d);
  });

  it('errors before audio are plain JSON, not an event stream', async () => {
    const r = await t2a(url, req({ stream: true, audio_setting: { format: 'wav' } }));
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.base_resp.status_code).toBe(2013);
    const f = await t2a(url, req({ stream: true }), { headers: { 'x-emulator-fault': 'code=1002' } });
    expect(f.headers.get('content-type')).toMatch(/^application\/json/);
    expect(f.body.base_resp.status_code).toBe(1002);
    expect(f.headers.get('trace-id')).toBe(f.body.trace_id);
  });

  it('key, balance, voice and invisible-character errors of a streaming request are plain JSON too', async () => {
    const stream = { stream: true, audio_setting: { format: 'mp3', sample_rate: 16000 } };
    const cases: [Record<string, unknown>, string | null, number][] = [
      [req(stream), null, 1004],
      [req(stream), 'emulator-broke-key', 1008],
      [req({ ...stream, voice_setting: { voice_id: 'nobody-here' } }), 'speech-stream-key', 2054],
      [req(stream, 'Hello\u0001\u0002\u0003'), 'speech-stream-key', 1042],
    ];
    for (const [body, key, code] of cases) {
      const r = await t2a(url, body, { key });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.body.base_resp.status_code).toBe(code);
      expect(r.headers.get('trace-id')).toBe(r.body.trace_id);
    }
  });

  it('a failure while setting up the synthesis is a plain JSON 1000, not a stream left hanging', async () => {
    const signatures = emu.emulator.signatures;
    const put = signatures.put;
    signatures.put = () => {
      throw new Error('signature store failed');
    };
    try {
      const res = await open(
        req({ stream: true, audio_setting: { format: 'pcm', sample_rate: 8000 } }, 'Set up fails'),
        'speech-setup-key',
        {},
        AbortSignal.timeout(5000),
      );
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await res.json()) as any;
      expect(body.base_resp).toEqual({ status_code: 1000, status_msg: 'unknown error' });
      expect(res.headers.get('trace-id')).toBe(body.trace_id);
    } finally {
      signatures.put = put;
    }
  });
});

describe('streaming while synthesizing', () => {
  it('a stream reports fault fields it never takes and a malformed fault header, as other answers do', async () => {
    const body = req({ stream: true, audio_setting: { format: 'pcm', sample_rate: 8000 } }, 'Hi');
    const closeWs = await open(body, 'speech-stream-key', { 'x-emulator-fault': 'close_ws=4000' });
    await closeWs.text();
    expect(closeWs.headers.get('x-emulator-fault-ignored')).toBe('close_ws');
    const bad = await open(body, 'speech-stream-key', { 'x-emulator-fault': 'cut_after=1' });
    checkFraming(await bad.text());
    expect(bad.headers.get('x-emulator-fault-ignored')).toMatch(/^X-Emulator-Fault: /);
  });

  it('cut_after_chunks=2 breaks the connection after exactly two events', async () => {
    const res = await open(req({ stream: true, audio_setting: { format: 'mp3', sample_rate: 16000 } }, TEXT), 'speech-cut-key', {
      'x-emulator-fault': 'cut_after_chunks=2',
    });
    const { text, broken } = await readAll(res);
    expect(broken).toBe(true);
    const events = strictEvents(text);
    expect(events.length).toBe(2);
    expect(events.every((e) => e.data.status === 1)).toBe(true);
    const j = await ctl.journal({ path: '/v1/t2a_v2', limit: 1 });
    expect(j.body.entries[0].chunks).toBe(2);
    expect(j.body.entries[0].note).toBe('connection cut after 2 chunks (fault)');
    const none = await open(req({ stream: true }, 'Cut at once'), 'speech-cut-key', { 'x-emulator-fault': 'cut_after_chunks=0' });
    const zero = await readAll(none);
    expect(zero).toEqual({ text: '', broken: true });
  });

  it('the first chunk of a 9,999-character text leaves at once; a client that leaves stops the synthesis', async () => {
    const long = 'Stream me now. '.repeat(667).slice(0, 9_999);
    const ac = new AbortController();
    const res = await open(req({ stream: true, audio_setting: { format: 'mp3', sample_rate: 16000 } }, long), 'speech-leaver', {}, ac.signal);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^data: \{"data":\{"audio":"fff/);
    // About 11 minutes of audio: the first event does not wait for it; the synthesis is still running.
    const during = (await ctl.state()).body.accounts.flatMap((a: any) => a.resources?.speech?.streams ?? []);
    expect(during.some((s: any) => s.status === 'streaming')).toBe(true);
    ac.abort();
    let streams: any[] = [];
    for (let i = 0; i < 100; i++) {
      const state = await ctl.state();
      const acct = state.body.accounts.find(
        (a: any) => a.resources?.speech?.streams?.length && a.resources.speech.requests === 1 && a.resources.speech.usage_characters > 5000,
      );
      streams = acct?.resources.speech.streams ?? [];
      if (streams[0] && streams[0].status !== 'streaming') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(streams[0].status).toBe('aborted');
    expect(streams[0].events).toBeLessThan(200); // far fewer than the whole text would make
  });

  it('a non-streaming client that leaves stops its synthesis too', async () => {
    const long = 'Leave early please. '.repeat(500).slice(0, 9_999);
    const ac = new AbortController();
    const pending = open(req({ audio_setting: { format: 'mp3', sample_rate: 44100, channel: 2 } }, long), 'speech-quitter', {}, ac.signal).catch(() => null);
    await new Promise((r) => setTimeout(r, 300));
    ac.abort();
    await pending;
    let note: string | undefined;
    for (let i = 0; i < 250 && !note; i++) {
      const j = await ctl.journal({ path: '/v1/t2a_v2', account: 'speech-quitter', limit: 1 });
      note = j.body.entries[0]?.note;
      if (!note) await new Promise((r) => setTimeout(r, 20));
    }
    expect(note).toBe('client disconnected before the answer');
  });
});
