// External command-line tools for tests, at most two at a time (the test machine has two cores).
import { execFile } from 'node:child_process';

let running = 0;
const queue: (() => void)[] = [];

/**
 * Runs a tool (at most two at a time) and answers its stdout and stderr; rejects with the command and
 * its stderr when it fails, or with how to install it when it is not there. The one subprocess runner
 * of the tests.
 */
export async function runTool(cmd: string, args: string[], input?: Buffer): Promise<{ stdout: Buffer; stderr: Buffer }> {
  if (running >= 2) await new Promise<void>((r) => queue.push(r));
  running++;
  try {
    return await new Promise((resolve, reject) => {
      const p = execFile(cmd, args, { encoding: 'buffer', maxBuffer: 1 << 28 }, (err, stdout, stderr) =>
        err ? reject(toolError(cmd, args, err, stderr)) : resolve({ stdout, stderr }),
      );
      if (input) p.stdin!.end(input);
    });
  } finally {
    running--;
    queue.shift()?.();
  }
}

/** Runs a tool and answers its stdout (runTool). */
export async function run(cmd: string, args: string[], input?: Buffer): Promise<Buffer> {
  return (await runTool(cmd, args, input)).stdout;
}

/** How to get each tool the tests run, for the one line a missing tool fails with. */
const INSTALL: Record<string, string> = {
  ffmpeg: 'Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg',
  ffprobe: 'it comes with ffmpeg (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg)',
  flac: 'Debian/Ubuntu: apt-get install flac; macOS: brew install flac',
  sox: 'Debian/Ubuntu: apt-get install sox; macOS: brew install sox',
};

function toolError(cmd: string, args: string[], err: { code?: unknown; message: string }, stderr: Buffer): Error {
  if (err.code === 'ENOENT') return new Error(`${cmd} is not installed, and the audio checks need it: ${INSTALL[cmd] ?? `install ${cmd}`}`);
  return new Error(`${cmd} ${args.join(' ')}: ${stderr.toString() || err.message}`);
}
