// The speech sockets speak a piece with the speech engine as they send it, sentence by sentence (as
// HTTP's event stream does): the first audio message of a long `task_continue` leaves before Flite has
// spoken the piece's last sentence (counted in Flite's runs, never in time), the piece's bytes are those
// of the whole synthesis, and the journal's delivery figures count the audio the piece carried.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareSpeechEngine } from '../../src/audio/speech/engine.js';
import type { Flite } from '../../src/audio/speech/flite.js';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { BIDI_START, bidiClient, sentencesOf } from '../speech/bidi/bidi-helpers.js';
import { strictEvents } from '../speech/helpers.js';
import { KEY, piecesOf, session, START } from '../speech/ws/ws-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech', start: { voiceEngine: 'speech' } });
const PCM = { format: 'pcm', sample_rate: 16000 };
const SENTENCE = 'Every sentence of this piece is spoken in its turn, one after another. ';
/** A long piece whose last sentence Flite is given with "zebra" in it. */
const PIECE = SENTENCE.repeat(12) + 'Finally, the zebra closes this long piece of text.';

let flite: Flite;
let run: Flite['run'];
/** The text of each sentence run of Flite, and whether the client had seen the piece's first audio then. */
const runs: { said: string; afterFirstAudio: boolean }[] = [];
let firstAudioSeen = false;

beforeAll(async () => {
  flite = await prepareSpeechEngine();
  run = flite.run;
  flite.run = (args, input) => {
    const t = args.indexOf('-t');
    if (t >= 0) runs.push({ said: args[t + 1]!, afterFirstAudio: firstAudioSeen });
    return run.call(flite, args, input);
  };
});
afterAll(() => {
  if (flite) flite.run = run;
});

/** Clears the record of runs before one piece. */
function watch(): void {
  runs.length = 0;
  firstAudioSeen = false;
}

/** The run that spoke the last sentence: after the client had the piece's first audio. */
function expectLastSentenceAfterFirstAudio(): void {
  const last = runs.filter((r) => r.said.includes('zebra'));
  expect(last).toHaveLength(1);
  expect(runs.length).toBeGreaterThan(10);
  expect(last[0]!.afterFirstAudio).toBe(true);
}

async function wholeT2a(text: string, audio_setting: object) {
  const r = await call(`${emu.speechUrl}/v1/t2a_v2`, {
    json: { model: START.model, text, voice_setting: START.voice_setting, audio_setting },
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(r.body.base_resp.status_code, r.text.slice(0, 200)).toBe(0);
  return r.body;
}

describe('the speech socket streams a piece as it is spoken', () => {
  it("a long task_continue's first audio leaves before its last sentence is spoken; its PCM is the whole synthesis; the journal counts it", async () => {
    watch();
    const r = await session(emu.speechUrl, [{ ...START, audio_setting: PCM }, { event: 'task_continue', text: PIECE }, { event: 'task_finish' }], {
      onMessage: (m) => {
        if (m.event === 'task_continued' && m.data?.audio) firstAudioSeen = true;
      },
    });
    expectLastSentenceAfterFirstAudio();
    const [piece] = piecesOf(r.messages);
    expect(piece!.chunks).toBeGreaterThan(2);
    const whole = await wholeT2a(PIECE, PCM);
    expect(piece!.audio.toString('hex') === whole.data.audio).toBe(true);
    expect(piece!.extra.audio_length).toBe(whole.extra_info.audio_length);
    // The delivery figures: one answer, timed from its text, carrying the piece's whole audio.
    let entry: any;
    for (let i = 0; i < 200 && !entry?.delivery; i++) {
      entry = await ctl.lastEntry({ path: '/ws/v1/t2a_v2' });
      if (!entry?.delivery) await new Promise((res) => setTimeout(res, 25));
    }
    expect(entry.delivery.turns).toBeUndefined(); // one answer: its figures are the entry's
    expect(entry.delivery.first_audio_ms).toBeGreaterThan(0);
    expect(Math.abs(entry.delivery.audio_ms - whole.extra_info.audio_length)).toBeLessThanOrEqual(1);
    expect(entry.delivery.rtf).toBeGreaterThan(0);
    // What hear finds in the piece: the request's text, whole (the signature record got the final times).
    const heard = await call(`${emu.speechUrl}/_emulator/hear`, { method: 'POST', body: piece!.audio, headers: { 'content-type': 'audio/pcm;rate=16000' } });
    expect(heard.body.utterances.map((u: any) => [u.full_text, u.complete])).toEqual([[PIECE, true]]);
  }, 120_000);

  it('an MP3 piece is the HTTP stream of the same text, byte for byte, its length the decoded one; FLAC, stating its length up front, is spoken whole first', async () => {
    const mp3 = { format: 'mp3', sample_rate: 32000, bitrate: 128000 };
    const r = await session(emu.speechUrl, [{ ...START, audio_setting: mp3 }, { event: 'task_continue', text: PIECE }, { event: 'task_finish' }]);
    const [piece] = piecesOf(r.messages);
    const streamed = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: {
        model: START.model,
        text: PIECE,
        voice_setting: START.voice_setting,
        audio_setting: mp3,
        stream: true,
        stream_options: { exclude_aggregated_audio: true },
      },
      headers: { authorization: `Bearer ${KEY}` },
    });
    const http = strictEvents(streamed.text)
      .filter((e) => e.data?.status === 1)
      .map((e) => e.data.audio as string)
      .join('');
    expect(piece!.audio.toString('hex') === http).toBe(true);
    expect(Math.abs((await ffprobe(piece!.audio, { ext: 'mp3' })).durationMs - piece!.extra.audio_length)).toBeLessThanOrEqual(30);
    // FLAC: the header's total is the true one, so the piece is planned whole before its first audio.
    watch();
    const f = await session(
      emu.speechUrl,
      [{ ...START, audio_setting: { format: 'flac', sample_rate: 16000 } }, { event: 'task_continue', text: PIECE }, { event: 'task_finish' }],
      {
        onMessage: (m) => {
          if (m.event === 'task_continued' && m.data?.audio) firstAudioSeen = true;
        },
      },
    );
    expect(runs.every((x) => !x.afterFirstAudio)).toBe(true);
    const [flac] = piecesOf(f.messages);
    expect(Math.abs((await ffprobe(flac!.audio, { ext: 'flac' })).durationMs - flac!.extra.audio_length)).toBeLessThanOrEqual(1);
  }, 120_000);
});

describe('subtitles of a piece spoken as it is sent', () => {
  it("sentence subtitles ride with the audio that finished them, each once, with the whole answer's times, in more than one message", async () => {
    const r = await session(emu.speechUrl, [
      { ...START, audio_setting: PCM, subtitle_enable: true, subtitle_type: 'sentence' },
      { event: 'task_continue', text: PIECE },
      { event: 'task_finish' },
    ]);
    const audioMessages = r.messages.filter((m) => m.event === 'task_continued' && m.data?.audio);
    const subtitles = audioMessages.filter((m) => m.data.subtitle).map((m) => m.data.subtitle);
    expect(subtitles.length).toBeGreaterThan(1);
    const whole = await call(`${emu.speechUrl}/v1/t2a_v2`, {
      json: { model: START.model, text: PIECE, voice_setting: START.voice_setting, audio_setting: PCM, subtitle_enable: true },
      headers: { authorization: `Bearer ${KEY}` },
    });
    const segs = (await (await fetch(whole.body.data.subtitle_file)).json()) as any[];
    expect(subtitles.map((x) => x.text).join(' ')).toBe(segs.map((x) => x.text).join(' '));
    expect(subtitles[0].time_begin).toBe(segs[0].time_begin);
    expect(subtitles.at(-1).time_end).toBe(segs.at(-1).time_end);
    // Each subtitle came with audio that reached its end.
    let madeMs = 0;
    for (const m of audioMessages) {
      madeMs += (m.data.audio.length / 2 / 2 / 16000) * 1000;
      if (m.data.subtitle) expect(m.data.subtitle.time_end).toBeLessThanOrEqual(madeMs + 1);
    }
  }, 60_000);
});

describe('the bidirectional socket streams its sentences as they are spoken', () => {
  it('a sentence of 180 characters: its first audio leaves before its end is spoken; its PCM is the whole synthesis', async () => {
    // No comma: the socket's buffer keeps it one sentence (it cuts clauses at commas), the engine speaks it in runs of 50 characters.
    const text =
      'This one sentence runs on without a comma and without a full stop and it keeps going on and on for a long while so that the engine speaks it in several runs before the zebra closes it';
    expect(text.length).toBeGreaterThan(180);
    watch();
    const c = await bidiClient(emu.speechUrl);
    c.ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.event === 'task_continued' && m.data?.audio) firstAudioSeen = true;
    });
    c.send({ ...BIDI_START, audio_setting: PCM });
    await c.waitFor((m) => m.event === 'task_started');
    c.send({ event: 'task_continue', text: text + '.' });
    c.send({ event: 'task_flush' });
    await c.waitFor((m) => m.event === 'sentence_end');
    c.send({ event: 'task_finish' });
    await c.closed;
    const last = runs.filter((x) => x.said.includes('zebra'));
    expect(last).toHaveLength(1);
    expect(runs.length).toBeGreaterThanOrEqual(4);
    expect(last[0]!.afterFirstAudio).toBe(true);
    const sentences = sentencesOf(c.messages);
    expect(sentences).toHaveLength(1);
    const [sentence] = sentences;
    const whole = await wholeT2a(text + '.', PCM);
    expect(sentence!.audio.toString('hex') === whole.data.audio).toBe(true);
  }, 60_000);
});
