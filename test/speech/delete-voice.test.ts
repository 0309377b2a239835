import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { control, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { codeOf, msgOf, resourcesOf, speechApi } from './beyond.js';
import { ffprobe } from '../helpers/ffprobe.js';
import { piecesOf, session, START } from './ws/ws-helpers.js';

/** `POST /v1/delete_voice` (speech-current.md section 3, E11). */
const { emu, ctl } = emulatorForFile({ plane: 'speech', freeze: true });

const nowMs = async () => (await ctl.clock()).body.now_ms as number;
const design = (api: ReturnType<typeof speechApi>, voiceId?: string) =>
  api.post('/v1/voice_design', { prompt: 'A warm, calm female narrator', preview_text: 'Hello.', ...(voiceId ? { voice_id: voiceId } : {}) });

describe('delete_voice', () => {
  it('bad input is HTTP 200 with 2013 naming the field and its rule', async () => {
    const api = speechApi(emu.speechUrl, 'delete-bad');
    const cases: [unknown, string][] = [
      [{ voice_id: 'SomeVoice01' }, 'invalid params, voice_type is required'],
      [
        { voice_type: 'system', voice_id: 'SomeVoice01' },
        'invalid params, voice_type must be one of voice_cloning, voice_generation (only cloned and designed voices can be deleted)',
      ],
      [{ voice_type: 'voice_cloning' }, 'invalid params, voice_id is required'],
      [{ voice_type: 'voice_cloning', voice_id: 42 }, 'invalid params, voice_id must be a string'],
      [{ voice_type: 'voice_cloning', voice_id: '' }, 'invalid params, voice_id must not be empty'],
      [[], 'invalid params, request body must be a JSON object'],
    ];
    for (const [body, message] of cases) {
      const r = await api.post('/v1/delete_voice', body);
      expect([r.status, codeOf(r), msgOf(r)]).toEqual([200, 2013, message]);
      expect(r.headers.get('trace-id')).toBe(r.body.trace_id);
    }
    const raw = await api.raw('/v1/delete_voice', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"voice_type":' });
    expect([raw.status, codeOf(raw)]).toEqual([200, 2013]);
    expect(codeOf(await speechApi(emu.speechUrl, null).post('/v1/delete_voice', { voice_type: 'voice_cloning', voice_id: 'x' }))).toBe(1004);
    const fault = await api.post('/v1/delete_voice', { voice_type: 'voice_cloning', voice_id: 'x' }, { 'x-emulator-fault': 'code=1000' });
    expect([codeOf(fault), msgOf(fault)]).toEqual([1000, 'unknown error']);
  });

  it('refusals are 2013 naming voice_id: a system voice, an unknown id, another account voice, the wrong voice_type', async () => {
    const owner = speechApi(emu.speechUrl, 'delete-owner');
    const other = speechApi(emu.speechUrl, 'delete-other');
    expect(codeOf(await owner.clone('OwnersVoice01'))).toBe(0);
    const expectRefused = async (api: ReturnType<typeof speechApi>, body: unknown, message: string) => {
      const r = await api.post('/v1/delete_voice', body);
      expect([r.status, codeOf(r), msgOf(r)]).toEqual([200, 2013, message]);
    };
    await expectRefused(
      owner,
      { voice_type: 'voice_cloning', voice_id: 'Chinese (Mandarin)_Lyrical_Voice' },
      'invalid params, voice_id Chinese (Mandarin)_Lyrical_Voice is a system voice; only cloned and designed voices can be deleted',
    );
    await expectRefused(
      owner,
      { voice_type: 'voice_cloning', voice_id: 'NoSuchVoice01' },
      'invalid params, voice_id NoSuchVoice01 is not a cloned or designed voice of this account',
    );
    await expectRefused(
      other,
      { voice_type: 'voice_cloning', voice_id: 'OwnersVoice01' },
      'invalid params, voice_id OwnersVoice01 is not a cloned or designed voice of this account',
    );
    await expectRefused(
      owner,
      { voice_type: 'voice_generation', voice_id: 'OwnersVoice01' },
      'invalid params, voice_id OwnersVoice01 is a cloned voice: delete it with voice_type voice_cloning',
    );
    expect(codeOf(await owner.speak('OwnersVoice01'))).toBe(0); // nothing was deleted
  });

  it('deletes a used cloned voice: created_time in Unix seconds, gone from get_voice, 2054 in synthesis, the id taken until reset (2039)', async () => {
    const api = speechApi(emu.speechUrl, 'delete-clone');
    const created = await nowMs();
    expect(codeOf(await api.clone('GoneVoice001'))).toBe(0);
    expect(codeOf(await api.speak('GoneVoice001'))).toBe(0);
    expect((await api.post('/v1/get_voice', { voice_type: 'voice_cloning' })).body.voice_cloning.map((v: any) => v.voice_id)).toEqual(['GoneVoice001']);
    await ctl.advance(5000);

    const r = await api.post('/v1/delete_voice', { voice_type: 'voice_cloning', voice_id: 'GoneVoice001' });
    expect([r.status, codeOf(r)]).toEqual([200, 0]);
    expect(r.body).toEqual({
      voice_id: 'GoneVoice001',
      created_time: String(Math.floor(created / 1000)),
      trace_id: r.body.trace_id,
      base_resp: { status_code: 0, status_msg: 'success' },
    });

    expect((await api.post('/v1/get_voice', { voice_type: 'all' })).body.voice_cloning).toEqual([]);
    const spoken = await api.speak('GoneVoice001');
    expect([codeOf(spoken), msgOf(spoken)]).toEqual([2054, 'voice id not exist: voice_setting.voice_id GoneVoice001']);
    expect(codeOf(await api.post('/v1/delete_voice', { voice_type: 'voice_cloning', voice_id: 'GoneVoice001' }))).toBe(2013);
    // Never again: not by this account, not by another, not by voice design.
    expect(codeOf(await api.clone('GoneVoice001'))).toBe(2039);
    expect(codeOf(await speechApi(emu.speechUrl, 'delete-clone-other').clone('GoneVoice001'))).toBe(2039);
    expect(codeOf(await design(api, 'GoneVoice001'))).toBe(2039);

    // The state view shows the tombstone; a reset of the account frees the id.
    const items = await resourcesOf(emu.speechUrl, 'speech-custom-voices', (vs) => vs.some((v) => v.voice_id === 'GoneVoice001'));
    expect(items.find((v) => v.voice_id === 'GoneVoice001')).toMatchObject({ kind: 'clone', deleted_at_ms: created + 5000, expires_at_ms: null });
    await ctl.reset('delete-clone');
    expect(codeOf(await api.clone('GoneVoice001'))).toBe(0);
  });

  it('deletes a designed voice, also one never used (not yet listed), on the backup listener too', async () => {
    const api = speechApi(emu.speechBackupUrl, 'delete-design');
    const unused = await design(api);
    expect(codeOf(unused)).toBe(0);
    const id = unused.body.voice_id as string;
    expect(codeOf(await api.post('/v1/delete_voice', { voice_type: 'voice_cloning', voice_id: id }))).toBe(2013);
    const r = await api.post('/v1/delete_voice', { voice_type: 'voice_generation', voice_id: id });
    expect([codeOf(r), r.body.voice_id]).toEqual([0, id]);
    expect(codeOf(await api.speak(id))).toBe(2054);
    // A designed voice can also be cloned-style: a custom id.
    expect(codeOf(await design(api, 'DesignedGone1'))).toBe(0);
    expect(codeOf(await api.speak('DesignedGone1'))).toBe(0);
    expect(codeOf(await api.post('/v1/delete_voice', { voice_type: 'voice_generation', voice_id: 'DesignedGone1' }))).toBe(0);
    expect((await api.post('/v1/get_voice', { voice_type: 'voice_generation' })).body.voice_generation).toEqual([]);
  });

  it('a socket started before the deletion keeps its voice; one started after gets 2054', async () => {
    const api = speechApi(emu.speechUrl, 'delete-socket');
    expect(codeOf(await api.clone('SocketVoice01'))).toBe(0);
    const start = { ...START, voice_setting: { voice_id: 'SocketVoice01' } };
    let deleted: any;
    const kept = await session(emu.speechUrl, [start], {
      key: 'delete-socket',
      onMessage: (msg, ws) => {
        if (msg.event !== 'task_started') return;
        void api.post('/v1/delete_voice', { voice_type: 'voice_cloning', voice_id: 'SocketVoice01' }).then((r) => {
          deleted = r;
          ws.send(JSON.stringify({ event: 'task_continue', text: 'Still speaking after the deletion.' }));
          ws.send(JSON.stringify({ event: 'task_finish' }));
        });
      },
    });
    expect(codeOf(deleted)).toBe(0);
    expect(kept.messages.map((m) => m.base_resp.status_code).every((c) => c === 0)).toBe(true);
    const [piece] = piecesOf(kept.messages);
    const p = await ffprobe(piece!.audio, { ext: 'mp3' });
    expect(Math.abs(p.durationMs - piece!.extra.audio_length)).toBeLessThan(60);

    const later = await session(emu.speechUrl, [start, { event: 'task_continue', text: 'Hello.' }], { key: 'delete-socket' });
    const failed = later.messages.find((m) => m.event === 'task_failed');
    expect([failed.base_resp.status_code, failed.base_resp.status_msg]).toEqual([2054, 'voice id not exist: voice_setting.voice_id SocketVoice01']);
  });

  it('an async task created before the deletion keeps its voice; one created after is 2054', async () => {
    const api = speechApi(emu.speechUrl, 'delete-async');
    expect(codeOf(await api.clone('AsyncVoice001'))).toBe(0);
    const body = { model: 'speech-02-hd', text: 'Read this later, please.', voice_setting: { voice_id: 'AsyncVoice001' } };
    const before = await api.post('/v1/t2a_async_v2', body);
    expect(codeOf(before)).toBe(0);
    expect(codeOf(await api.post('/v1/delete_voice', { voice_type: 'voice_cloning', voice_id: 'AsyncVoice001' }))).toBe(0);
    expect(codeOf(await api.post('/v1/t2a_async_v2', body))).toBe(2054);
    let status = '';
    for (let i = 0; i < 200 && status !== 'Success'; i++) {
      await ctl.advance(1000);
      status = (await api.get(`/v1/query/t2a_async_query_v2?task_id=${before.body.task_id}`)).body.status;
      if (status !== 'Success') await new Promise((r) => setTimeout(r, 25));
    }
    expect(status).toBe('Success');
  });

  it('tombstones survive a restart on a data dir', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'delete-voice-'));
    try {
      const first = await startTestEmulator({ dataDir });
      const api = speechApi(first.speechUrl, 'delete-persist');
      expect(codeOf(await api.clone('PersistGone01'))).toBe(0);
      expect(codeOf(await api.post('/v1/delete_voice', { voice_type: 'voice_cloning', voice_id: 'PersistGone01' }))).toBe(0);
      await first.close();
      const second = await startTestEmulator({ dataDir });
      try {
        const again = speechApi(second.speechUrl, 'delete-persist');
        expect(codeOf(await again.speak('PersistGone01'))).toBe(2054);
        expect(codeOf(await again.clone('PersistGone01'))).toBe(2039);
        await control(second.speechUrl).reset();
        expect(codeOf(await again.clone('PersistGone01'))).toBe(0);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
