/**
 * `/mcp` batches are bounded (one batch of 230 synthesis calls took 15 s of CPU, 1.2 GB, ended in
 * -32603 `Invalid string length` and billed all 230): a batch of more than MAX_BATCH_MESSAGES is one
 * -32600 error and nothing in it runs or is charged; within a batch, once the answer holds
 * MAX_ANSWER_BYTES, each remaining request is a -32600 error and is neither run nor charged.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES, MAX_BATCH_MESSAGES } from '../../src/services/platform/mcp/jsonrpc.js';
import { emulatorForFile } from '../helpers/emulator.js';

const { emu, ctl } = emulatorForFile();
let voice: string;
beforeAll(() => {
  voice = emu.emulator.fixtures.data['platform-voices.json'][0]!.voice_id;
});

/** 500 characters at speed 0.6: the longest audio one call makes (about 4 MB of Base64 WAV). */
const LONG_TEXT = 'Every word here is spoken slowly and at length. '.repeat(11).slice(0, 500);
const ttsCall = (key: string, id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'text_to_speech_generate', arguments: { apiKey: key, voice_id: voice, generate_text: LONG_TEXT, speed: 0.6 } },
});

async function post(body: unknown) {
  const res = await fetch(`${emu.platformUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, bytes: Buffer.byteLength(text), json: JSON.parse(text) };
}
const balance = async (key: string) => (await ctl.account(key)).body.balance_micro as number;

describe('/mcp batches', () => {
  it(`a batch over ${MAX_BATCH_MESSAGES} messages is one -32600 error; nothing runs, nothing is charged`, async () => {
    const key = 'mcp-batch-count';
    await ctl.putAccount(key, { balance_micro: 100_000_000 });
    const batch = Array.from({ length: MAX_BATCH_MESSAGES + 1 }, (_, i) => ttsCall(key, i + 1));
    const started = performance.now();
    const r = await post(batch);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringMatching(new RegExp(`at most ${MAX_BATCH_MESSAGES} messages, this one holds ${MAX_BATCH_MESSAGES + 1}`)) },
    });
    expect(await balance(key)).toBe(100_000_000);
    expect((await ctl.journal({ path: '/mcp' })).body.entries.length).toBeGreaterThan(0);
  });

  it(`once the answer holds ${MAX_ANSWER_BYTES} bytes, the remaining requests are refused without running or charge`, async () => {
    const key = 'mcp-batch-size';
    await ctl.putAccount(key, { balance_micro: 100_000_000 });
    // The price of one such call, alone.
    const one = await post(ttsCall(key, 0));
    expect(one.json.result.isError).toBe(false);
    const price = 100_000_000 - (await balance(key));
    expect(price).toBeGreaterThan(0);

    const r = await post(Array.from({ length: MAX_BATCH_MESSAGES }, (_, i) => ttsCall(key, i + 1)));
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(MAX_BATCH_MESSAGES);
    const ran = r.json.filter((x: any) => x.result);
    const refused = r.json.filter((x: any) => x.error);
    expect(ran.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(ran.length + refused.length).toBe(MAX_BATCH_MESSAGES);
    // In order: the runs first, then the refusals, each with its own id.
    expect(r.json.map((x: any) => x.id)).toEqual(Array.from({ length: MAX_BATCH_MESSAGES }, (_, i) => i + 1));
    for (const x of refused) expect(x.error).toEqual({ code: -32600, message: expect.stringMatching(/not run, the batch's answer already holds \d+ bytes/) });
    // Only what ran was charged, and the answer stayed within the bound plus one call's answer.
    expect(100_000_000 - price - (await balance(key))).toBe(price * ran.length);
    expect(r.bytes).toBeLessThan(MAX_ANSWER_BYTES + one.bytes + 1024);
  }, 60_000);
});
