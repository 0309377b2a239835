/**
 * Plain-code readings of the largest fixture, the speech voice catalogue (some 400 entries), for the
 * start-up check: zod's interpreted parse of it was about a tenth of a start's CPU. A reading accepts
 * only entries its schema surely accepts and gives the very value the schema gives; anything else
 * (a missing field, a wrong type, an empty string, an unknown gender, a dangling `same_voice_as`)
 * returns undefined, and the schema itself then checks the file and names the field.
 */

const GENDERS = new Set(['male', 'female', 'neutral']);

function text(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/**
 * `speech-voices.json` as its schema reads it (services/speech/fixtures.ts): `voice_name` (or its older
 * spelling `name`) becomes `voice_name`, unknown fields are dropped, fields keep the schema's order.
 */
export function readSpeechVoices(json: unknown): unknown[] | undefined {
  if (!Array.isArray(json)) return undefined;
  const out: Record<string, string>[] = [];
  const primaries = new Set<string>();
  for (const v of json) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    const e = v as Record<string, unknown>;
    const name = 'name' in e ? e.name : e.voice_name;
    if (!text(e.voice_id) || !text(name) || !text(e.language)) return undefined;
    if ('voice_name' in e && !text(e.voice_name)) return undefined;
    const voice: Record<string, string> = { voice_id: e.voice_id, voice_name: (e.voice_name as string | undefined) ?? name, language: e.language };
    if ('description' in e && !text(e.description)) return undefined;
    if (e.description !== undefined) voice.description = e.description as string;
    if ('gender' in e && !(typeof e.gender === 'string' && GENDERS.has(e.gender))) return undefined;
    if (e.gender !== undefined) voice.gender = e.gender as string;
    if ('same_voice_as' in e && !text(e.same_voice_as)) return undefined;
    if (e.same_voice_as !== undefined) voice.same_voice_as = e.same_voice_as as string;
    else primaries.add(e.voice_id);
    out.push(voice);
  }
  // The file's own rule: a second spelling names a voice that is not itself a second spelling.
  for (const v of out) if (v.same_voice_as !== undefined && !primaries.has(v.same_voice_as)) return undefined;
  return out;
}
