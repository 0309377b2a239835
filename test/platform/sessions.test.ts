import { describe, expect, it } from 'vitest';
import { appendTurn } from '../../src/services/platform/shared/conversation-sessions.js';
import { nonce, sessionsForFile } from './calls/calls-helpers.js';

const { emu, c } = sessionsForFile();

const sessionsOf = async (key: string) => (await c.stateOf(key)).resources.conversation_sessions as any[];

describe('REST conversation sessions', () => {
  it('creates a session for a role: session_id, voice_id, created_at (Unix seconds)', async () => {
    const now = (await c.ctl.clock()).body.now_ms as number;
    const r = await c.post('/api/v1/audio/sessions', { voice_id: 'storyteller' }, 'sessions-a');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ error_code: 0, error_message: '', succeed: true });
    expect(Object.keys(r.body.data).sort()).toEqual(['created_at', 'session_id', 'voice_id']);
    expect(r.body.data).toMatchObject({ voice_id: 'storyteller', created_at: Math.floor(now / 1000) });
    expect((await sessionsOf('sessions-a')).map((s) => s.session_id)).toEqual([r.body.data.session_id]);
  });

  it.each([
    [{}, 'voice_id'],
    [{ voice_id: '' }, 'voice_id'],
    [{ voice_id: 7 }, 'voice_id'],
    [{ voice_id: 'no_such_role' }, 'no_such_role'],
  ])('rejects %j with 20003', async (body, word) => {
    const r = await c.post('/api/v1/audio/sessions', body, 'sessions-a');
    expect(r.body).toMatchObject({ error_code: 20003, succeed: false, data: null });
    expect(r.body.error_message).toContain(word);
  });

  it('20001 without a key, on every operation of the group', async () => {
    expect((await c.post('/api/v1/audio/sessions', { voice_id: 'default' }, null)).body.error_code).toBe(20001);
    expect((await c.send('DELETE', '/api/v1/audio/sessions/x', null)).body.error_code).toBe(20001);
    expect((await c.send('GET', '/api/v1/audio/characters', null)).body.error_code).toBe(20001);
  });

  it('DELETE answers deleted: true, also for unknown ids; another key cannot delete it', async () => {
    const id = (await c.post('/api/v1/audio/sessions', { voice_id: 'default' }, 'sessions-d')).body.data.session_id;
    const other = await c.send('DELETE', `/api/v1/audio/sessions/${id}`, 'sessions-d2');
    expect(other.body).toEqual({ error_code: 0, error_message: '', succeed: true, data: { deleted: true } });
    expect((await sessionsOf('sessions-d')).length).toBe(1);
    expect((await c.send('DELETE', `/api/v1/audio/sessions/${id}`, 'sessions-d', { 'content-type': 'application/json' })).body.data).toEqual({ deleted: true });
    expect(await sessionsOf('sessions-d')).toEqual([]);
    expect((await c.send('DELETE', '/api/v1/audio/sessions/never-existed', 'sessions-d')).body.data).toEqual({ deleted: true });
  });

  it('DELETE without an id (or with `.`, which clients resolve to none) is a parameter error in the envelope at HTTP 200', async () => {
    for (const path of ['/api/v1/audio/sessions/', '/api/v1/audio/sessions/.']) {
      const r = await c.send('DELETE', path, 'sessions-d');
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ error_code: 20003, succeed: false });
      expect(r.body.error_message).toContain('session_id is required');
    }
  });

  it('a call started with previous_session_id of a REST session carries its turns', async () => {
    const key = 'sessions-p';
    const id = (await c.post('/api/v1/audio/sessions', { voice_id: 'default' }, key)).body.data.session_id;
    appendTurn(emu.emulator, emu.emulator.accounts.peek(key)!.id, id, { user: 'hello', reply: 'hi there' });
    const r = await c.post('/v1/audio/assistant/start', { client_nonce: nonce(), previous_session_id: id }, key);
    expect(r.body.error_code).toBe(0);
    expect((await c.stateOf(key)).resources.calls[0]).toMatchObject({ previous_session_id: id, carried_turns: 1 });
  });
});

describe('characters', () => {
  it('lists the roles of the fixture with id, name, language and description', async () => {
    const r = await c.send('GET', '/api/v1/audio/characters', 'sessions-c');
    expect(r.body).toMatchObject({ error_code: 0, succeed: true });
    const roles = emu.emulator.fixtures.data['roles.json'];
    expect(r.body.data.characters).toEqual(roles.map(({ id, name, language, description }) => ({ id, name, language, description })));
    expect(r.body.data.characters.map((x: any) => x.id)).toContain('default');
  });

  it('keeps the last 500 sessions of a key: the oldest go first, another key keeps its own', async () => {
    const other = (await c.post('/api/v1/audio/sessions', { voice_id: 'default' }, 'sessions-p2')).body.data.session_id;
    const ids: string[] = [];
    for (let i = 0; i < 502; i++) ids.push((await c.post('/api/v1/audio/sessions', { voice_id: 'default' }, 'sessions-p')).body.data.session_id);
    const kept = (await sessionsOf('sessions-p')).map((s) => s.session_id);
    expect(kept.sort()).toEqual(ids.slice(2).sort());
    expect((await sessionsOf('sessions-p2')).map((s) => s.session_id)).toEqual([other]);
  });
});
