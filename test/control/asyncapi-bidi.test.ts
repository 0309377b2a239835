import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { call, emulatorForFile } from '../helpers/emulator.js';
import { bidiSession } from '../speech/bidi/bidi-helpers.js';

/** The AsyncAPI document's bidirectional channel: every server event of speech-current.md 2.4, each one a schema the real messages meet. */
const { emu } = emulatorForFile();

const EVENTS = [
  'connected_success',
  'task_started',
  'sentence_start',
  'task_continued',
  'sentence_end',
  'task_flushed',
  'task_canceled',
  'task_finished',
  'task_failed',
];

describe('/ws/v1/t2a_v2_bidi in /_emulator/asyncapi.json', () => {
  it("lists the server events, received by the channel's receive operation, and a real session's messages meet their schemas", async () => {
    const doc = (await call(`${emu.platformUrl}/_emulator/asyncapi.json`)).body;
    const channel = doc.channels.ws_v1_t2a_v2_bidi;
    expect(channel.address).toBe('/ws/v1/t2a_v2_bidi');
    for (const name of EVENTS) expect(channel.messages[name]?.payload.properties.event.const, name).toBe(name);
    const received = doc.operations.ws_v1_t2a_v2_bidi_receive.messages.map((m: { $ref: string }) => m.$ref.split('/').pop());
    expect(received.sort()).toEqual([...EVENTS].sort());
    for (const name of ['task_start', 'task_continue', 'task_flush', 'task_cancel', 'task_finish']) expect(channel.messages[name], name).toBeDefined();

    const ajv = new Ajv({ strict: false });
    const { messages } = await bidiSession(
      emu.speechUrl,
      [
        { event: 'task_start', model: 'speech-2.8-turbo', voice_setting: { voice_id: 'male-qn-qingse' } },
        { event: 'task_continue', text: 'One sentence here. ' },
        { event: 'task_flush' },
        { event: 'task_finish' },
      ],
      { key: 'asyncapi-bidi' },
    );
    const seen = new Set<string>();
    for (const m of messages) {
      const schema = channel.messages[m.event]?.payload;
      expect(schema, m.event).toBeDefined();
      const validate = ajv.compile(schema);
      expect(validate(m) ? [] : validate.errors, m.event).toEqual([]);
      seen.add(m.event);
    }
    expect([...seen]).toEqual(
      expect.arrayContaining(['connected_success', 'task_started', 'sentence_start', 'task_continued', 'sentence_end', 'task_flushed', 'task_finished']),
    );
  });
});
