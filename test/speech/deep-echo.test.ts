import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';

const { emu } = emulatorForFile();
const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
const headers = { authorization: 'Bearer deep-key', 'content-type': 'application/json' };
const post = (path: string, body: string) => call(`${emu.speechUrl}${path}`, { method: 'POST', headers, body });

describe('values nested thousands deep in id fields are parameter errors', () => {
  for (const [path, body, field] of [
    ['/v1/files/delete', `{"file_id":${deep(6000)}}`, 'file_id'],
    ['/v1/voice_clone', `{"file_id":123,"voice_id":"abcdefgh1","clone_prompt":{"prompt_audio":${deep(6000)},"prompt_text":"x"}}`, 'prompt_audio'],
    ['/v1/t2a_async_v2', `{"model":"speech-02-hd","text_file_id":${deep(6000)}}`, 'text_file_id'],
  ] as const) {
    it(`${path}: ${field} → 2013 naming the field, with a short picture of the value`, async () => {
      const r = await post(path, body);
      expect(r.status).toBe(200);
      expect(r.body.base_resp.status_code).toBe(2013);
      expect(r.body.base_resp.status_msg).toContain(field);
      expect(r.body.base_resp.status_msg).toMatch(/must be a positive integer id \(got \[\[\[/);
      expect(r.text.length).toBeLessThan(600);
    });
  }
});

describe('echoed values are bounded', () => {
  it('a 900 KB file_id gives a short answer that still names the field and the rule', async () => {
    const r = await post('/v1/files/delete', JSON.stringify({ file_id: '9'.repeat(900_000) }));
    expect(r.body.base_resp.status_code).toBe(2013);
    expect(r.body.base_resp.status_msg).toMatch(/file_id must be a positive integer id \(got "9{70,}…?"?…\)/);
    expect(r.text.length).toBeLessThan(600);
  });

  it('every other message quoting a value is capped at 1,024 characters', async () => {
    const r = await post('/v1/t2a_v2', JSON.stringify({ model: 'm'.repeat(500_000), text: 'hi', voice_setting: { voice_id: 'male-qn-qingse' } }));
    expect(r.body.base_resp.status_code).toBe(2013);
    expect(r.body.base_resp.status_msg.length).toBeLessThan(1100);
    expect(r.body.base_resp.status_msg).toMatch(/characters cut\)$/);
  });
});
