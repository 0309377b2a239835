// `npm start` as a user runs it: npm, a shell, then the emulator. No emulator of the file.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

describe('npm start', () => {
  it('a SIGTERM to npm reaches the emulator: it closes and frees its ports (no orphan left holding them)', async () => {
    const npm = spawn('npm', ['start', '--silent', '--', '--speech-port', '0', '--speech-backup-port', '0', '--platform-port', '0', '--log-level', 'warn'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout!.on('data', (d: Buffer) => (out += d));
    npm.stderr!.on('data', (d: Buffer) => (out += d));
    const exited = new Promise<number | null>((res) => npm.once('exit', (code) => res(code)));
    const deadline = Date.now() + 90_000;
    while (!/voice platform\s+http/.test(out)) {
      if (Date.now() > deadline) {
        npm.kill('SIGKILL');
        throw new Error(`no start-up banner: ${out}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const speech = /speech synthesis\s+(http:\S+)/.exec(out)![1]!;
    expect((await fetch(`${speech}/_emulator/health`)).status).toBe(200);
    npm.kill('SIGTERM');
    await exited;
    // The emulator itself got the signal: its listener is closed, nothing answers there any more.
    let answered = true;
    for (let i = 0; i < 50 && answered; i++) {
      answered = await fetch(`${speech}/_emulator/health`).then(
        () => true,
        () => false,
      );
      if (answered) await new Promise((r) => setTimeout(r, 100));
    }
    expect(answered, out).toBe(false);
  }, 120_000);
});
