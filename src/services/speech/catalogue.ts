/**
 * The speech service's catalogue (fixtures/speech-models.json): which models `/v1/t2a_v2`, the
 * WebSocket and async synthesis accept, the emotions of each, and which read interjection tags as
 * sounds. Answers are checks that throw the 2013 a client sees, naming the accepted values.
 */
import type { TagName } from '../../audio/index.js';
import type { Emulator } from '../../core/emulator.js';
import { invalidParams } from './errors.js';

export interface ModelEntry {
  model: string;
  emotions: string[];
  interjection_tags: boolean;
  unsupported_language_boosts: string[];
}

function catalogue(emu: Emulator) {
  return emu.fixtures.data['speech-models.json'];
}

/** The model a request named (legacy aliases resolved), or the 2013 listing the models. */
export function modelOf(emu: Emulator, name: string): ModelEntry {
  const c = catalogue(emu);
  const resolved = Object.hasOwn(c.aliases, name) ? c.aliases[name]! : name;
  const entry = c.models.find((m) => m.model === resolved);
  if (!entry) throw invalidParams(`model must be one of ${c.models.map((m) => m.model).join(', ')} (got ${name})`);
  return entry;
}

/**
 * Checks `voice_setting.emotion` against the model's list and answers the emotion the audio gets:
 * a legacy value the service still takes (`neutral`) is rendered as the emotion the catalogue maps it to.
 */
export function emotionOf(emu: Emulator, model: ModelEntry, emotion: string): string {
  const legacy = catalogue(emu).legacy_emotions;
  const rendered = Object.hasOwn(legacy, emotion) ? legacy[emotion]! : emotion;
  if (model.emotions.includes(rendered)) return rendered;
  throw invalidParams(`voice_setting.emotion ${emotion} is not supported by ${model.model}; it accepts ${model.emotions.join(', ')}`);
}

/** Checks `language_boost` against the languages the model refuses. */
export function checkLanguageBoost(model: ModelEntry, boost: string): void {
  if (!model.unsupported_language_boosts.includes(boost)) return;
  throw invalidParams(`language_boost ${boost} is not supported by ${model.model} (it does not support ${model.unsupported_language_boosts.join(', ')})`);
}

/** The interjections a model makes into sounds, or undefined when it reads them as text. */
export function interjectionsOf(emu: Emulator, model: ModelEntry): Record<string, TagName> | undefined {
  return model.interjection_tags ? catalogue(emu).interjection_tags : undefined;
}
