import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export interface ChildEmulator {
  child: ChildProcess;
  speechUrl: string;
  platformUrl: string;
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<string>;
  output(): string;
}

/** Options of the node process that runs the CLI. */
export interface NodeOptions {
  /** Go before the entry (e.g. an `--import` that watches or changes the process). */
  flags?: string[];
  /** Added to the environment. */
  env?: NodeJS.ProcessEnv;
}

/** `node [flags] --import tsx src/main.ts …args` from the project's root, stdout and stderr piped. */
function startCli(args: string[], node: NodeOptions): ChildProcess {
  return spawn(process.execPath, [...(node.flags ?? []), '--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...node.env },
  });
}

export interface CliRun {
  out: string;
  err: string;
  /** The exit code (-1 when a signal ended it). */
  status: number;
}

/**
 * The CLI as its own process (a command such as `tapes list`, or a start it refuses), run to its end. One that has
 * not ended after `timeoutMs` is killed, and the run rejects with what it printed: no process outlives its test.
 */
export function runCli(args: string[], node: NodeOptions = {}, timeoutMs = 60_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = startCli(args, node);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    child.stderr!.on('data', (d: Buffer) => (err += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`speech-emulator ${args.join(' ')} did not end in ${timeoutMs} ms:\n${out}${err}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ out, err, status: code ?? -1 });
    });
  });
}

/**
 * The CLI as its own process (`node --import tsx src/main.ts`, no wrapper process in between, so a
 * signal reaches the emulator itself), on free loopback ports; resolves once it printed its URLs.
 * `node.flags` go before the entry (e.g. an `--import` that watches the process), `node.env` adds variables.
 */
export function spawnEmulator(args: string[], timeoutMs = 60_000, node: NodeOptions = {}): Promise<ChildEmulator> {
  const child = startCli(['--host', '127.0.0.1', '--speech-port', '0', '--speech-backup-port', '0', '--platform-port', '0', ...args], node);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (out += d));
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? String(code))));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`emulator did not start in ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = () => {
      const speech = /speech synthesis\s+(http:\/\/\S+)/.exec(out)?.[1];
      const platform = /voice platform\s+(http:\/\/\S+)/.exec(out)?.[1];
      if (!speech || !platform) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({ child, speechUrl: speech, platformUrl: platform, exited, output: () => out });
    };
    child.stdout!.on('data', onData);
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`emulator exited (${how}) before it started:\n${out}`));
    });
  });
}
