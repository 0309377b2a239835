/**
 * `@livekit/rtc-node` (LiveKit's Node SDK, on its Rust core and libwebrtc), unmodified, in the rooms of
 * calls and agent sessions: it connects with the start/create answer's URL and token, hears the bot's
 * greeting, publishes the emulator's own speech as a microphone, hears the reply, sees `lk.agent.state`
 * and the transcriptions, and is disconnected with LiveKit's ROOM_DELETED when the session ends.
 */
import {
  AudioFrame,
  AudioSource,
  AudioStream,
  dispose,
  LocalAudioTrack,
  Room,
  RoomEvent,
  TrackPublishOptions,
  TrackSource,
  type RemoteTrack,
} from '@livekit/rtc-node';
import { afterAll, describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { agentOp, createAgentSession, hear, keepAlive, micOf, RATE, startCall, stopCall, until, voicedMs } from './livekit-room-helpers.js';

const { emu, ctl } = emulatorForFile();
afterAll(() => dispose());

/** A client as an app writes one: it records the bot's track, its state and the transcriptions. */
class Client {
  readonly room = new Room();
  readonly pcm: Int16Array[] = [];
  readonly states: string[] = [];
  readonly transcripts: { text: string; final: boolean; track: string; from: string }[] = [];
  disconnected: number | null = null;

  constructor(private readonly botIdentity: string) {
    this.room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack, _pub, participant) => {
      if (participant.identity !== this.botIdentity) return;
      void this.record(new AudioStream(track, RATE, 1));
    });
    this.room.on(RoomEvent.ParticipantAttributesChanged, (changed, participant) => {
      if (participant.identity === this.botIdentity && changed['lk.agent.state']) this.states.push(changed['lk.agent.state']);
    });
    this.room.on(RoomEvent.Disconnected, (reason) => void (this.disconnected = reason));
    this.room.registerTextStreamHandler('lk.transcription', (reader, from) => {
      void reader.readAll().then((text) => {
        const a = reader.info.attributes ?? {};
        this.transcripts.push({ text, final: a['lk.transcription_final'] === 'true', track: a['lk.transcribed_track_id'] ?? '', from: from.identity });
      });
    });
  }

  private async record(stream: AudioStream): Promise<void> {
    for await (const frame of stream) this.pcm.push(frame.data.slice());
  }

  samples(): number {
    return this.pcm.reduce((n, f) => n + f.length, 0);
  }

  /** What was recorded from sample `from` on, as PCM16 bytes. */
  audio(from = 0): Buffer {
    const all = Buffer.concat(this.pcm.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength)));
    return all.subarray(from * 2);
  }

  finals(track: string) {
    return this.transcripts.filter((t) => t.final && t.track === track).map((t) => t.text);
  }

  /**
   * Speaks `pcm` into a published microphone track in real time, after `leadMs` of silence (a
   * microphone is live before the user talks; the publisher connection comes up meanwhile), then `tailMs` of silence.
   */
  async speak(pcm: Int16Array, leadMs = 1000, tailMs = 1500): Promise<void> {
    const source = new AudioSource(RATE, 1);
    const track = LocalAudioTrack.createAudioTrack('microphone', source);
    await this.room.localParticipant!.publishTrack(track, new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
    const all = new Int16Array(((leadMs + tailMs) * RATE) / 1000 + pcm.length);
    all.set(pcm, (leadMs * RATE) / 1000);
    for (let i = 0; i < all.length; i += 960) await source.captureFrame(new AudioFrame(all.slice(i, i + 960), RATE, 1, 960));
    await source.waitForPlayout();
  }

  async close(): Promise<void> {
    await this.room.disconnect();
  }
}

describe('@livekit/rtc-node in a call room', () => {
  it('hears the greeting, is answered, sees the agent state and the transcriptions, and leaves with ROOM_DELETED at stop', { timeout: 90_000 }, async () => {
    const key = 'room-node-call';
    const d = await startCall(emu, key, { timbre: 'english_tutor', language: 'en' });
    expect(d.rtc_url).toBe(emu.platformUrl.replace('http', 'ws'));
    const client = new Client(d.bot_identity);
    const stopBeats = keepAlive(emu, key, { call: d.session_id });
    try {
      await client.room.connect(d.rtc_url, d.token, { autoSubscribe: true, dynacast: false });
      expect(client.room.name).toBe(d.room_name);
      expect(client.room.localParticipant!.identity).toBe(d.identity);
      const bot = client.room.remoteParticipants.get(d.bot_identity)!;
      expect(bot).toBeDefined();
      const botTrack = [...bot.trackPublications.values()][0]!.sid!;

      // The greeting: the bot's own transcription, and its audio on the track.
      const greeting = "Hi! I'm your English tutor. What would you like to talk about today?";
      await until(() => client.finals(botTrack).includes(greeting), 'the greeting transcription');
      await until(() => client.states.at(-1) === 'listening' && client.states.includes('speaking'), 'listening after the greeting');
      const greetingAudio = client.audio();
      expect(voicedMs(greetingAudio)).toBeGreaterThan(2000);
      const heard = await hear(emu, greetingAudio);
      expect(heard.utterances.map((u) => u.full_text)).toContain(greeting);

      // An utterance of the emulator's own speech, published as the microphone.
      const said = 'What is the weather like today?';
      const mark = client.samples();
      await client.speak(await micOf(emu, said));
      await until(() => client.transcripts.some((t) => t.final && t.track !== botTrack && t.text === said), 'the user transcription');
      const replies = () => client.finals(botTrack).filter((t) => t !== '' && t !== greeting);
      await until(() => replies().length > 0 && client.states.at(-1) === 'listening', 'the reply', 30_000);
      expect(client.states).toEqual(expect.arrayContaining(['thinking', 'speaking', 'listening']));
      const reply = await hear(emu, client.audio(mark));
      expect(reply.utterances.map((u) => u.full_text)).toContain(replies()[0]);

      // Stop: LiveKit's leave for a deleted room (ROOM_DELETED = 5).
      await stopCall(emu, key, d.session_id);
      await until(() => client.disconnected !== null, 'the disconnect');
      expect(client.disconnected).toBe(5);
      const state = await ctl.accountState(key);
      expect(state.resources.rooms ?? []).toEqual([]);
    } finally {
      stopBeats();
      await client.close();
    }
  });

  it('the heartbeat timeout (emulator clock) ends the room', { timeout: 60_000 }, async () => {
    const key = 'room-node-timeout';
    const d = await startCall(emu, key);
    const client = new Client(d.bot_identity);
    try {
      await client.room.connect(d.rtc_url, d.token, { autoSubscribe: true, dynacast: false });
      await ctl.advance(30_001);
      await until(() => client.disconnected !== null, 'the disconnect');
      expect(client.disconnected).toBe(5);
      const hb = await call(`${emu.platformUrl}/v1/audio/assistant/heartbeat`, { json: { session_id: d.session_id }, headers: { 'x-api-key': key } });
      expect(hb.body.data.should_close).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('@livekit/rtc-node in an agent session room', () => {
  it('joins with wsUrl and userToken: the session goes in_call, the agent greets, end disconnects', { timeout: 60_000 }, async () => {
    const key = 'room-node-agent';
    const item = await createAgentSession(emu, key);
    expect((await agentOp(emu, key, 'check', item.sessionId)).status).toBe('connecting');
    const client = new Client('agent-agent_demo');
    try {
      await client.room.connect(item.wsUrl, item.userToken, { autoSubscribe: true, dynacast: false });
      expect(client.room.remoteParticipants.has('agent-agent_demo')).toBe(true);
      expect((await agentOp(emu, key, 'check', item.sessionId)).status).toBe('in_call');
      await until(() => client.states.includes('speaking') && client.states.at(-1) === 'listening', 'the greeting');
      const heard = await hear(emu, client.audio());
      expect(heard.utterances.length).toBeGreaterThan(0);
      expect(heard.utterances[0]!.complete).toBe(true);
      await agentOp(emu, key, 'end', item.sessionId);
      await until(() => client.disconnected !== null, 'the disconnect');
      expect(client.disconnected).toBe(5);
    } finally {
      await client.close();
    }
  });
});
