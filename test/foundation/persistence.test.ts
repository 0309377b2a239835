// A restart on one data dir is the subject: each test starts its emulators one after the other.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, control, startTestEmulator } from '../helpers/emulator.js';
import { upload } from '../platform/tts-helpers.js';

/**
 * With a data dir, what clients stored survives a restart: uploads, custom voices (usable in synthesis,
 * reference links working), podcasts (links and object keys), T2A download links and session records.
 */
const dir = mkdtempSync(join(tmpdir(), 'emulator-persist-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'persist-key';
const h = { 'x-api-key': KEY };

describe('a data dir keeps every area across a restart', () => {
  it('uploads, voices, podcasts, speech links and call sessions come back', async () => {
    const ref = readFileSync(join(import.meta.dirname, '../../fixtures/remote/ref-5s.wav'));
    let first = await startTestEmulator({ dataDir: dir });
    const up = await upload(first.platformUrl, KEY, ref, { name: 'ref.wav' });
    expect(up.body.succeed).toBe(true);
    const objectKey = up.body.data.object_key as string;
    const save = await call(`${first.platformUrl}/v1/voice/save`, {
      headers: h,
      json: { voice_id: 'kept_voice', ref_audio: objectKey, ref_text: 'hello there' },
    });
    expect(save.body.succeed).toBe(true);
    const pod = await call(`${first.platformUrl}/v1/audio/podcast`, { headers: h, json: { dialogueText: 'Hello and welcome.\nThanks for having me.' } });
    expect(pod.body.succeed).toBe(true);
    const t2a = await call(`${first.speechUrl}/v1/t2a_v2`, {
      headers: { authorization: `Bearer ${KEY}` },
      json: { model: 'speech-02-hd', text: 'Kept for later.', voice_setting: { voice_id: 'kept_voice' }, output_format: 'url' },
    });
    expect(t2a.body.base_resp.status_code).toBe(0);
    const call1 = await call(`${first.platformUrl}/v1/audio/assistant/start`, { headers: h, json: { client_nonce: '8b9d7c1e-3f4a-4b5c-9d6e-7f8091a2b3c4' } });
    expect(call1.body.succeed).toBe(true);
    await first.close();

    const second = await startTestEmulator({ dataDir: dir });
    first = second;
    try {
      const list = await call(`${second.platformUrl}/v1/voice/list`, { headers: h });
      expect(list.body.data.list.map((v: { voice_id: string }) => v.voice_id)).toEqual(['kept_voice']);
      expect((await fetch(list.body.data.list[0].voice_url)).status).toBe(200);
      // the restored voice still synthesizes, on both services
      const tts = await fetch(`${second.platformUrl}/v1/text-to-speech`, {
        method: 'POST',
        headers: { ...h, 'content-type': 'application/json' },
        body: JSON.stringify({ voice_id: 'kept_voice', generate_text: 'Still here.' }),
      });
      expect(tts.status).toBe(200);
      expect((await tts.arrayBuffer()).byteLength).toBeGreaterThan(44);
      // links handed out before the restart still download (same path and signature; the test's
      // listeners are on new free ports, where fixed ports would keep the whole URL)
      const moved = (url: string, base: string) => base + new URL(url).pathname + new URL(url).search;
      expect((await fetch(moved(pod.body.data.audioUrl, second.platformUrl))).status).toBe(200);
      expect((await fetch(moved(t2a.body.data.audio, second.speechUrl))).status).toBe(200);
      // object keys still resolve for their owner
      const dia = await call(`${second.platformUrl}/v1/diarize`, { headers: h, json: { object_key: pod.body.data.objectKey } });
      expect(dia.body.data.speakers).toHaveLength(2);
      const again = await call(`${second.platformUrl}/v1/voice/save`, {
        headers: h,
        json: { voice_id: 'second_voice', ref_audio: objectKey, ref_text: 'hello there' },
      });
      expect(again.body.succeed).toBe(true);
      // the call session is still known: a heartbeat answers for it
      const hb = await call(`${second.platformUrl}/v1/audio/assistant/heartbeat`, { headers: h, json: { session_id: call1.body.data.session_id } });
      expect(hb.body.succeed).toBe(true);
    } finally {
      await second.close();
    }
  });

  it('the clock never runs backwards across a restart: moved ahead, it goes on from the time it was saved at', async () => {
    const clockDir = mkdtempSync(join(tmpdir(), 'emulator-clock-'));
    try {
      const first = await startTestEmulator({ dataDir: clockDir });
      await control(first.speechUrl).advance(10 * 24 * 3600 * 1000);
      const saved = (await control(first.speechUrl).clock()).body.now_ms as number;
      await first.close();
      const second = await startTestEmulator({ dataDir: clockDir });
      try {
        const now = (await control(second.speechUrl).clock()).body.now_ms as number;
        expect(now).toBeGreaterThanOrEqual(saved);
        expect(now - saved).toBeLessThan(60_000);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(clockDir, { recursive: true, force: true });
    }
  });
});
