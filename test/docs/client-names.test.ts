// The client packages the docs tell a reader to install are the ones that still get releases.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('client package names in the docs', () => {
  it.each(['README.md', 'docs/clients.md', 'docs/python.md'])(
    "%s names LiveKit's Python plugin by its current distribution, livekit-plugins-minimax-ai (the old name stopped at 1.3.0)",
    (file) => {
      const text = read(file);
      expect(text).toContain('livekit-plugins-minimax-ai');
      // The old name only where the text says it stopped at 1.3.0.
      for (const m of text.matchAll(/livekit-plugins-minimax(?!-ai)/g)) {
        const around = text.slice(m.index, m.index + 160);
        expect(around, file).toMatch(/1\.3\.0/);
      }
    },
  );
});
