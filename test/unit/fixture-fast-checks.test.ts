import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REGISTRY } from '../../src/app.js';
import { validateFixture } from '../../src/core/state/fixtures.js';
import { speechFixtures } from '../../src/services/speech/fixtures.js';
import { readSpeechVoices } from '../../src/services/speech/voices/fixture-read.js';

const schema = speechFixtures['speech-voices.json'].schema;
const shipped = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'speech-voices.json'), 'utf8')) as Record<string, unknown>[];

/** The plain reading gives what the schema gives, field order included (JSON text compared). */
function sameAsSchema(json: unknown): void {
  const read = readSpeechVoices(json);
  expect(read).toBeDefined();
  expect(JSON.stringify(read)).toBe(JSON.stringify(schema.parse(json)));
  expect(read).toStrictEqual(schema.parse(json));
}

describe('the speech voice catalogue read without zod at start-up', () => {
  it('reads the shipped catalogue exactly as its schema does', () => {
    expect(shipped.length).toBeGreaterThan(400);
    sameAsSchema(shipped);
  });

  it('reads both spellings of the display name, drops unknown fields and keeps the schema order', () => {
    sameAsSchema([
      { extra: 1, gender: 'male', language: 'English', voice_name: 'A', voice_id: 'a' },
      { voice_id: 'b', name: 'B', language: 'Chinese', description: 'Calm.', same_voice_as: 'a' },
      { voice_id: 'c', name: 'C old', voice_name: 'C new', language: 'English', gender: 'neutral' },
    ]);
  });

  it.each([
    ['not a list', { voice_id: 'a' }],
    ['an entry that is not an object', ['a']],
    ['no voice_id', [{ voice_name: 'A', language: 'en' }]],
    ['an empty voice_id', [{ voice_id: '', voice_name: 'A', language: 'en' }]],
    ['no display name', [{ voice_id: 'a', language: 'en' }]],
    ['a display name that is not text', [{ voice_id: 'a', name: 3, language: 'en' }]],
    ['an empty voice_name beside name', [{ voice_id: 'a', name: 'A', voice_name: '', language: 'en' }]],
    ['no language', [{ voice_id: 'a', voice_name: 'A' }]],
    ['an empty description', [{ voice_id: 'a', voice_name: 'A', language: 'en', description: '' }]],
    ['an unknown gender', [{ voice_id: 'a', voice_name: 'A', language: 'en', gender: 'other' }]],
    ['same_voice_as naming nobody', [{ voice_id: 'a', voice_name: 'A', language: 'en', same_voice_as: 'z' }]],
    [
      'same_voice_as naming a second spelling',
      [
        { voice_id: 'a', voice_name: 'A', language: 'en' },
        { voice_id: 'b', voice_name: 'B', language: 'en', same_voice_as: 'a' },
        { voice_id: 'c', voice_name: 'C', language: 'en', same_voice_as: 'b' },
      ],
    ],
  ])('leaves %s to the schema, which names the field', (_what, json) => {
    expect(readSpeechVoices(json)).toBeUndefined();
    expect(schema.safeParse(json).success).toBe(false);
    expect(validateFixture(REGISTRY.fixtures, 'speech-voices.json', json).ok).toBe(false);
  });

  it('the refusal of a broken catalogue is worded by the schema as before', () => {
    const broken = [...shipped.slice(0, 3), { voice_id: 'x', language: 'en' }];
    expect(validateFixture(REGISTRY.fixtures, 'speech-voices.json', broken)).toEqual({
      ok: false,
      message: 'field 3.name: voice_name (the display name) is required',
    });
  });
});
