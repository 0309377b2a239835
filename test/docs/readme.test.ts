// The README's examples, run as a reader would run them: its curl blocks against a running emulator, its
// TypeScript block as a script. A README example that stops working fails here.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { emulatorForFile } from '../helpers/emulator.js';

const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const run = promisify(execFile);
const { emu } = emulatorForFile();
const tmp = mkdtempSync(join(tmpdir(), 'readme-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The fenced blocks of one language, in order. */
function blocks(lang: string): string[] {
  return [...README.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

/** Runs one sh block against this file's emulator (the README's addresses point at the default ports). */
async function sh(block: string): Promise<string[]> {
  const script = block.replaceAll('http://127.0.0.1:8900', emu.speechUrl).replaceAll('http://127.0.0.1:8910', emu.platformUrl);
  // One output line per curl: each command's answer is read on its own.
  const commands = script.split(/\n(?=curl )/).map((c) => `${c.trim()}; echo`);
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', commands.join('\n')]);
  return stdout.trim().split('\n');
}

describe('README examples', () => {
  const curlBlocks = blocks('sh').filter((b) => b.trimStart().startsWith('curl'));

  it('has the three curl examples of the quick start', () => {
    expect(curlBlocks).toHaveLength(3);
  });

  it('a first request: audio_length 2024 ms, as the text says', async () => {
    const [answer] = await sh(curlBlocks[0]!);
    const body = JSON.parse(answer!);
    expect(body.base_resp.status_code).toBe(0);
    expect(body.extra_info.audio_length).toBe(2024);
    expect(README).toContain('`audio_length` 2024');
  });

  it('a first fault: base_resp 1002', async () => {
    const [answer] = await sh(curlBlocks[1]!);
    expect(JSON.parse(answer!).base_resp.status_code).toBe(1002);
  });

  it('then the journal holds both and verify counts the one success', async () => {
    const [journal, verify] = await sh(curlBlocks[2]!);
    const entries = JSON.parse(journal!).entries;
    expect(entries.map((e: { response: { code: number } }) => e.response.code)).toEqual([1002, 0]);
    expect(JSON.parse(verify!)).toMatchObject({ ok: true, count: 1 });
  });

  it('the in-process TypeScript example runs as written: the fault, then the audio, then a verify that holds', async () => {
    const [ts] = blocks('ts');
    const script = join(tmp, 'in-process.mts');
    writeFileSync(script, ts!.replace("from 'speech-emulator'", `from ${JSON.stringify(join(ROOT, 'src', 'index.ts'))}`));
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { cwd: ROOT });
    const [code, ms] = stdout.trim().split(' ').map(Number);
    expect(code).toBe(1002);
    expect(ms).toBeGreaterThan(560);
  }, 60_000);
});
