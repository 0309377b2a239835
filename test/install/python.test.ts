/**
 * The Python client and pytest fixture (clients/python), run by Debian's Python with its pytest
 * against the emulator of this checkout (started by the fixture from the sources).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const PYTHON = '/usr/bin/python3';

describe('Python client and pytest fixture', () => {
  it('python3 -m pytest clients/python passes', { timeout: 180_000 }, () => {
    expect(existsSync(PYTHON), `${PYTHON} (Debian's python3, with python3-pytest)`).toBe(true);
    const run = spawnSync(PYTHON, ['-m', 'pytest', 'clients/python', '-q', '-p', 'no:cacheprovider'], {
      cwd: ROOT,
      encoding: 'utf8',
      // The sources of this checkout, whatever dist/ holds; Node is the one running this test.
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        SPEECH_EMULATOR_COMMAND: `${join(ROOT, 'node_modules', '.bin', 'tsx')} ${join(ROOT, 'src', 'main.ts')}`,
        SPEECH_EMULATOR_URL: '',
      },
      timeout: 170_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.status, output).toBe(0);
    expect(output).toMatch(/\b\d+ passed\b/);
    expect(output).not.toMatch(/\b(failed|error)\b/);
  });
});
