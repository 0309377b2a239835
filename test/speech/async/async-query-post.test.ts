import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../../helpers/emulator.js';
import { codeOf, msgOf, resourcesOf, speechApi } from '../beyond.js';

/** `POST /v1/query/t2a_async_query_v2` with `{task_id}` answers exactly like the GET (rule E19). */
const { emu, ctl } = emulatorForFile({ plane: 'speech', freeze: true });
const HOUR = 3600 * 1000;

async function madeTask(taskId: number): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const t = (await resourcesOf(emu.speechUrl, 'speech-async', (ts) => ts.some((x) => x.task_id === taskId))).find((x) => x.task_id === taskId);
    if (t?.audio_ready) return t;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the task never finished its audio');
}

/** The answer without its trace id (each call has its own). */
const sameBut = (a: any) => {
  const { trace_id, ...rest } = a.body;
  expect(a.headers.get('trace-id')).toBe(trace_id);
  return { status: a.status, body: rest };
};

describe('async query by POST', () => {
  it('Processing, Success and Expired, with task_id as an integer or a string, equal the GET answers', async () => {
    const api = speechApi(emu.speechUrl, 'async-post');
    const c = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: 'Polled by post.', voice_setting: { voice_id: 'female-shaonv' } });
    const id = c.body.task_id as number;
    const both = async () => {
      const get = sameBut(await api.get(`/v1/query/t2a_async_query_v2?task_id=${id}`));
      expect(sameBut(await api.post('/v1/query/t2a_async_query_v2', { task_id: id }))).toEqual(get);
      expect(sameBut(await api.post('/v1/query/t2a_async_query_v2', { task_id: String(id) }))).toEqual(get);
      return get.body;
    };
    expect(await both()).toEqual({ task_id: id, status: 'Processing', file_id: c.body.file_id, base_resp: { status_code: 0, status_msg: 'success' } });
    const task = await madeTask(id);
    await ctl.advance(task.ready_at_ms - (await ctl.clock()).body.now_ms);
    expect((await both()).status).toBe('Success');
    await ctl.advance(9 * HOUR);
    expect((await both()).status).toBe('Expired');
  });

  it('refusals are the GET refusals: missing, malformed, unknown or foreign task_id, a body that is not an object', async () => {
    const owner = speechApi(emu.speechUrl, 'async-post-owner');
    const other = speechApi(emu.speechUrl, 'async-post-other');
    const id = (await owner.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: 'Mine.', voice_setting: { voice_id: 'female-shaonv' } })).body.task_id;
    const pairs: [string, unknown][] = [
      ['', {}],
      ['?task_id=abc', { task_id: 'abc' }],
      ['?task_id=123456789', { task_id: 123456789 }],
      [`?task_id=${id}`, { task_id: id }],
    ];
    for (const [query, body] of pairs) {
      const get = await other.get(`/v1/query/t2a_async_query_v2${query}`);
      const post = await other.post('/v1/query/t2a_async_query_v2', body);
      expect(codeOf(post)).toBe(2013);
      expect(sameBut(post)).toEqual(sameBut(get));
    }
    expect(msgOf(await other.post('/v1/query/t2a_async_query_v2', {}))).toBe('invalid params, task_id is required');
    const notObject = await other.post('/v1/query/t2a_async_query_v2', [id]);
    expect([notObject.status, codeOf(notObject), msgOf(notObject)]).toEqual([200, 2013, 'invalid params, request body must be a JSON object']);
    const noKey = await speechApi(emu.speechUrl, null).post('/v1/query/t2a_async_query_v2', { task_id: id });
    expect(codeOf(noKey)).toBe(1004);
  });
});

describe('async query by POST on both listeners, with faults', () => {
  it('the backup listener answers it; a fault code is answered in the speech shape before the body is read', async () => {
    const primary = speechApi(emu.speechUrl, 'async-post-backup');
    const backup = speechApi(emu.speechBackupUrl, 'async-post-backup');
    const id = (await primary.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: 'Both.', voice_setting: { voice_id: 'female-shaonv' } })).body.task_id;
    const viaBackup = await backup.post('/v1/query/t2a_async_query_v2', { task_id: String(id) });
    expect([codeOf(viaBackup), viaBackup.body.task_id, viaBackup.body.status]).toEqual([0, id, 'Processing']);
    const faulted = await primary.post('/v1/query/t2a_async_query_v2', { task_id: id }, { 'x-emulator-fault': 'code=1002' });
    expect([faulted.status, codeOf(faulted)]).toEqual([200, 1002]);
    const broken = await primary.raw('/v1/query/t2a_async_query_v2', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"task_id":' });
    expect([broken.status, codeOf(broken)]).toEqual([200, 2013]);
  });
});
