import { Writable } from 'node:stream';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { boundedFeed, LIVE_BACKLOG_BYTES } from '../../src/control/live.js';
import { call, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';

const { emu } = emulatorForFile();

/** Opens the live feed and collects its `entry` events until `until` holds. */
async function feed(url: string, action: () => Promise<unknown>, until: (events: any[]) => boolean) {
  const ac = new AbortController();
  const res = await fetch(url, { signal: ac.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events: any[] = [];
  const parser = createParser({ onEvent: (m: EventSourceMessage) => m.event === 'entry' && events.push(JSON.parse(m.data)) });
  const reader = res.body!.getReader();
  // The first bytes mean the feed is watching: only then make the request.
  parser.feed(new TextDecoder().decode((await reader.read()).value));
  await action();
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(new TextDecoder().decode(value));
  }
  ac.abort();
  return events;
}

describe('GET /_emulator/journal/live', () => {
  it('pushes each journal entry when it starts and when its answer ends, keys redacted', async () => {
    const key = 'live-feed-key-0123456789';
    const events = await feed(
      `${emu.platformUrl}/_emulator/journal/live`,
      () =>
        call(`${emu.speechUrl}/v1/t2a_v2`, {
          headers: { authorization: `Bearer ${key}` },
          json: { model: 'speech-02-turbo', text: 'Live.', voice_setting: { voice_id: 'male-qn-qingse' } },
        }),
      (ev) => ev.some((e) => e.event === 'finished'),
    );
    const started = events.find((e) => e.event === 'new');
    const finished = events.find((e) => e.event === 'finished');
    expect(started.entry).toMatchObject({ service: 'speech', method: 'POST', path: '/v1/t2a_v2', status: null });
    expect(finished.entry.id).toBe(started.entry.id);
    expect(finished.entry.status).toBe(200);
    expect(finished.entry.response.summary.base_resp.status_code).toBe(0);
    expect(finished.entry.accountId).toBeUndefined();
    expect(JSON.stringify(events)).not.toContain(key);
    // The same entry as the journal shows it.
    const [listed] = (await call(`${emu.speechUrl}/_emulator/journal?limit=1`)).body.entries;
    expect(listed.id).toBe(finished.entry.id);
  });

  it('HEAD is not a feed, unknown query parameters are refused', async () => {
    expect((await fetch(`${emu.speechUrl}/_emulator/journal/live`, { method: 'HEAD' })).status).toBe(404);
    const bad = await call(`${emu.speechUrl}/_emulator/journal/live?limit=3`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/unknown query parameter limit/);
  });

  // close() is the subject: an emulator of its own.
  it('an open feed does not hold up close()', async () => {
    const run = await startTestEmulator();
    const res = await fetch(`${run.speechUrl}/_emulator/journal/live`);
    const reader = res.body!.getReader();
    await reader.read();
    await run.close();
    // The emulator ended the stream itself.
    for (;;) if ((await reader.read()).done) break;
  });
});

describe('a live subscriber that does not read', () => {
  it('is cut once its unread backlog passes the bound: nothing more is buffered for it', () => {
    const held: Buffer[] = [];
    // A client that never takes anything: every write stays in the stream's buffer.
    const out = new Writable({ highWaterMark: 16, write: (chunk: Buffer) => void held.push(chunk) });
    let cuts = 0;
    const write = boundedFeed(out, 64 * 1024, () => cuts++);
    const event = `event: entry\ndata: ${'x'.repeat(1000)}\n\n`;
    for (let i = 0; i < 10_000; i++) write(event);
    expect(cuts).toBe(1);
    expect(out.destroyed).toBe(true);
    // the backlog stopped growing at the bound (plus the one event that crossed it)
    expect(out.writableLength).toBeLessThan(64 * 1024 + 2 * event.length);
  });

  it('a reader that keeps up is never cut', async () => {
    const out = new Writable({ write: (_chunk, _enc, done) => setImmediate(done) });
    let cuts = 0;
    const write = boundedFeed(out, LIVE_BACKLOG_BYTES, () => cuts++);
    for (let i = 0; i < 200; i++) {
      write(`event: entry\ndata: ${'y'.repeat(500)}\n\n`);
      if (i % 20 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(cuts).toBe(0);
    expect(out.destroyed).toBe(false);
  });
});
