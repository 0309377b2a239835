import wavefile from 'wavefile';
import { describe, expect, it } from 'vitest';
import { Journal } from '../../src/core/journal/journal.js';
import { call, control, emulatorForFile } from '../helpers/emulator.js';
import { connect, flush, sendFrames, silencePcm, spokenPcm, wsUrl } from '../platform/conversation/conversation-helpers.js';

const { WaveFile } = wavefile;
const STT = '/v1/speech-to-text/stream';
const CONVERSATION = '/api/v1/audio/conversation/stream';

/** Decodes a WAV download: rate, channels, bit depth and the PCM16 bytes. */
function decodeWav(bytes: Buffer): { rate: number; channels: number; bits: string; pcm: Buffer } {
  const wav = new WaveFile(bytes);
  const fmt = wav.fmt as { sampleRate: number; numChannels: number };
  const samples = wav.getSamples(false, Int16Array) as unknown as Int16Array;
  return { rate: fmt.sampleRate, channels: fmt.numChannels, bits: wav.bitDepth, pcm: Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength) };
}

async function entryOf(base: string, path: string, token?: string) {
  const j = await control(base, token).journal({ path });
  return j.body.entries[0];
}

async function download(base: string, url: string, token?: string) {
  const r = await fetch(base + url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: r.status, type: r.headers.get('content-type'), bytes: Buffer.from(await r.arrayBuffer()) };
}

describe('audio a client streamed over a socket', () => {
  for (const token of [undefined, 'audio-token']) {
    describe(`control token ${token ? 'on' : 'off'}`, () => {
      const { emu, ctl } = emulatorForFile({ start: token ? { controlToken: token } : {} });
      it(`recognition and conversation sockets: kept per journal entry, downloadable as PCM16 mono WAV, dropped on reset (token ${token ? 'on' : 'off'})`, async () => {
        const { pcm } = await spokenPcm(emu.emulator, 'Keep what I said.');
        const c = await connect(wsUrl(emu.platformUrl, STT, 'audio-key'));
        c.sendJson({ meta: { audio_format: 'pcm_16000', language: 'en' } });
        // odd frame sizes: the WAV still holds whole samples, byte for byte what was sent
        await sendFrames(c.ws, pcm, 3201);
        await flush(c.ws);
        c.sendJson({ is_final: true });
        await c.closed;
        const entry = await entryOf(emu.platformUrl, STT, token);
        expect(entry.client_audio).toEqual({ bytes: pcm.length, sample_rate: 16000, truncated: false, url: `/_emulator/journal/${entry.id}/audio.wav` });
        const wav = await download(emu.platformUrl, entry.client_audio.url, token);
        expect(wav.status).toBe(200);
        expect(wav.type).toBe('audio/wav');
        const decoded = decodeWav(wav.bytes);
        expect(decoded).toMatchObject({ rate: 16000, channels: 1, bits: '16' });
        expect(decoded.pcm.equals(pcm.subarray(0, pcm.length - (pcm.length % 2)))).toBe(true);
        if (token) expect((await download(emu.platformUrl, entry.client_audio.url)).status).toBe(401);
        // the same entry on the speech listener's control plane; an entry without audio is a clear 404
        expect((await download(emu.speechUrl, entry.client_audio.url, token)).status).toBe(200);
        const plain = await call(`${emu.platformUrl}/nothing`);
        expect(plain.status).toBe(404);
        const other = await entryOf(emu.platformUrl, '/nothing', token);
        const none = await download(emu.platformUrl, `/_emulator/journal/${other.id}/audio.wav`, token);
        expect(none.status).toBe(404);
        expect(none.bytes.toString()).toMatch(/no client audio/);

        const conv = await connect(wsUrl(emu.platformUrl, CONVERSATION, 'audio-key'));
        conv.sendJson({ meta: { voice_id: 'support_agent', audio_format: 'pcm16', language: 'en' } });
        const sent = Buffer.concat([pcm, silencePcm(200)]);
        await sendFrames(conv.ws, sent);
        await flush(conv.ws);
        conv.ws.close();
        await conv.closed;
        const convEntry = await entryOf(emu.platformUrl, CONVERSATION, token);
        expect(convEntry.client_audio.bytes).toBe(sent.length);
        expect(decodeWav((await download(emu.platformUrl, convEntry.client_audio.url, token)).bytes).pcm.equals(sent)).toBe(true);

        await ctl.reset();
        expect((await download(emu.platformUrl, entry.client_audio.url, token)).status).toBe(404);
      });
    });
  }

  describe('with a journal of two entries', () => {
    const { emu } = emulatorForFile({ start: { journalLimit: 2 } });
    it('the audio leaves with its entry when the journal drops it', async () => {
      const c = await connect(wsUrl(emu.platformUrl, STT, 'audio-key'));
      c.sendJson({ meta: { audio_format: 'pcm_16000' } });
      await sendFrames(c.ws, silencePcm(300));
      await flush(c.ws);
      c.ws.close();
      await c.closed;
      const entry = await entryOf(emu.platformUrl, STT);
      expect((await download(emu.platformUrl, entry.client_audio.url)).status).toBe(200);
      await call(`${emu.platformUrl}/a`);
      await call(`${emu.platformUrl}/b`);
      expect((await download(emu.platformUrl, entry.client_audio.url)).status).toBe(404);
    });
  });

  it('bounded: a per-entry cap (marked truncated) and a total cap (the oldest audio goes first)', () => {
    const journal = new Journal(10, { entry: 100, total: 250 });
    const start = () => journal.start({ at_ms: 0, service: 'platform', method: 'GET', path: STT, account: null, request: { headers: {} }, response: {} });
    const a = start();
    journal.keepAudio(a, Buffer.alloc(80, 1), 16000);
    journal.keepAudio(a, Buffer.alloc(80, 1), 16000);
    expect(a.client_audio).toMatchObject({ bytes: 100, truncated: true });
    expect(journal.audioOf(a.id)!.pcm.length).toBe(100);
    const b = start();
    journal.keepAudio(b, Buffer.alloc(100, 2), 16000);
    const c = start();
    journal.keepAudio(c, Buffer.alloc(100, 3), 16000);
    expect(journal.audioOf(a.id)).toBeUndefined();
    expect(a.client_audio).toBeUndefined();
    expect(journal.audioOf(b.id)!.pcm.length).toBe(100);
    expect(journal.audioOf(c.id)!.pcm[0]).toBe(3);
  });
});
