/**
 * On a Node.js without node:sqlite (Node 20), the CLI says in one line which Node is needed, and the
 * library entry throws that line, instead of ERR_UNKNOWN_BUILTIN_MODULE and a stack. Run with the
 * system's older Node when the machine has one (Debian's /usr/bin/node is 20).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../../src/node-version.js';

const ROOT = join(import.meta.dirname, '..', '..');
const OLD_NODE = '/usr/bin/node';
const oldVersion = existsSync(OLD_NODE) ? spawnSync(OLD_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim() : '';

describe('the Node.js version the emulator needs', () => {
  it('22.13 or newer: older ones get one line naming the version needed and the one running', () => {
    expect(nodeVersionProblem('20.20.2')).toBe(
      'speech-emulator needs Node.js 22.13.0 or newer (it uses node:sqlite); this is Node.js v20.20.2: install Node.js 24 LTS (e.g. nvm install 24)',
    );
    expect(nodeVersionProblem('22.12.0')).toMatch(/^speech-emulator needs Node\.js 22\.13\.0 or newer .* this is Node\.js v22\.12\.0/);
    for (const fine of ['22.13.0', '22.20.1', '23.0.0', '24.11.0', process.versions.node]) expect(nodeVersionProblem(fine)).toBeNull();
  });

  it.runIf(oldVersion !== '' && nodeVersionProblem(oldVersion) !== null)(
    `on ${OLD_NODE} (Node ${oldVersion}): the CLI and the library say so in one line`,
    () => {
      const expected = nodeVersionProblem(oldVersion)!;
      const cli = spawnSync(OLD_NODE, ['--import', 'tsx', 'src/main.ts', '--speech-port', '0', '--speech-backup-port', '0', '--platform-port', '0'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: '' },
        timeout: 60_000,
      });
      expect(cli.status).toBe(1);
      expect(cli.stdout).toBe('');
      expect(cli.stderr).toBe(`${expected}\n`);
      const library = spawnSync(
        OLD_NODE,
        ['--import', 'tsx', '-e', "import('./src/index.ts').then(() => console.log('loaded'), (e) => console.log(e.message))"],
        {
          cwd: ROOT,
          encoding: 'utf8',
          env: { ...process.env, NODE_OPTIONS: '' },
          timeout: 60_000,
        },
      );
      expect(library.stdout.trim()).toBe(expected);
      expect(library.stderr).not.toMatch(/ERR_UNKNOWN_BUILTIN_MODULE/);
    },
  );
});
