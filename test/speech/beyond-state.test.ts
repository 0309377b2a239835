import { run } from '../helpers/tools.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { control, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { codeOf, PANGRAM, resourcesOf, speechApi } from './beyond.js';

/** Files, made voices and async tasks in persistence, reset and the state view; the tar read by tar(1). */

async function waitReady(base: string, taskId: number): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const t = (await resourcesOf(base, 'speech-async', (ts) => ts.some((x) => x.task_id === taskId))).find((x) => x.task_id === taskId);
    if (t?.audio_ready) return t;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('task never made its audio');
}

describe('state of the speech operations', () => {
  const { emu } = emulatorForFile({ plane: 'speech', freeze: true });

  // A restart on one data dir: two emulators of its own, one after the other.
  it('a data dir keeps files, voices and tasks across a restart; the output tar reads with tar(1)', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'speech-beyond-'));
    try {
      const first = await startTestEmulator({ dataDir });
      const api = speechApi(first.speechUrl, 'persist-key');
      await control(first.speechUrl).freeze(true);
      const fileId = await api.uploadAudio('voice_clone', await api.audio(PANGRAM.repeat(4)));
      expect(codeOf(await api.post('/v1/voice_clone', { file_id: fileId, voice_id: 'PersistVoice1' }))).toBe(0);
      const task = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: 'Kept for later.', voice_setting: { voice_id: 'PersistVoice1' } });
      const made = await waitReady(first.speechUrl, task.body.task_id);
      await control(first.speechUrl).advance(made.ready_at_ms - made.created_at_ms);
      await first.close();

      const second = await startTestEmulator({ dataDir });
      try {
        const again = speechApi(second.speechUrl, 'persist-key');
        expect((await again.get('/v1/files/list?purpose=voice_clone')).body.files.map((f: any) => f.file_id)).toEqual([fileId]);
        expect((await again.get(`/v1/query/t2a_async_query_v2?task_id=${task.body.task_id}`)).body.status).toBe('Success');
        expect((await again.post('/v1/get_voice', { voice_type: 'voice_cloning' })).body.voice_cloning.map((v: any) => v.voice_id)).toEqual(['PersistVoice1']);
        expect(codeOf(await again.speak('PersistVoice1'))).toBe(0);
        const tar = (await again.getBytes(`/v1/files/retrieve_content?file_id=${task.body.file_id}`)).bytes;
        const file = join(dataDir, 'out.tar');
        writeFileSync(file, tar);
        const stdout = (await run('tar', ['-tf', file])).toString();
        const base = `${task.body.task_id}/content-${task.body.task_id}`;
        expect(stdout.trim().split('\n')).toEqual([`${base}.mp3`, `${base}.titles`, `${base}.extra`]);

        // Reset of the account drops all three.
        await control(second.speechUrl).reset('persist-key');
        expect((await again.get('/v1/files/list?purpose=voice_clone')).body.files).toEqual([]);
        expect(codeOf(await again.get(`/v1/query/t2a_async_query_v2?task_id=${task.body.task_id}`))).toBe(2013);
        expect(codeOf(await again.speak('PersistVoice1'))).toBe(2054);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('the state view shows made voices with their expiry until used', async () => {
    const api = speechApi(emu.speechUrl, 'state-key');
    const d = await api.post('/v1/voice_design', { prompt: 'A calm voice', preview_text: 'Hi.' });
    const items = await resourcesOf(emu.speechUrl, 'speech-custom-voices', (vs) => vs.some((v) => v.voice_id === d.body.voice_id));
    const v = items.find((x) => x.voice_id === d.body.voice_id);
    expect(v).toMatchObject({ kind: 'design', used: false });
    expect(v.expires_at_ms - v.created_at_ms).toBe(7 * 24 * 3600 * 1000);
  });
});
