import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { control, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { req, t2a } from '../speech/helpers.js';

const NEW_VOICE = { voice_id: 'fixture-voice', name: 'Fixture', language: 'en', gender: 'female' };

async function voiceCode(speechUrl: string): Promise<number> {
  return (await t2a(speechUrl, req({ voice_setting: { voice_id: NEW_VOICE.voice_id } }), { key: 'fx-key' })).body.base_resp.status_code;
}

describe('fixtures at run time', () => {
  for (const token of [undefined, 'fx-token']) {
    describe(`control token ${token ? 'on' : 'off'}`, () => {
      const { emu, ctl } = emulatorForFile({ start: token ? { controlToken: token } : {} });
      it(`GET lists them; PUT validates like the start-up files and applies at once; reset keeps them unless ?fixtures=true (token ${token ? 'on' : 'off'})`, async () => {
        const list = await ctl.call('GET', '/fixtures');
        expect(list.status).toBe(200);
        const names = list.body.fixtures.map((f: { name: string }) => f.name);
        expect(names).toContain('speech-voices.json');
        expect(names).toContain('accounts.json');
        const voices = (await ctl.call('GET', '/fixtures/speech-voices.json')).body;
        expect(voices.source).toMatch(/fixtures[/\\]speech-voices\.json$/);
        expect(await voiceCode(emu.speechUrl)).toBe(2054);

        // a bad file is refused naming the field, and the old one stays
        const bad = await ctl.call('PUT', '/fixtures/speech-voices.json', [...voices.content, { voice_id: 'half' }]);
        expect(bad.status).toBe(400);
        expect(bad.body.error.message).toMatch(/speech-voices\.json: field \d+\.name/);
        expect((await ctl.call('GET', '/fixtures/speech-voices.json')).body.content).toEqual(voices.content);
        expect((await ctl.call('PUT', '/fixtures/nothing.json', [])).status).toBe(404);
        const billing = await ctl.call('PUT', '/fixtures/billing.json', { prices_micro: {} });
        expect(billing.status).toBe(400);
        expect(billing.body.error.message).toMatch(/field prices_micro\.speech_character/);

        const put = await ctl.call('PUT', '/fixtures/speech-voices.json', [...voices.content, NEW_VOICE]);
        expect(put.status, put.text).toBe(200);
        expect(put.body.source).toBe('run time');
        expect(await voiceCode(emu.speechUrl)).toBe(0);

        // accounts: listed keys get the new settings now; keys are never shown in full
        const acc = await ctl.call('PUT', '/fixtures/accounts.json', [{ key: 'fx-listed-key', project: 'from-fixture', capabilities: ['tts'] }]);
        expect(acc.status, acc.text).toBe(200);
        expect(JSON.stringify(acc.body)).not.toContain('fx-listed-key');
        expect((await ctl.account('fx-listed-key')).body).toMatchObject({ project: 'from-fixture', capabilities: ['tts'] });

        expect((await ctl.reset()).status).toBe(200);
        expect(await voiceCode(emu.speechUrl)).toBe(0);
        const restored = await ctl.call('POST', '/reset?fixtures=true');
        expect(restored.body).toEqual({ reset: 'all', fixtures_restored: ['speech-voices.json', 'accounts.json'] });
        expect(await voiceCode(emu.speechUrl)).toBe(2054);
        expect((await ctl.account('fx-listed-key')).body.project).toBe('default');
        expect((await ctl.call('GET', '/fixtures/speech-voices.json')).body.source).toMatch(/speech-voices\.json$/);
        expect((await ctl.call('POST', '/reset?fixtures=maybe')).status).toBe(400);
        if (token) expect((await control(emu.platformUrl).call('GET', '/fixtures')).status).toBe(401);
      });
    });
  }

  describe('remote-audio.json files stay in the fixtures folder', () => {
    const { ctl } = emulatorForFile();
    it('a file path that leaves the folder is refused with 400 naming the entry; the old file stays', async () => {
      const before = (await ctl.call('GET', '/fixtures/remote-audio.json')).body.content;
      for (const file of ['../../../../etc/passwd', '/etc/passwd', 'remote/../../outside.mp3', 'remote\\..\\..\\x.mp3']) {
        const put = await ctl.call('PUT', '/fixtures/remote-audio.json', [...before, { url: 'https://example.com/a.mp3', file }]);
        expect(put.status, file).toBe(400);
        expect(put.body.error.message).toContain(`remote-audio.json: field ${before.length}.file: must be a path inside the fixtures folder`);
      }
      expect((await ctl.call('GET', '/fixtures/remote-audio.json')).body.content).toEqual(before);
      const inside = await ctl.call('PUT', '/fixtures/remote-audio.json', [...before, { url: 'https://example.com/b.mp3', file: 'remote/ref-5s.wav' }]);
      expect(inside.status).toBe(200);
    });
  });

  // A restart on the same data dir: two emulators, one after the other, started here.
  it('fixtures set at run time are saved with the state of a data dir', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fx-data-'));
    try {
      const first = await startTestEmulator({ dataDir });
      const voices = (await control(first.speechUrl).call('GET', '/fixtures/speech-voices.json')).body.content;
      expect((await control(first.speechUrl).call('PUT', '/fixtures/speech-voices.json', [...voices, NEW_VOICE])).status).toBe(200);
      await first.close();
      const second = await startTestEmulator({ dataDir });
      try {
        expect((await control(second.speechUrl).call('GET', '/fixtures/speech-voices.json')).body.source).toBe('run time');
        expect(await voiceCode(second.speechUrl)).toBe(0);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
