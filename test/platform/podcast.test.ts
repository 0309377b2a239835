import { describe, expect, it } from 'vitest';
import { call, control, emulatorForFile, startTestEmulator } from '../helpers/emulator.js';
import { ffprobe } from '../helpers/ffprobe.js';

const { emu, ctl } = emulatorForFile({ freeze: true });
const TEXT = 'Welcome to our show.\nThanks, glad to be here.\nLet us start.';

function podcast(json: unknown, key: string | null = 'pod-key', headers: Record<string, string> = {}) {
  return call(`${emu.platformUrl}/v1/audio/podcast`, { json, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });
}

/** Each test moves the clock past every window so earlier requests never limit it. */
async function fresh() {
  await ctl.advance(61_000);
}

describe('generation', () => {
  it('answers the envelope with a signed MP3 24 kHz mono 128 kbps whose duration is durationSec', async () => {
    await fresh();
    const r = await podcast({ dialogueText: TEXT });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ error_code: 0, error_message: '', succeed: true });
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(['audioUrl', 'durationSec', 'objectKey', 'traceId']);
    expect(d.traceId).toMatch(/^[0-9a-f]{32}$/);
    const account = emu.emulator.accounts.resolve('pod-key');
    expect(account.ok && d.objectKey.startsWith(`podcasts/${account.account.id}/`)).toBe(true);
    expect(d.objectKey).toMatch(/\.mp3$/);
    const res = await fetch(d.audioUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const probe = (await ffprobe(Buffer.from(await res.arrayBuffer()), { ext: 'mp3' })).raw as any;
    const s = probe.streams[0];
    expect([s.codec_name, Number(s.sample_rate), s.channels, Number(s.bit_rate)]).toEqual(['mp3', 24000, 1, 128000]);
    expect(Math.abs(Number(probe.format.duration) - d.durationSec)).toBeLessThan(0.03);
  });

  it('the audio URL is valid for 1 hour on the emulator clock', async () => {
    await fresh();
    const r = await podcast({ dialogueText: 'Short one.\nIndeed.' });
    await ctl.advance(3_599_000);
    expect((await fetch(r.body.data.audioUrl)).status).toBe(200);
    await ctl.advance(1_001);
    expect((await fetch(r.body.data.audioUrl)).status).toBe(403);
  });

  it('speed 200–500 (default 250) changes the pace', async () => {
    const dur = async (speed?: number) => {
      await fresh();
      const r = await podcast({ dialogueText: TEXT, ...(speed === undefined ? {} : { speed }) });
      expect(r.body.error_code).toBe(0);
      return r.body.data.durationSec as number;
    };
    const normal = await dur();
    expect(await dur(250)).toBe(normal);
    expect(await dur(500)).toBeLessThan(normal * 0.75);
    expect(await dur(200)).toBeGreaterThan(normal * 1.1);
  });

  it('custom voices need both prompts (whitelisted https): they give each speaker its own derived voice', async () => {
    await fresh();
    const p1 = 'https://cdn.emulator.test/prompts/speaker1.wav';
    const p2 = 'https://cdn.emulator.test/prompts/speaker2.wav';
    const text = 'Custom voices here.\nYes indeed.';
    const r = await podcast({ dialogueText: text, pairSelection: 'Custom', audioPromptSpk1: p1, audioPromptSpk2: p2 });
    expect(r.body.error_code).toBe(0);
    const rec = emu.emulator.signatures.save().find((x) => x.kind === 'dialogue' && x.text === text)!;
    const voices = rec.speakers.map((s) => s.voices[0]!);
    expect(voices[0]).toMatch(/^prompt-1-[0-9a-f]{12}$/);
    expect(voices[1]).toMatch(/^prompt-2-[0-9a-f]{12}$/);
    // One prompt alone is ignored, even one that would be refused: the preset pair speaks.
    await fresh();
    const text2 = 'Only one prompt.\nIgnored then.';
    const lone = await podcast({ dialogueText: text2, audioPromptSpk1: 'http://evil.example/x.wav' });
    expect(lone.body.error_code).toBe(0);
    const rec2 = emu.emulator.signatures.save().find((x) => x.kind === 'dialogue' && x.text === text2)!;
    const first = emu.emulator.fixtures.data['podcast-pairs.json'][0]!;
    expect(rec2.speakers.map((s) => s.voices[0])).toEqual([first.speaker1, first.speaker2]);
  });

  it('the state view lists the podcasts of an account; its reset removes them and their audio', async () => {
    await fresh();
    const r = await podcast({ dialogueText: 'Keep me.\nFor now.' }, 'pod-state');
    const state = await ctl.state();
    const mine = state.body.accounts.find((a: any) => a.resources.podcasts?.some((p: any) => p.objectKey === r.body.data.objectKey));
    expect(mine.resources.podcasts).toHaveLength(1);
    expect(mine.resources.podcasts[0]).toMatchObject({ lines: 2, pair: 'GMale & GFemale', speed: 250, durationSec: r.body.data.durationSec });
    await ctl.reset('pod-state');
    expect((await fetch(r.body.data.audioUrl)).status).toBe(404);
  });

  it('a preset pair by name sets the two voices', async () => {
    await fresh();
    const pair = emu.emulator.fixtures.data['podcast-pairs.json'][3]!;
    const text = 'Preset pair speaking.\nThat is right.';
    expect((await podcast({ dialogueText: text, pairSelection: pair.name })).body.error_code).toBe(0);
    const rec = emu.emulator.signatures.save().find((x) => x.kind === 'dialogue' && x.text === text)!;
    expect(rec.speakers.map((s) => s.voices[0])).toEqual([pair.speaker1, pair.speaker2]);
  });
});

describe('request rules', () => {
  const p1 = 'https://cdn.emulator.test/prompts/speaker1.wav';
  it.each([
    [{}, 'dialogueText is required'],
    [{ dialogueText: 12 }, 'dialogueText must be a string'],
    [{ dialogueText: ' \n \n' }, 'dialogueText is empty'],
    [{ dialogueText: 'a'.repeat(4001) }, 'at most 4000'],
    [{ dialogueText: '中'.repeat(4001) }, 'at most 4000'],
    [{ dialogueText: 'Hi.', speed: 199 }, 'speed must be a number from 200 to 500'],
    [{ dialogueText: 'Hi.', speed: 501 }, 'speed'],
    [{ dialogueText: 'Hi.', speed: '300' }, 'speed'],
    [{ dialogueText: 'Hi.', pairSelection: 'Nobody & Nobody' }, 'pairSelection must be one of'],
    [{ dialogueText: 'Hi.', pairSelection: 'Custom' }, 'needs both audioPromptSpk1 and audioPromptSpk2'],
    [{ dialogueText: 'Hi.', pairSelection: 'Custom', audioPromptSpk1: p1 }, 'needs both'],
    [
      { dialogueText: 'Hi.', audioPromptSpk1: p1, audioPromptSpk2: 'https://voices.example.com/a.wav' },
      'audioPromptSpk2 host voices.example.com is not on the voice URL whitelist',
    ],
    [{ dialogueText: 'Hi.', audioPromptSpk1: 'http://cdn.emulator.test/prompts/speaker1.wav', audioPromptSpk2: p1 }, 'audioPromptSpk1 must be an https URL'],
    [{ dialogueText: 'Hi.', audioPromptSpk1: p1, audioPromptSpk2: 'https://cdn.emulator.test/prompts/missing.wav' }, 'audioPromptSpk2 could not be downloaded'],
  ])('%j → 10001 (%s)', async (body, message) => {
    const r = await podcast(body);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ error_code: 10001, succeed: false, data: null });
    expect(r.body.error_message).toContain(message);
  });

  it('the first problem in the documented order answers, in the operation’s own words', async () => {
    const words = async (body: unknown) => (await podcast(body)).body.error_message;
    expect(await words({ dialogueText: 'a'.repeat(4001), speed: 'fast', pairSelection: 5 })).toBe('dialogueText has 4001 characters; at most 4000 are allowed');
    expect(await words({ dialogueText: '\n', speed: 'fast' })).toBe('dialogueText is empty: give one sentence per line');
    expect(await words({ dialogueText: 'Hi.', speed: 'fast', pairSelection: 5 })).toBe('speed must be a number from 200 to 500, got "fast"');
    expect(await words({ dialogueText: 'Hi.', pairSelection: 5, audioPromptSpk1: 6 })).toBe('pairSelection must be a string');
    expect(await words({ dialogueText: 'Hi.', audioPromptSpk2: [] })).toBe('audioPromptSpk2 must be a string');
    expect(await words([1])).toBe('request body must be a JSON object');
    expect(await words(null)).toBe('dialogueText is required');
  });

  it('4000 characters exactly pass the length rule (content safety answers first here)', async () => {
    const r = await podcast({ dialogueText: `blocked-by-safety ${'a'.repeat(3982)}` });
    expect(r.body.error_code).toBe(10015);
  });

  it('content-safety terms give 10015', async () => {
    const r = await podcast({ dialogueText: 'Let us talk.\nAbout the FORBIDDEN-TOPIC now.' });
    expect(r.body).toMatchObject({ error_code: 10015, succeed: false, data: null });
  });

  it('auth, capability, balance and injected faults', async () => {
    await fresh();
    expect((await podcast({ dialogueText: 'Hi.' }, null)).body.error_code).toBe(10003);
    expect((await podcast({ dialogueText: 'Hi.' }, 'emulator-tts-only-key')).body.error_code).toBe(10003);
    const broke = await podcast({ dialogueText: 'Hi.' }, 'emulator-broke-key');
    expect(broke.status).toBe(200);
    expect(broke.body).toMatchObject({ error_code: 20003, succeed: false });
    for (const code of [10006, 10000]) {
      const r = await podcast({ dialogueText: 'Hi.' }, 'pod-key', { 'x-emulator-fault': `code=${code}` });
      expect([r.status, r.body.error_code]).toEqual([200, code]);
    }
    expect((await podcast({ dialogueText: 'Hi.' }, 'pod-key', { 'x-emulator-fault': 'status=408' })).body.error_code).toBe(10006);
  });

  it('charges podcast_audio_second', async () => {
    await fresh();
    await ctl.putAccount('pod-paying', { balance_micro: 1_000_000 });
    const r = await podcast({ dialogueText: 'Pay for this.\nSure.' }, 'pod-paying');
    const left = (await ctl.account('pod-paying')).body.balance_micro;
    const charged = 1_000_000 - left;
    expect(charged).toBeGreaterThan(Math.floor((r.body.data.durationSec - 0.2) * 1000));
    expect(charged).toBeLessThanOrEqual(Math.ceil(r.body.data.durationSec * 1000));
  });
});

describe('rate limits (10014) on the emulator clock', () => {
  it('5 per minute per account, reopening when the clock moves on', async () => {
    await fresh();
    for (let i = 0; i < 5; i++) {
      expect((await podcast({ dialogueText: `Line ${i}.` }, 'pod-rate')).body.error_code).toBe(0);
      await ctl.advance(1_001);
    }
    const sixth = await podcast({ dialogueText: 'One more.' }, 'pod-rate');
    expect(sixth.body).toMatchObject({ error_code: 10014, succeed: false });
    expect(sixth.body.error_message).toMatch(/per minute/);
    expect((await podcast({ dialogueText: 'Other account.' }, 'pod-rate-2')).body.error_code).toBe(0);
    await ctl.advance(55_000);
    expect((await podcast({ dialogueText: 'Again.' }, 'pod-rate')).body.error_code).toBe(0);
  });

  it('2 per second in total across accounts', async () => {
    await fresh();
    expect((await podcast({ dialogueText: 'A.' }, 'g1')).body.error_code).toBe(0);
    expect((await podcast({ dialogueText: 'B.' }, 'g2')).body.error_code).toBe(0);
    const third = await podcast({ dialogueText: 'C.' }, 'g3');
    expect(third.body.error_code).toBe(10014);
    expect(third.body.error_message).toMatch(/per second/);
    await ctl.advance(1_000);
    expect((await podcast({ dialogueText: 'C.' }, 'g3')).body.error_code).toBe(0);
  });

  it('the global window is off with globalLimits false; same seed gives the same ids and bytes', async () => {
    const other = await startTestEmulator({ globalLimits: false });
    try {
      await control(other.platformUrl).freeze(true);
      for (const k of ['h1', 'h2', 'h3']) {
        const r = await call(`${other.platformUrl}/v1/audio/podcast`, { json: { dialogueText: 'Hi.' }, headers: { 'x-api-key': k } });
        expect(r.body.error_code).toBe(0);
      }
      // Same seed, same requests of a key: same ids and the same audio bytes on another instance.
      await fresh();
      const json = { dialogueText: 'Same seed.\nSame bytes.' };
      const [a, b] = [await podcast(json, 'same-seed'), await call(`${other.platformUrl}/v1/audio/podcast`, { json, headers: { 'x-api-key': 'same-seed' } })];
      expect(b.body.data.objectKey).toBe(a.body.data.objectKey);
      expect(b.body.data.traceId).toBe(a.body.data.traceId);
      const bytes = async (u: string) => Buffer.from(await (await fetch(u)).arrayBuffer());
      expect((await bytes(b.body.data.audioUrl)).equals(await bytes(a.body.data.audioUrl))).toBe(true);
    } finally {
      await other.close();
    }
  });
});
