// close() is the subject: each test starts its own emulator and closes it mid-stream.
import { describe, expect, it } from 'vitest';
import { connect, wsUrl } from '../platform/conversation/conversation-helpers.js';
import { startTestEmulator } from '../helpers/emulator.js';

const LONG_TEXT = 'A long text that keeps streaming for a while. '.repeat(180);

/** Reads a body to its end while something else happens; answers the bytes and how it ended. */
async function readAll(body: ReadableStream<Uint8Array>, onFirst: () => void): Promise<{ bytes: Buffer; ended: 'clean' | 'error' }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks), ended: 'clean' };
      chunks.push(value);
      if (chunks.length === 1) onFirst();
    }
  } catch {
    return { bytes: Buffer.concat(chunks), ended: 'error' };
  }
}

describe('close() ends open streams at an event boundary', () => {
  it('a T2A SSE stream in flight: every event complete, a final error event, a clean end', async () => {
    const emu = await startTestEmulator();
    const res = await fetch(`${emu.speechUrl}/v1/t2a_v2`, {
      method: 'POST',
      headers: { authorization: 'Bearer shutdown-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'speech-02-turbo',
        text: LONG_TEXT,
        stream: true,
        voice_setting: { voice_id: 'male-qn-qingse' },
        audio_setting: { format: 'mp3' },
      }),
    });
    expect(res.status).toBe(200);
    let closed: Promise<void> | undefined;
    const reading = readAll(res.body!, () => (closed = emu.close()));
    const { bytes, ended } = await reading;
    await closed;
    expect(ended).toBe('clean');
    const text = bytes.toString('utf8');
    expect(text.endsWith('\n\n')).toBe(true);
    const events = text
      .slice(0, -2)
      .split('\n\n')
      .map((e) => {
        expect(e.startsWith('data: ')).toBe(true);
        return JSON.parse(e.slice('data: '.length)) as { data: unknown; base_resp: { status_code: number; status_msg: string } };
      });
    expect(events.length).toBeGreaterThan(1);
    const last = events.at(-1)!;
    expect(last.data).toBeNull();
    expect(last.base_resp.status_code).toBe(1000);
    expect(last.base_resp.status_msg).toMatch(/shutting down/);
    for (const e of events.slice(0, -1)) expect(e.base_resp.status_code).toBe(0);
  });

  it('a platform synthesis stream in flight: the chunked body ends cleanly', async () => {
    const emu = await startTestEmulator();
    const res = await fetch(`${emu.platformUrl}/v1/text-to-speech/stream`, {
      method: 'POST',
      headers: { 'x-api-key': 'shutdown-key', 'content-type': 'application/json' },
      body: JSON.stringify({ voice_id: 'female_bright', generate_text: LONG_TEXT.slice(0, 480) }),
    });
    expect(res.status).toBe(200);
    let closed: Promise<void> | undefined;
    const reading = readAll(res.body!, () => (closed = emu.close()));
    const { bytes, ended } = await reading;
    await closed;
    expect(bytes.length).toBeGreaterThan(0);
    expect(ended).toBe('clean');
  });

  it('an open WebSocket gets a going-away close frame (1001)', async () => {
    const emu = await startTestEmulator();
    const c = await connect(wsUrl(emu.platformUrl, '/v1/speech-to-text/stream', 'shutdown-key'));
    c.sendJson({ meta: { audio_format: 'pcm16' } });
    await emu.close();
    expect((await c.closed).code).toBe(1001);
  });
});
