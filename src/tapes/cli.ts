/**
 * `speech-emulator tapes <command>`: the tapes of a folder as fixtures (docs/tapes.md). Each command is one entry of
 * COMMANDS: its usage line and what it does; it answers the text to print and the exit status.
 */
import { stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FILES_DIR, TapeError, type Tape } from './format.js';
import { fileRefsIn, TapeStore } from './store.js';

export interface CommandResult {
  out: string;
  status: number;
}

export interface TapesCommand {
  usage: string;
  run(args: string[]): Promise<CommandResult>;
}

class UsageError extends Error {}

function kindOf(tape: Tape): string {
  const a = tape.answer;
  if (a.stream) return a.stream.kind;
  const body = a.body!;
  return 'json' in body ? 'json' : 'text' in body ? 'text' : 'file' in body ? 'bytes' : 'multipart' in body ? 'form' : 'empty';
}

async function open(dir: string | undefined): Promise<TapeStore> {
  if (!dir) throw new UsageError('a tape folder is needed');
  return TapeStore.open(dir);
}

const list: TapesCommand = {
  usage: 'tapes list DIR [--json]      the tapes of a folder: id, operation, status, answer kind, account, used by the last replay',
  async run(args) {
    const json = args.includes('--json');
    const store = await open(args.find((a) => !a.startsWith('--')));
    const used = await store.readUsed();
    const rows = [...store.tapes.values()].map((t) => ({
      id: t.id,
      operation: `${t.service} ${t.operation}`,
      status: t.answer.status,
      kind: kindOf(t),
      account: t.account ?? 'shared',
      recorded_at: t.recorded_at,
      used: used === null ? null : used.has(t.id),
    }));
    if (json) return { out: JSON.stringify({ tapes: rows }, null, 2), status: 0 };
    if (rows.length === 0) return { out: `${store.dir}: no tapes`, status: 0 };
    const width = Math.max(...rows.map((r) => r.id.length));
    const lines = rows.map(
      (r) =>
        `${r.id.padEnd(width)}  ${String(r.status).padEnd(3)}  ${r.kind.padEnd(6)}  ${r.operation}${r.account === 'shared' ? '' : `  account ${r.account}`}${r.used === false ? '  (unused by the last replay)' : ''}`,
    );
    return { out: [...lines, `${rows.length} tape${rows.length === 1 ? '' : 's'} in ${store.dir}`].join('\n'), status: 0 };
  },
};

const show: TapesCommand = {
  usage: 'tapes show DIR ID | tapes show FILE.json   one tape as written, and the files it references with their sizes',
  async run(args) {
    const [first, second] = args.filter((a) => !a.startsWith('--'));
    if (!first) throw new UsageError('a tape is needed: DIR ID, or the path of its .json');
    const [dir, id] = second !== undefined ? [first, second.replace(/\.json$/, '')] : [dirname(first), basename(first).replace(/\.json$/, '')];
    const store = await open(dir);
    const tape = store.tapes.get(id);
    if (!tape) {
      const ids = [...store.tapes.keys()];
      const near = ids.filter((x) => x.startsWith(id.split('-').slice(0, 3).join('-'))).slice(0, 3);
      return { out: `no tape ${id} in ${dir}${near.length ? `; tapes of the same service: ${near.join(', ')}` : ''}`, status: 1 };
    }
    const files = [...new Set([...fileRefsIn([tape.request, tape.answer, tape.downloads])].map((r) => r.$file))];
    const sizes = await Promise.all(files.map(async (f) => `  ${FILES_DIR}/${f}  ${(await stat(join(dir, FILES_DIR, f))).size} bytes`));
    return { out: [JSON.stringify(tape, null, 2), '', files.length ? 'files:' : 'files: none', ...sizes].join('\n'), status: 0 };
  },
};

const prune: TapesCommand = {
  usage: 'tapes prune DIR [--dry-run]  drops the tapes the last replaying run did not use, and the files no tape references',
  async run(args) {
    const dry = args.includes('--dry-run');
    const store = await open(args.find((a) => !a.startsWith('--')));
    const used = await store.readUsed();
    if (used === null)
      return { out: `${store.dir}: no replaying run has left its list of used tapes (.used.json): run the suite with --replay first`, status: 1 };
    const unused = [...store.tapes.keys()].filter((id) => !used.has(id));
    if (dry) return { out: [...unused.map((id) => `would drop ${id}`), `${unused.length} of ${store.tapes.size} tapes unused`].join('\n'), status: 0 };
    for (const id of unused) await store.removeTape(id);
    const files = await store.pruneFiles();
    return {
      out: [
        ...unused.map((id) => `dropped ${id}`),
        `${unused.length} tapes dropped, ${files.length} files no tape references removed; ${store.tapes.size} tapes kept`,
      ].join('\n'),
      status: 0,
    };
  },
};

/** The subcommands of `tapes`, by name. */
export const COMMANDS: Record<string, TapesCommand> = { list, show, prune };

export function tapesUsage(): string {
  return ['usage:', ...Object.values(COMMANDS).map((c) => `  speech-emulator ${c.usage}`), '', 'The tape format and the recipe: docs/tapes.md'].join('\n');
}

/** Runs `tapes <command> …`: the text to print (stdout on success, stderr otherwise) and the exit status. */
export async function runTapesCommand(args: string[]): Promise<CommandResult> {
  const [name, ...rest] = args;
  if (!name || name === '--help' || name === '-h') return { out: tapesUsage(), status: name ? 0 : 2 };
  const command = COMMANDS[name];
  if (!command) return { out: `speech-emulator tapes: unknown command ${name}\n${tapesUsage()}`, status: 2 };
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) return { out: `speech-emulator tapes ${name}: ${err.message}\n  speech-emulator ${command.usage}`, status: 2 };
    if (err instanceof TapeError) return { out: `speech-emulator tapes ${name}: ${err.message}`, status: 1 };
    throw err;
  }
}
