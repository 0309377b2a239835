/**
 * Podcast generation: the rules of the request, then two-voice dialogue audio (MP3 24 kHz mono
 * 128 kbps) stored as `podcasts/{account}/{id}.mp3` with a signed link valid 1 hour on the emulator
 * clock, and a signature record whose segments are the turns (so diarization and recognition know
 * what was said and by whom).
 */
import { canPay, charge } from '../../shared/charges.js';
import { createHash } from 'node:crypto';
import { encodeAudio, synthesizeDialogueStreamSliced, type DialogueInput } from '../../../audio/index.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { dialogueRecord } from '../../../core/state/signatures.js';
import { fetchRemote, podcastKeyPrefix } from '../../shared/remote.js';
import { PlatformError } from '../envelope.js';
import { priceOf } from '../shared/billing.js';
import { languageByAnyHan } from '../../shared/recognize.js';
import { podcastStore } from './store.js';
import { CUSTOM, PODCAST_AUDIO, SPEED_DEFAULT, URL_VALIDITY_MS, type PodcastBody, type PodcastData } from './schema.js';

export interface PodcastPlan {
  lines: string[];
  /** Voice ids of speaker 1 and speaker 2. */
  voices: [string, string];
  pair: string;
  speed: number;
}

/** 10015: the dialogue holds a term of the content-safety fixture. */
const blockedByContentSafety = () => new PlatformError(10015, 'dialogueText was blocked by content safety');

const GLOBAL_WINDOW = { key: 'global:podcast', ms: 1000, max: 2 };
const ACCOUNT_WINDOW = { name: 'podcast', ms: 60_000, max: 5 };

/**
 * Voice of a custom prompt: derived from the speaker number and the prompt URL, so the same URLs
 * always give the same voices and the two speakers never share one.
 */
export function promptVoiceId(speaker: 1 | 2, url: string): string {
  return `prompt-${speaker}-${createHash('sha256').update(url).digest('hex').slice(0, 12)}`;
}

/** A prompt must be https on the whitelist and resolvable; `field` names it in the error. */
async function checkPrompt(emu: Emulator, field: string, raw: string): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PlatformError('param', `${field} is not a valid URL`);
  }
  if (url.protocol !== 'https:') throw new PlatformError('param', `${field} must be an https URL`);
  const hosts = emu.fixtures.data['podcast-hosts.json'].map((h) => h.toLowerCase());
  if (!hosts.includes(url.hostname.toLowerCase())) throw new PlatformError('param', `${field} host ${url.hostname} is not on the voice URL whitelist`);
  const got = await fetchRemote(emu, raw);
  if (!got.ok) throw new PlatformError('param', `${field} ${got.message}`);
}

/**
 * The rules of a request whose fields the route's schema has checked (types, dialogueText's length,
 * speed's range), in order: pairSelection one of the pairs or Custom, Custom with both prompts, each
 * prompt https on the whitelist and resolvable (10001); content safety (10015). Answers what to generate.
 */
export async function planPodcast(emu: Emulator, body: PodcastBody): Promise<PodcastPlan> {
  const text = body.dialogueText;
  const lines = text
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  const speed = body.speed ?? SPEED_DEFAULT;

  const pairs = emu.fixtures.data['podcast-pairs.json'];
  const selection = body.pairSelection;
  const p1 = body.audioPromptSpk1;
  const p2 = body.audioPromptSpk2;
  const custom = p1 !== undefined && p2 !== undefined;
  if (selection !== undefined && selection !== CUSTOM && !pairs.some((p) => p.name === selection)) {
    throw new PlatformError('param', `pairSelection must be one of ${[...pairs.map((p) => p.name), CUSTOM].map((n) => JSON.stringify(n)).join(', ')}`);
  }
  if (selection === CUSTOM && !custom) throw new PlatformError('param', 'pairSelection Custom needs both audioPromptSpk1 and audioPromptSpk2');

  let voices: [string, string];
  let pair: string;
  if (custom) {
    // Both prompts: the custom voices take effect. One prompt alone is ignored (spec).
    await checkPrompt(emu, 'audioPromptSpk1', p1);
    await checkPrompt(emu, 'audioPromptSpk2', p2);
    voices = [promptVoiceId(1, p1), promptVoiceId(2, p2)];
    pair = CUSTOM;
  } else {
    const preset = pairs.find((p) => p.name === selection) ?? pairs[0]!;
    voices = [preset.speaker1, preset.speaker2];
    pair = preset.name;
  }

  const lower = text.toLowerCase();
  const term = emu.fixtures.data['content-safety.json'].terms.find((t) => lower.includes(t.toLowerCase()));
  if (term !== undefined) throw blockedByContentSafety();

  return { lines, voices, pair, speed };
}

export function dialogueOf(plan: PodcastPlan): DialogueInput {
  return {
    turns: plan.lines.map((text, i) => ({ text, voices: [{ id: i % 2 === 0 ? plan.voices[0] : plan.voices[1], weight: 1 }], speaker: (i % 2) + 1 })),
    speed: plan.speed / SPEED_DEFAULT,
    sampleRate: PODCAST_AUDIO.sampleRate,
    channels: PODCAST_AUDIO.channels,
  };
}

/** Rate windows: global 2 per second (unless global limits are off) and 5 per minute per account. */
function takeRateSlot(emu: Emulator, account: Account): void {
  const mine = emu.windowKey(account, ACCOUNT_WINDOW.name);
  const own = emu.limits.check(mine, ACCOUNT_WINDOW.ms, ACCOUNT_WINDOW.max);
  if (!own.allowed)
    throw new PlatformError(
      'rate',
      `podcast rate limit: at most ${ACCOUNT_WINDOW.max} requests per minute per API key (retry in ${Math.ceil(own.retryAfterMs / 1000)} s)`,
    );
  if (emu.config.globalLimits) {
    const all = emu.limits.check(GLOBAL_WINDOW.key, GLOBAL_WINDOW.ms, GLOBAL_WINDOW.max);
    if (!all.allowed) throw new PlatformError('rate', `podcast rate limit: at most ${GLOBAL_WINDOW.max} requests per second in total`);
    emu.limits.hit(GLOBAL_WINDOW.key, GLOBAL_WINDOW.ms, GLOBAL_WINDOW.max);
  }
  emu.limits.hit(mine, ACCOUNT_WINDOW.ms, ACCOUNT_WINDOW.max);
}

/** Balance (20003), rate windows (10014), then the audio, its blob, link and signature record. */
export async function generatePodcast(emu: Emulator, account: Account, plan: PodcastPlan): Promise<PodcastData> {
  const input = { ...dialogueOf(plan), engine: emu.config.voiceEngine };
  const stream = await synthesizeDialogueStreamSliced(input); // lazy: the plan (duration, turns) is known before rendering
  const price = priceOf(emu.fixtures.data['billing.json'].prices_micro.podcast_audio_second, stream.durationMs);
  if (!canPay(emu, account, price)) throw new PlatformError('balance', 'insufficient balance for podcast generation');
  takeRateSlot(emu, account);

  const { bytes, meta } = await encodeAudio('mp3', stream, PODCAST_AUDIO);
  const ids = emu.ids.stream(account.id);
  const objectKey = `${podcastKeyPrefix(account)}${ids.hex(24)}.mp3`;
  await emu.blobs.put(objectKey, bytes);
  charge(emu, account, price);

  const text = plan.lines.join('\n');
  emu.signatures.put(dialogueRecord({ text, language: languageByAnyHan(text), voices: plan.voices, audio: stream, atMs: emu.clock.now() }));
  const durationSec = Math.round(meta.durationMs) / 1000;
  const expiresAt = emu.clock.now() + URL_VALIDITY_MS;
  podcastStore(emu).add(account.id, {
    objectKey,
    durationSec,
    lines: plan.lines.length,
    pair: plan.pair,
    speed: plan.speed,
    createdAtMs: emu.clock.now(),
    urlExpiresAtMs: expiresAt,
  });
  emu.markDirty('podcasts', account.id);
  return { audioUrl: emu.downloadUrl('platform', objectKey, expiresAt), objectKey, durationSec, traceId: emu.ids.traceId(account.id) };
}
