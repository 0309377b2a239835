/**
 * The app a browser test runs: `livekit-client` as published (its UMD bundle from node_modules, loaded
 * by a page of another origin), driven the way a web app drives it. It records the bot's track through
 * WebAudio as 48 kHz PCM, plays a microphone into a published track from a WebAudio source, and keeps
 * the agent's states, the transcriptions and the disconnect reason. Nothing of the library is patched.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';

/* Browser globals used inside page.evaluate (the project compiles without the DOM library). */
declare const window: any, AudioContext: any, AudioWorkletNode: any, MediaStream: any, document: any;

const require = createRequire(import.meta.url);
/** The bundle an app loads with a script tag (`LivekitClient` global), exactly as npm ships it. */
export const LIVEKIT_CLIENT_UMD = require.resolve('livekit-client'); // its `require` entry: dist/livekit-client.umd.js
export const LIVEKIT_CLIENT_VERSION = (JSON.parse(readFileSync(join(dirname(LIVEKIT_CLIENT_UMD), '..', 'package.json'), 'utf8')) as { version: string })
  .version;

export interface PageClientState {
  connected: boolean;
  roomName: string;
  identity: string;
  remoteIdentities: string[];
  botTrackSid: string;
  states: string[];
  transcripts: { text: string; final: boolean; track: string; from: string }[];
  disconnected: number | null;
  recordedSamples: number;
  errors: string[];
}

/** Loads the library into the page and installs `window.app` (the client). */
export async function installClient(page: Page): Promise<void> {
  await page.addScriptTag({ content: readFileSync(LIVEKIT_CLIENT_UMD, 'utf8') });
  await page.evaluate((TAP_WORKLET: string) => {
    const LK = window.LivekitClient;
    const RATE = 48_000;
    const app: any = {
      room: null,
      ctx: null,
      recorded: [] as Float32Array[],
      recordedSamples: 0,
      states: [] as string[],
      transcripts: [] as any[],
      disconnected: null as number | null,
      botTrackSid: '',
      errors: [] as string[],
      keep: [] as any[],
    };
    window.app = app;

    app.connect = async (url: string, token: string, botIdentity: string) => {
      app.ctx = new AudioContext({ sampleRate: RATE });
      await app.ctx.resume();
      await app.ctx.audioWorklet.addModule(URL.createObjectURL(new Blob([TAP_WORKLET], { type: 'text/javascript' })));
      const room = new LK.Room({ adaptiveStream: false, dynacast: false });
      app.room = room;
      room.on(LK.RoomEvent.TrackSubscribed, (track: any, pub: any, participant: any) => {
        if (participant.identity !== botIdentity || track.kind !== 'audio') return;
        app.botTrackSid = pub.trackSid;
        // A recording client asks for a deep jitter buffer (a standard receiver setting): on a busy test machine,
        // late packets are then waited for instead of being stretched over, which would smear what `hear` reads.
        app.receiver = track.receiver;
        // Chromium feeds a remote WebRTC track to WebAudio only while a media element plays it.
        const el = track.attach();
        el.muted = true;
        document.body.appendChild(el);
        // Captured on the audio thread (an AudioWorklet), so a busy page thread loses no sample.
        const source = app.ctx.createMediaStreamSource(new MediaStream([track.mediaStreamTrack]));
        const tap = new AudioWorkletNode(app.ctx, 'tap', { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
        tap.port.onmessage = (e: any) => {
          app.recorded.push(e.data);
          app.recordedSamples += e.data.length;
        };
        source.connect(tap);
        tap.connect(app.ctx.destination);
        app.keep.push(source, tap, el);
      });
      room.on(LK.RoomEvent.ParticipantAttributesChanged, (changed: any, participant: any) => {
        if (participant.identity === botIdentity && changed['lk.agent.state']) app.states.push(changed['lk.agent.state']);
      });
      room.on(LK.RoomEvent.Disconnected, (reason: number) => (app.disconnected = reason ?? -1));
      room.registerTextStreamHandler('lk.transcription', (reader: any, from: any) => {
        reader.readAll().then(
          (text: string) => {
            const a = reader.info.attributes ?? {};
            app.transcripts.push({ text, final: a['lk.transcription_final'] === 'true', track: a['lk.transcribed_track_id'] ?? '', from: from.identity });
          },
          (err: unknown) => app.errors.push(String(err)),
        );
      });
      await room.connect(url, token, { autoSubscribe: true });
    };

    app.state = () => ({
      connected: app.room?.state === 'connected',
      roomName: app.room?.name ?? '',
      identity: app.room?.localParticipant?.identity ?? '',
      remoteIdentities: app.room ? [...app.room.remoteParticipants.keys()] : [],
      botTrackSid: app.botTrackSid,
      states: app.states,
      transcripts: app.transcripts,
      disconnected: app.disconnected,
      recordedSamples: app.recordedSamples,
      errors: app.errors,
    });

    /** What was recorded from sample `from` on, as PCM16 little-endian, base64. */
    app.recording = (from: number) => {
      const all = new Int16Array(app.recordedSamples);
      let at = 0;
      for (const chunk of app.recorded) {
        for (let i = 0; i < chunk.length; i++) all[at++] = Math.max(-32768, Math.min(32767, Math.round(chunk[i] * 32767)));
      }
      const bytes = new Uint8Array(all.buffer, from * 2);
      let s = '';
      for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      return btoa(s);
    };

    /**
     * Publishes a microphone track fed by WebAudio and plays `pcm` (PCM16 48 kHz mono, base64) into it in real
     * time after `leadMs` of silence; resolves `tailMs` after the end.
     */
    app.speak = async (pcmBase64: string, leadMs: number, tailMs: number) => {
      const raw = atob(pcmBase64);
      const samples = new Int16Array(raw.length >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = ((raw.charCodeAt(2 * i) | (raw.charCodeAt(2 * i + 1) << 8)) << 16) >> 16;
      const dest = app.ctx.createMediaStreamDestination();
      const mic = dest.stream.getAudioTracks()[0];
      await app.room.localParticipant.publishTrack(mic, { source: LK.Track.Source.Microphone, name: 'microphone' });
      const buffer = app.ctx.createBuffer(1, samples.length, RATE);
      const ch = buffer.getChannelData(0);
      for (let i = 0; i < samples.length; i++) ch[i] = samples[i]! / 32768;
      const player = app.ctx.createBufferSource();
      player.buffer = buffer;
      player.connect(dest);
      app.keep.push(player, dest);
      player.start(app.ctx.currentTime + leadMs / 1000);
      await new Promise((resolve) => setTimeout(resolve, leadMs + (samples.length / RATE) * 1000 + tailMs));
    };

    /** The inbound RTP statistics of the bot's track (concealment, jitter buffer), for a failure's message. */
    app.stats = async () => {
      const out: any[] = [];
      (await app.receiver.getStats()).forEach((r: any) => {
        if (r.type === 'inbound-rtp') out.push(r);
      });
      return out;
    };

    app.disconnect = async () => {
      await app.room?.disconnect();
      await app.ctx?.close();
    };
  }, TAP_WORKLET);
}

/** An AudioWorklet processor that hands its input to the page in 100 ms chunks (channel 0). */
const TAP_WORKLET = `
class Tap extends AudioWorkletProcessor {
  constructor() { super(); this.buf = new Float32Array(4800); this.at = 0; }
  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    const n = ch ? ch.length : 128;
    for (let i = 0; i < n; i++) {
      this.buf[this.at++] = ch ? ch[i] : 0;
      if (this.at === this.buf.length) { this.port.postMessage(this.buf); this.buf = new Float32Array(4800); this.at = 0; }
    }
    return true;
  }
}
registerProcessor('tap', Tap);
`;

/** The client's state as the page sees it. */
export const clientState = (page: Page): Promise<PageClientState> => page.evaluate(() => window.app.state());

/**
 * What the page's jitter buffer did to the bot's track (Chromium's inbound-rtp statistics): a `hear` that misses
 * a signature on a machine that did not keep up shows concealed or stretched samples here.
 */
export async function receiverStats(page: Page): Promise<string> {
  const [r] = (await page.evaluate(() => window.app.stats())) as Record<string, number>[];
  if (!r) return 'no inbound-rtp statistics';
  const keys = [
    'packetsReceived',
    'packetsLost',
    'jitter',
    'concealedSamples',
    'silentConcealedSamples',
    'insertedSamplesForDeceleration',
    'removedSamplesForAcceleration',
  ];
  return keys.map((k) => `${k}=${r[k]}`).join(' ');
}

/** PCM16 of the bot's track recorded in the page, from sample `from` on. */
export async function recording(page: Page, from = 0): Promise<Buffer> {
  return Buffer.from(await page.evaluate((f: number) => window.app.recording(f), from), 'base64');
}
