// External command-line tools for tests, at most two at a time (the test machine has two cores).
import { execFile } from 'node:child_process';

let running = 0;
const queue: (() => void)[] = [];

/** Runs a tool and answers its stdout; rejects with the command and its stderr when it fails. */
export async function run(cmd: string, args: string[], input?: Buffer): Promise<Buffer> {
  if (running >= 2) await new Promise<void>((r) => queue.push(r));
  running++;
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      const p = execFile(cmd, args, { encoding: 'buffer', maxBuffer: 1 << 28 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${cmd} ${args.join(' ')}: ${stderr.toString()}`)) : resolve(stdout),
      );
      if (input) p.stdin!.end(input);
    });
  } finally {
    running--;
    queue.shift()?.();
  }
}
