import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { emulatorForFile } from '../../helpers/emulator.js';
import { connect, session, START, until } from './ws-helpers.js';

const { emu, ctl } = emulatorForFile({ plane: 'speech', freeze: true });
const start = { ...START, audio_setting: { format: 'pcm', sample_rate: 8000 } };

/** One account's part of the state view: resources, open sockets, pending timers. */
const viewOf = (key: string) => ctl.accountState(key);

/** Opens a session and resolves once task_started arrived; messages keep accumulating. */
function started(key: string): Promise<{ ws: WebSocket; messages: any[]; closed: Promise<{ code: number }> }> {
  return new Promise((resolve, reject) => {
    const ws = connect(emu.speechUrl, { key });
    const messages: any[] = [];
    const closed = new Promise<{ code: number }>((r) => ws.on('close', (code) => r({ code })));
    ws.on('open', () => ws.send(JSON.stringify(start)));
    ws.on('message', (d) => {
      const m = JSON.parse(String(d));
      messages.push(m);
      if (m.event === 'task_started') resolve({ ws, messages, closed });
    });
    ws.on('error', reject);
  });
}

describe('idle timeout on the emulator clock (rule 12.7)', () => {
  it('120 s after the last message or result: task_failed 2201, close 1000; a message restarts the wait', async () => {
    const s = await started('speech-idle');
    await ctl.advance(119_999);
    expect(s.messages.map((m) => m.event)).toEqual(['connected_success', 'task_started']);
    // A piece restarts the wait from its result.
    s.ws.send(JSON.stringify({ event: 'task_continue', text: 'Still here.' }));
    await until(async () => s.messages.some((m) => m.is_final));
    await ctl.advance(119_000);
    expect(s.messages.at(-1).event).toBe('task_continued');
    await ctl.advance(1_000);
    const closed = await s.closed;
    expect(s.messages.at(-1)).toMatchObject({ event: 'task_failed', base_resp: { status_code: 2201, status_msg: 'timeout disconnect' } });
    expect(closed.code).toBe(1000);
  });
});

describe('open sockets, leaks and the journal', () => {
  it('the state view lists an open speech socket and its idle timer; a client that closes mid-piece stops the synthesis and leaves nothing', async () => {
    const key = 'speech-leak';
    const s = await started(key);
    let view = await viewOf(key);
    expect(view.open_websockets).toEqual([expect.objectContaining({ path: '/ws/v1/t2a_v2' })]);
    expect(view.pending_timers.map((t: any) => t.label)).toContain('speech socket idle timeout');
    // A long piece: the client leaves after its first chunk.
    s.ws.send(JSON.stringify({ event: 'task_continue', text: 'A long piece of text that goes on. '.repeat(200) }));
    await until(async () => s.messages.some((m) => m.event === 'task_continued'));
    s.ws.close();
    await s.closed;
    await until(async () => {
      view = await viewOf(key);
      return view.open_websockets.length === 0 && view.resources.speech.streams.at(-1)?.status === 'aborted';
    });
    expect(view.pending_timers).toEqual([]);
    expect(view.resources.speech.streams_active).toBe(0);
    expect(s.messages.some((m) => m.is_final)).toBe(false);
  });

  it('journals the frames of the conversation with their event names', async () => {
    const key = 'speech-journal';
    await session(emu.speechUrl, [start, { event: 'task_continue', text: 'Journal me.' }, { event: 'task_finish' }], { key });
    const entries = (await ctl.journal({ path: '/ws/v1/t2a_v2' })).body.entries;
    const entry = entries.find((e: any) => e.ws_frames?.some((f: any) => f.event === 'task_finished'));
    expect(entry).toBeTruthy();
    expect(entry.status).toBe(101);
    const names = entry.ws_frames.map((f: any) => `${f.dir}:${f.event ?? f.type}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'out:connected_success',
        'in:task_start',
        'out:task_started',
        'in:task_continue',
        'out:task_continued',
        'in:task_finish',
        'out:task_finished',
        'out:1000',
      ]),
    );
    expect(JSON.stringify(entry)).not.toContain(key);
  });

  it('a frame over 8 MiB closes the socket with 1009', async () => {
    const r = await session(emu.speechUrl, [start, JSON.stringify({ event: 'task_continue', text: 'x'.repeat(8 * 1024 * 1024 + 10) })]);
    expect(r.close.code).toBe(1009);
  });
});
