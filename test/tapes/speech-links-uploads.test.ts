import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/index.js';
import { control } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { codeOf, PANGRAM, speechApi } from '../speech/beyond.js';
import { REAL_KEY, startRecorder, startReplayer, startUpstream, tapeDir, UPSTREAM_VOICE } from './helpers.js';

const urlBody = {
  model: 'speech-02-turbo',
  text: 'Fetch me from a link.',
  output_format: 'url',
  voice_setting: { voice_id: UPSTREAM_VOICE },
  audio_setting: { format: 'mp3', sample_rate: 24000 },
};

/** The suite a user records once: a URL answer and its download, an upload, a clone of it, the cloned voice speaking. */
async function suite(base: string, key: string) {
  const api = speechApi(base, key);
  const link = await api.post('/v1/t2a_v2', urlBody);
  const downloaded = Buffer.from(await (await fetch(link.body.data.audio)).arrayBuffer());
  const sample = await api.audio(PANGRAM.repeat(4));
  const upload = await api.upload('voice_clone', sample);
  const fileId = upload.body.file.file_id as number;
  const clone = await api.post('/v1/voice_clone', { file_id: fileId, voice_id: 'TapedVoice01' });
  const spoken = await api.speak('TapedVoice01');
  return { link, downloaded, upload, fileId, clone, spoken };
}

describe('tapes: download links, uploads and a voice clone, recorded then replayed', () => {
  const dir = tapeDir();
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let recorded: Awaited<ReturnType<typeof suite>>;
  let replayer: RunningEmulator;
  let replayed: Awaited<ReturnType<typeof suite>>;
  let upstreamLink = '';

  beforeAll(async () => {
    upstream = await startUpstream();
    const recorder = await startRecorder(dir, upstream.emu);
    try {
      recorded = await suite(recorder.speechUrl, REAL_KEY);
      upstreamLink = recorded.link.body.data.audio;
    } finally {
      await recorder.close();
      await upstream.close();
    }
    replayer = await startReplayer(dir);
    replayed = await suite(replayer.speechUrl, 'ci-key');
  }, 90_000);
  afterAll(async () => {
    await replayer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('recording: each call answered by the upstream', () => {
    expect(codeOf(recorded.link)).toBe(0);
    expect(upstreamLink.startsWith(upstream.emu.speechUrl)).toBe(true);
    expect(codeOf(recorded.upload)).toBe(0);
    expect(codeOf(recorded.clone)).toBe(0);
    expect(codeOf(recorded.spoken)).toBe(0);
  });

  it('a recorded download link is served by the replaying emulator, with the same bytes (the upstream is gone)', async () => {
    const link = replayed.link.body.data.audio as string;
    expect(link.startsWith(replayer.speechUrl)).toBe(true);
    expect(replayed.downloaded.equals(recorded.downloaded)).toBe(true);
    const probe = await ffprobe(replayed.downloaded);
    expect(probe.codec).toBe('mp3');
  });

  it('an uploaded file_id is fresh on replay, and the clone that names it matches the recorded one', () => {
    expect(codeOf(replayed.upload)).toBe(0);
    expect(typeof replayed.fileId).toBe('number');
    expect(replayed.fileId).not.toBe(recorded.fileId);
    expect(String(replayed.fileId).length).toBe(String(recorded.fileId).length);
    expect(codeOf(replayed.clone)).toBe(0);
    expect(codeOf(replayed.spoken)).toBe(0);
    expect(replayed.spoken.body.data.audio).toBe(recorded.spoken.body.data.audio);
  });

  it('the journal names the tape of each replayed call', async () => {
    const entries = (await control(replayer.speechUrl).journal({ limit: 20 })).body.entries as any[];
    const clone = entries.find((e) => e.path === '/v1/voice_clone');
    expect(clone.tape).toMatchObject({ mode: 'replayed' });
    expect(clone.tape.id).toMatch(/^speech-post-v1-voice-clone-/);
    const upload = entries.find((e) => e.path === '/v1/files/upload');
    expect(upload.tape.mode).toBe('replayed');
  });
});
