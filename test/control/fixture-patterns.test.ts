/**
 * A backtracking pattern in a fixture used to freeze every listener: `^(a+)+$` was accepted by
 * `PUT /_emulator/fixtures/conversation.json`, and a 31-character text then held the event loop 5.5 s,
 * doubling per character. Patterns now run on a linear-time engine (core/state/patterns.ts); what it
 * cannot read (backreferences, lookaround) is refused at PUT and at start, naming the rule.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { connect, wsUrl } from '../platform/conversation/conversation-helpers.js';

const TEXT_PATH = '/api/v1/audio/conversation/stream-text';
const { emu, ctl } = emulatorForFile();

const rulesWith = (match: string, reply = 'matched the pattern') => ({
  rules: [{ match, reply, language: 'en' }],
  defaults: [{ reply: 'no rule matched', language: 'en' }],
});

describe('fixture patterns run in linear time', () => {
  test('^(a+)+$ against 31 characters answers at once, and other clients are answered meanwhile', async () => {
    const original = (await ctl.call('GET', '/fixtures/conversation.json')).body.content;
    try {
      expect((await ctl.call('PUT', '/fixtures/conversation.json', rulesWith('^(a+)+$'))).status).toBe(200);
      // 30 a's and a '!': with backtracking 5.5 s or more of a frozen event loop (doubling per character); linear, microseconds.
      const c = await connect(wsUrl(emu.platformUrl, TEXT_PATH, 'pattern-key'));
      const started = performance.now();
      c.sendJson({ voice_id: 'english_tutor', audio_format: 'pcm16', text_input: `${'a'.repeat(30)}!` });
      // The health check is answered while the reply is chosen and made.
      const health = await ctl.health();
      const healthMs = performance.now() - started;
      await c.closed;
      expect(health.status).toBe(200);
      expect(healthMs).toBeLessThan(2500);
      expect(c.events().at(-1)).toMatchObject({ type: 'done', reply_text: 'no rule matched' });
      // And the pattern still matches what it should.
      const m = await connect(wsUrl(emu.platformUrl, TEXT_PATH, 'pattern-key'));
      m.sendJson({ voice_id: 'english_tutor', audio_format: 'pcm16', text_input: 'aaaa' });
      await m.closed;
      expect(m.events().at(-1)).toMatchObject({ type: 'done', reply_text: 'matched the pattern' });
    } finally {
      await ctl.call('PUT', '/fixtures/conversation.json', original);
    }
  }, 60_000);

  test.each([
    ['a backreference', '(a)\\1'],
    ['a lookahead', 'hello(?=!)'],
    ['a broken pattern', '(unclosed'],
  ])('%s is refused at PUT, naming the rule, and the fixture stays as it was', async (_what, match) => {
    const before = (await ctl.call('GET', '/fixtures/conversation.json')).body.content;
    const put = await ctl.call('PUT', '/fixtures/conversation.json', rulesWith(match));
    expect(put.status).toBe(400);
    expect(put.body.error.message).toMatch(/rules\.0\.match/);
    expect(put.body.error.message).toMatch(/linear-time engine/);
    expect((await ctl.call('GET', '/fixtures/conversation.json')).body.content).toEqual(before);
  });

  test('a fixtures folder with such a pattern stops the start with one line naming the file and the rule', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fixture-patterns-'));
    writeFileSync(join(dir, 'conversation.json'), JSON.stringify(rulesWith('(?<=x)y')));
    await expect(startTestEmulator({ fixturesDir: dir })).rejects.toThrow(/conversation\.json: field rules\.0\.match: is not a pattern/);
  });
});
