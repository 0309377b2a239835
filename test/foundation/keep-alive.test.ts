import { Client, FormData } from 'undici';
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';

/**
 * An idle keep-alive connection is held well past the timeout the listener advertises. undici closes an idle
 * connection 2 s before the advertised time, counted in timer ticks that stop while its process is blocked; a test
 * process that blocks for seconds (here: 7 s, past the 5 s advertised and Node's 1 s margin) then sends its next
 * request on the connection it kept. Before, the listener closed that connection as its timer fired and the
 * upload got a reset (`fetch failed`, ECONNRESET) instead of its answer.
 */
const { emu } = emulatorForFile();

/** Keeps the process busy without yielding: no timer of the client or of the in-process listener runs meanwhile. */
function blockFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('keep-alive: a connection idle past the advertised timeout', () => {
  it('the next request on it, sent after the process was blocked, gets its answer', { timeout: 30_000 }, async () => {
    const client = new Client(emu.speechUrl);
    let connections = 0;
    client.on('connect', () => connections++);
    try {
      const upload = async (text: string) => {
        const form = new FormData();
        form.append('purpose', 'retrieval');
        form.append('file', new Blob([text]), 'note.txt');
        const r = await client.request({ path: '/v1/files/upload', method: 'POST', headers: { authorization: 'Bearer keep-alive' }, body: form });
        return { status: r.statusCode, keepAlive: r.headers['keep-alive'], body: (await r.body.json()) as any };
      };
      const first = await upload('first');
      // The advertised timeout is the service's own (Node's 5 s on the speech listeners): only the hold is longer.
      expect([first.status, first.keepAlive, first.body.base_resp.status_code]).toEqual([200, 'timeout=5', 0]);
      blockFor(7000);
      const second = await upload('second');
      expect([second.status, second.body.base_resp.status_code, second.body.file.bytes]).toEqual([200, 0, 6]);
      // The same connection carried both: the client did not close it, the listener kept it.
      expect(connections).toBe(1);
    } finally {
      await client.close();
    }
  });
});
