/**
 * The conversation turn, apart from any transport: what the conversation sockets and the call room's
 * bot both do with what a user said. When an utterance has ended by its silence, the scripted reply
 * (conversation.json), its synthesis with the role's voice, its price, the added delays of
 * `--latency realistic`, and its settlement once spoken (the charge and the signature record that
 * lets the emulator recognise its own reply). The sockets' events and the room's frames are theirs.
 */
import { createHash } from 'node:crypto';
import type { SynthInput, VoiceEngine } from '../../../audio/index.js';
import type { Account } from '../../../core/state/accounts.js';
import type { Emulator } from '../../../core/emulator.js';
import { speechRecord, type SignatureRecord, type SpokenAudio } from '../../../core/state/signatures.js';
import { languageByAnyHan } from '../../shared/recognize.js';
import { audioPrice, charge } from '../../shared/charges.js';
import { compilePattern } from '../../../core/state/patterns.js';
import { trailingSilenceMs, type Utterance } from './utterance.js';

/** An utterance ends after this long without audio (emulator clock; the sockets' `/stream`). */
export const PAUSE_MS = 1500;
/** An utterance that held voice ends once this much silence followed it (in the audio itself). */
export const SILENCE_END_MS = 1000;

/** The voiced utterance has been followed by SILENCE_END_MS of silence: it is over. */
export function endedBySilence(utterance: Utterance): boolean {
  return trailingSilenceMs(utterance) >= SILENCE_END_MS;
}

/** The sample rate of the conversation sockets' reply audio (MP3 24 kHz mono). */
export const REPLY_SAMPLE_RATE = 24_000;

/** The synthesis of a reply with the role's voice (the same settings wherever a reply is spoken). */
export function replySynthInput(text: string, role: { voice_id: string }, engine: VoiceEngine, sampleRate = REPLY_SAMPLE_RATE): SynthInput {
  return {
    text,
    engine,
    voices: [{ id: role.voice_id, weight: 1 }],
    textNormalization: true,
    tags: true,
    sampleRate,
    channels: 1,
  };
}

/**
 * The scripted reply: the first rule of `conversation.json` whose regex matches the user's text, else
 * a default of the text's language picked by a hash of the text (same text, same reply).
 */
export function chooseReply(emu: Emulator, userText: string, language: string): { text: string; language: string } {
  const fixture = emu.fixtures.data['conversation.json'];
  for (const rule of fixture.rules) {
    // Linear time whatever the pattern (core/state/patterns.ts); the fixture's check compiled it already.
    if (compilePattern(rule.match, rule.flags).test(userText)) return { text: rule.reply, language: rule.language ?? languageByAnyHan(rule.reply, language) };
  }
  const lang = languageByAnyHan(userText, language);
  const sameLanguage = fixture.defaults.filter((d) => (d.language ?? languageByAnyHan(d.reply)) === lang);
  const pool = sameLanguage.length ? sameLanguage : fixture.defaults;
  const pick = pool[createHash('sha256').update(userText).digest().readUInt32BE(0) % pool.length]!;
  return { text: pick.reply, language: pick.language ?? languageByAnyHan(pick.reply, lang) };
}

/** Micro-units for `seconds` of reply audio. */
export function conversationPrice(emu: Emulator, seconds: number): number {
  return audioPrice(emu.fixtures.data['billing.json'].prices_micro.conversation_audio_second, Math.round(seconds * 1000));
}

/**
 * Added delays of `EMULATOR_LATENCY=realistic` (ms) before the text events; `none` adds nothing. They
 * imitate the real service's processing (first character well under its stated 3 s) and show up in
 * the timing fields. The reply audio is paced by the profile every audio stream has (REALISTIC_PACE
 * in core/stream/shaping.ts, through the stream guard), counted from the reply's synthesis.
 */
export interface LatencyProfile {
  asr: number;
  llmFirstToken: number;
  perToken: number;
}

export function latencyProfile(emu: Emulator): LatencyProfile {
  return emu.config.latency === 'realistic' ? { asr: 250, llmFirstToken: 600, perToken: 20 } : { asr: 0, llmFirstToken: 0, perToken: 0 };
}

/**
 * A reply was spoken: `seconds` of its audio are charged, and its signature record is kept so the
 * emulator recognises the reply wherever it is heard again (recognition, `hear`).
 */
export function settleReply(
  emu: Emulator,
  account: Account,
  spoken: { text: string; language: string; voiceId: string; summary: SpokenAudio; seconds: number },
): void {
  charge(emu, account, conversationPrice(emu, spoken.seconds));
  keepSpokenRecord(emu, spoken);
  emu.markDirty('accounts', account.id, account.id);
}

/** The signature record of speech the emulator made (content-addressed: keeping it twice is harmless). */
export function keepSpokenRecord(emu: Emulator, spoken: { text: string; language: string; voiceId: string; summary: SpokenAudio }): SignatureRecord {
  const record = speechRecord({ text: spoken.text, language: spoken.language, voices: [spoken.voiceId], summary: spoken.summary, atMs: emu.clock.now() });
  emu.signatures.put(record);
  return record;
}
