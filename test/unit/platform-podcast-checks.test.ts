// planPodcast (platform/podcast/model.ts) called directly: one test per check, in the order the model runs
// them (pairSelection, Custom's prompts, each prompt's URL rules, content safety). The prompts resolve
// through the offline resolver: only the remote-audio fixture's URLs download.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/core/emulator.js';
import { planPodcast, promptVoiceId } from '../../src/services/platform/podcast/model.js';
import type { PodcastBody } from '../../src/services/platform/podcast/schema.js';
import { modelEmulator, rejected } from './model-emulator.js';
import { expectRefusal, messageOf } from './platform-refusal.js';

let emu: Emulator;
beforeAll(async () => {
  emu = await modelEmulator();
});

const SPK1 = 'https://cdn.emulator.test/prompts/speaker1.wav';
const SPK2 = 'https://cdn.emulator.test/prompts/speaker2.wav';
const PAIRS = '"GMale & GFemale", "YoungFemale & YoungMale", "Anchor & Reporter", "Teacher & Student", "Storyteller & Listener", "Custom"';
const base = { dialogueText: 'Welcome to the show.\nThanks for having me.' };
const plan = (fields: Record<string, unknown>) => planPodcast(emu, { ...base, ...fields } as PodcastBody);
const refusal = (fields: Record<string, unknown>) => rejected(plan(fields));
const param = (message: string) => ({ family: 'podcast', codeOrKind: 'param', code: 10001, message }) as const;

describe('planPodcast: the checks in order', () => {
  it('planPodcast: pairSelection neither a preset pair nor Custom → 10001', async () => {
    expectRefusal(await refusal({ pairSelection: 'Duo' }), param(`pairSelection must be one of ${PAIRS}`));
  });

  it('planPodcast: pairSelection Custom without both prompts → 10001', async () => {
    expectRefusal(
      await refusal({ pairSelection: 'Custom', audioPromptSpk1: SPK1 }),
      param('pairSelection Custom needs both audioPromptSpk1 and audioPromptSpk2'),
    );
  });

  it('planPodcast: audioPromptSpk1 not a URL → 10001', async () => {
    expectRefusal(await refusal({ audioPromptSpk1: 'speaker one', audioPromptSpk2: SPK2 }), param('audioPromptSpk1 is not a valid URL'));
  });

  it('planPodcast: audioPromptSpk1 not https → 10001', async () => {
    expectRefusal(
      await refusal({ audioPromptSpk1: 'http://cdn.emulator.test/prompts/speaker1.wav', audioPromptSpk2: SPK2 }),
      param('audioPromptSpk1 must be an https URL'),
    );
  });

  it('planPodcast: audioPromptSpk1 host off the voice URL whitelist → 10001 (nothing fetched)', async () => {
    expectRefusal(
      await refusal({ audioPromptSpk1: 'https://127.0.0.1/speaker1.wav', audioPromptSpk2: SPK2 }),
      param('audioPromptSpk1 host 127.0.0.1 is not on the voice URL whitelist'),
    );
  });

  it('planPodcast: audioPromptSpk1 on the whitelist but not resolvable → 10001', async () => {
    expectRefusal(
      await refusal({ audioPromptSpk1: 'https://cdn.emulator.test/prompts/missing.wav', audioPromptSpk2: SPK2 }),
      param('audioPromptSpk1 could not be downloaded (the emulator is offline; only fixture URLs resolve)'),
    );
  });

  it('planPodcast: audioPromptSpk2 is held to the same rules, after audioPromptSpk1 → 10001', async () => {
    expectRefusal(await refusal({ audioPromptSpk1: SPK1, audioPromptSpk2: 'ftp://cdn.emulator.test/b.wav' }), param('audioPromptSpk2 must be an https URL'));
    expectRefusal(
      await refusal({ audioPromptSpk1: SPK1, audioPromptSpk2: 'https://example.com/b.wav' }),
      param('audioPromptSpk2 host example.com is not on the voice URL whitelist'),
    );
  });

  it('planPodcast: dialogueText holding a content-safety term (any case) → 10015', async () => {
    expectRefusal(await refusal({ dialogueText: 'Hello.\nLet us talk about a FORBIDDEN-TOPIC today.' }), {
      family: 'podcast',
      codeOrKind: 10015,
      code: 10015,
      message: 'dialogueText was blocked by content safety',
    });
  });

  it('planPodcast: a request that passes every check is planned (default pair, lines trimmed, speed 250)', async () => {
    expect(await planPodcast(emu, { dialogueText: '  One.\r\n\r\nTwo.  \rThree.' } as PodcastBody)).toEqual({
      lines: ['One.', 'Two.', 'Three.'],
      voices: ['male_deep', 'female_warm'],
      pair: 'GMale & GFemale',
      speed: 250,
    });
    expect(await plan({ pairSelection: 'Anchor & Reporter', speed: 300 })).toMatchObject({
      voices: ['narrator_neutral', 'male_calm'],
      pair: 'Anchor & Reporter',
      speed: 300,
    });
  });

  it('planPodcast: both prompts that resolve take effect; one prompt alone is ignored', async () => {
    expect(await plan({ pairSelection: 'Custom', audioPromptSpk1: SPK1, audioPromptSpk2: SPK2 })).toMatchObject({
      voices: [promptVoiceId(1, SPK1), promptVoiceId(2, SPK2)],
      pair: 'Custom',
    });
    expect(await plan({ audioPromptSpk1: 'not a url' })).toMatchObject({ pair: 'GMale & GFemale' });
  });

  it('planPodcast: the order — pairSelection before Custom prompts before content safety', async () => {
    const blocked = 'blocked-by-safety';
    expect(messageOf(await refusal({ dialogueText: blocked, pairSelection: 'Duo' }))).toMatch(/^pairSelection must be one of /);
    expect(messageOf(await refusal({ dialogueText: blocked, pairSelection: 'Custom' }))).toBe(
      'pairSelection Custom needs both audioPromptSpk1 and audioPromptSpk2',
    );
    expect(messageOf(await refusal({ dialogueText: blocked, audioPromptSpk1: SPK1, audioPromptSpk2: 'https://example.com/b.wav' }))).toBe(
      'audioPromptSpk2 host example.com is not on the voice URL whitelist',
    );
  });

  it('planPodcast: the order — audioPromptSpk1 is named before audioPromptSpk2, and its URL rules in turn', async () => {
    expect(messageOf(await refusal({ audioPromptSpk1: 'nope', audioPromptSpk2: 'nope' }))).toBe('audioPromptSpk1 is not a valid URL');
    // Not https and off the whitelist: https is checked first.
    expect(messageOf(await refusal({ audioPromptSpk1: 'http://example.com/a.wav', audioPromptSpk2: SPK2 }))).toBe('audioPromptSpk1 must be an https URL');
  });
});
