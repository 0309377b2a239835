import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../../helpers/emulator.js';
import { codeOf, PANGRAM, speechApi } from '../beyond.js';

/** A clock move waits for the async work in flight when it began, not for work that keeps arriving. */
const { emu, ctl } = emulatorForFile({ plane: 'speech', freeze: true });
const VOICE = { voice_id: 'female-shaonv' };
/** How long the clients keep going at most: a move that waited for all their work would answer only after. */
const CLIENTS_FOR_MS = 40_000;

describe('clock moves and async tasks', () => {
  it('a move while clients keep creating tasks answers before they stop, and the task due before it reads Success', async () => {
    const first = speechApi(emu.speechUrl, 'move-first');
    const c = await first.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: `${PANGRAM} ${PANGRAM}`, voice_setting: VOICE });
    expect(codeOf(c), c.text).toBe(0);

    let moveAnswered = false;
    let clientsFinished = 0;
    const client = async (n: number) => {
      const api = speechApi(emu.speechUrl, `move-busy-${n}`);
      const until = Date.now() + CLIENTS_FOR_MS;
      for (let i = 0; !moveAnswered && Date.now() < until; i++) {
        const r = await api.post('/v1/t2a_async_v2', { model: 'speech-02-hd', text: `${PANGRAM} Client ${n}, task ${i}.`, voice_setting: VOICE });
        expect(codeOf(r), r.text).toBe(0);
        await new Promise((r) => setTimeout(r, 20));
      }
      clientsFinished++;
    };
    const clients = [0, 1].map(client);
    // let the clients get going, so work keeps starting while the move waits
    await new Promise((r) => setTimeout(r, 200));
    const move = await ctl.advance(60_000);
    moveAnswered = true;
    expect(move.status).toBe(200);
    expect(clientsFinished).toBe(0); // the move did not wait for work started after it began
    expect((await first.get(`/v1/query/t2a_async_query_v2?task_id=${c.body.task_id}`)).body.status).toBe('Success');
    await Promise.all(clients);
  }, 90_000);
});
