/**
 * The official MiniMax CLI (npm `mmx-cli`) as the peer tests run it: its own `bin` entry
 * (`dist/mmx.mjs`) as a child process of this Node, pointed at a speech listener by `--base-url`
 * alone, with `--region global` (so it never probes a region) and `--api-key` (so it never looks
 * for a saved login). HOME and MMX_CONFIG_DIR are a temporary directory, so nothing it writes
 * reaches the real home; CI is set and stdout/stderr are pipes, so it never checks for updates;
 * proxy variables are left out; and a preload makes any request to a host other than loopback
 * fail loudly instead of leaving the machine.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The CLI's own entry, read from its package's `bin`. */
export function mmxEntry(): string {
  const pkgFile = require.resolve('mmx-cli/package.json');
  const bin = (require(pkgFile) as { bin: Record<string, string> }).bin.mmx!;
  return join(dirname(pkgFile), bin);
}

/** The installed version of the CLI, for messages. */
export const mmxVersion = (): string => (require('mmx-cli/package.json') as { version: string }).version;

const LOOPBACK_ONLY = join(import.meta.dirname, 'mmx-loopback-only.mjs');

export interface MmxRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** stdout as text. */
  out: string;
  /** stdout parsed as JSON (the CLI's `--output json`), or undefined. */
  json: any;
}

export interface MmxOptions {
  baseUrl: string;
  key: string;
  /** Working directory and HOME of the process (a temporary directory of the test file). */
  home: string;
  /** Bytes for stdin. */
  stdin?: Buffer | string;
  /** Leave out `--output json` (for commands whose stdout is not JSON, e.g. `--stream`). */
  rawOutput?: boolean;
  /** Leave out `--region global` (the CLI then probes the real regional hosts, which the preload refuses). */
  noRegion?: boolean;
  timeoutMs?: number;
}

/** Runs `mmx <args>` with the emulator settings appended; resolves when the process exits. */
export function mmx(args: string[], opts: MmxOptions): Promise<MmxRun> {
  const full = [
    '--import',
    LOOPBACK_ONLY,
    mmxEntry(),
    ...args,
    '--base-url',
    opts.baseUrl,
    ...(opts.noRegion ? [] : ['--region', 'global']),
    '--api-key',
    opts.key,
    '--non-interactive',
    ...(opts.rawOutput ? [] : ['--output', 'json']),
  ];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: opts.home,
    MMX_CONFIG_DIR: join(opts.home, '.mmx'),
    CI: '1',
    NO_COLOR: '1',
    TZ: 'UTC',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, full, { cwd: opts.home, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mmx ${args.join(' ')} did not finish in ${opts.timeoutMs ?? 20_000} ms:\n${err}`));
    }, opts.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out);
      const text = stdout.toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr: err, out: text, json });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}
