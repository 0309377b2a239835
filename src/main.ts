#!/usr/bin/env node
// First: on a Node.js too old, one line says which is needed before anything imports node:sqlite.
import './cli-node-check.js';
import { createServer } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { CliAnswer, ConfigError, portSettings, readConfig, recordWithoutUpstream, type Config } from './config.js';
import { dataDirProblem } from './core/state/data-dir.js';
import { countOf as count } from './core/http/describe.js';

/** CLI: read flags and environment, start the three listeners, close gracefully on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  // A subcommand (`speech-emulator tapes list DIR`) runs and exits; anything else starts the emulator.
  const command = process.argv[2];
  if (command !== undefined && Object.hasOwn(SUBCOMMANDS, command)) return SUBCOMMANDS[command]!(process.argv.slice(3));
  let config: Config;
  try {
    config = readConfig(process.argv.slice(2), process.env);
  } catch (err) {
    // --help and --version are answers, not errors: stdout and exit 0, so `--help | less` works.
    if (err instanceof CliAnswer) {
      console.log(err.message);
      process.exit(0);
    }
    if (err instanceof ConfigError) refuse(err.message);
    throw err;
  }
  // Everything that can be known before a listener opens is checked first: no "listening" line precedes a refusal.
  const problem = recordWithoutUpstream(config) ?? (await portProblem(config)) ?? (config.dataDir !== undefined ? dataDirRefusal(config.dataDir) : null);
  if (problem) refuse(problem);

  // Loaded only once the configuration is valid: a bad flag or --help answers at once.
  const [{ runEmulator }, { FixtureError }, { createLogger }] = await Promise.all([
    import('./app.js'),
    import('./core/state/fixtures.js'),
    import('./logger.js'),
  ]);
  const logger = createLogger(config.logLevel);
  let running;
  try {
    running = await runEmulator(config, logger);
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { port?: number };
    const busy = e.code === 'EADDRINUSE' ? portSettings(config).find((p) => p.port !== 0 && e.message.includes(`:${p.port}`)) : undefined;
    const reason =
      err instanceof FixtureError
        ? err.message
        : busy
          ? `${busy.setting.flag} ${busy.port} (${busy.service}) is already in use; choose another with ${busy.setting.flag} or ${busy.setting.env}`
          : e.code === 'EADDRINUSE'
            ? `port already in use (${e.message})`
            : e.message;
    console.error(`speech-emulator: cannot start: ${reason}`);
    process.exit(busy ? 2 : 1);
  }
  const held = holdHeap();
  const stopRelease =
    held && config.idleReleaseMs > 0
      ? (await import('./core/idle-release.js')).releaseMemoryWhenIdle(running.emulator, config.idleReleaseMs, {
          released: (r) => logger.info({ rss_before_mb: r.rssBeforeMb, rss_after_mb: r.rssAfterMb, ms: r.ms }, 'idle: memory given back'),
        })
      : () => undefined;
  // Handlers first: whoever reads the banner may signal at once. A second signal ends the process at once.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      console.error(`speech-emulator: ${signal} again: exiting without waiting for open connections`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    stopping = true;
    stopRelease();
    logger.info({ signal }, 'closing (send the signal again to exit at once)');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    running
      .close()
      .then(() => process.exit(0))
      .catch(() => process.exit(1));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  console.log(
    [
      'speech-emulator is running',
      `  speech synthesis  ${running.speechUrl}`,
      `  speech backup     ${running.speechBackupUrl}`,
      `  voice platform    ${running.platformUrl}`,
      `  control plane     ${running.speechUrl}/_emulator (on every listener)`,
      `  inspector         ${running.speechUrl}/_emulator/ (open in a browser)`,
      `  data              ${running.emulator.persistent ? running.emulator.dataDir : 'in memory (temporary folder, removed at exit)'}`,
      ...(running.restored ? [`  restored          ${restoredText(running.restored)}`] : []),
    ].join('\n'),
  );
}

/** What a start found in its data dir, for the banner: `2 accounts, 5 resources, 1 fault rule (dropped: --reset-faults-on-start)`. */
function restoredText(r: { accounts: number; resources: number; fault_rules: number; fault_rules_dropped: number; orphan_files_swept: number }): string {
  const swept = r.orphan_files_swept ? `; swept ${count(r.orphan_files_swept, 'stored file')} no record names` : '';
  return restoredParts(r) + swept;
}

function restoredParts(r: { accounts: number; resources: number; fault_rules: number; fault_rules_dropped: number }): string {
  if (!r.accounts && !r.resources && !r.fault_rules) return 'nothing (a new data dir)';
  const rules = r.fault_rules_dropped
    ? `${count(r.fault_rules, 'fault rule')} (dropped: --reset-faults-on-start)`
    : r.fault_rules
      ? `${count(r.fault_rules, 'fault rule')} still queued (GET /_emulator/faults; --reset-faults-on-start drops them)`
      : '0 fault rules';
  return `${count(r.accounts, 'account')}, ${count(r.resources, 'resource')}, ${rules}`;
}

/**
 * Two heap policies for the CLI's process, each left alone when node is given the flag itself:
 * - The young generation keeps the size the start gave it (16 MB). Left to itself, V8 doubles it while
 *   many requests allocate fast (a load of refused requests took it to 128 MB: RSS went from about 110
 *   to over 210 MB in the first seconds, with 20 MB of live objects); a smaller one is collected more
 *   often, at well under a millisecond each. V8 reads the growth factor each time it would grow the space.
 * - The old generation may grow to 1.2 times what the last full collection kept, not up to 4 times. An
 *   audio answer's buffers (samples, MP3 frames, the socket's copy of the body) live outside the JS heap
 *   and are freed only when their JS objects are collected: with the default growth, 50 clients of MP3
 *   synthesis kept 30-55 MB of such garbage and the C allocator's arena grew with it (peak 182-191 MB
 *   against 139-146 MB, the same CPU per request). V8 reads the factor at each collection.
 * The CLI's process only: a test process that starts emulators keeps its own heap settings. Answers
 * false for the build's own start, which also gives no memory back when idle.
 */
function holdHeap(): boolean {
  // The build's own start writes the code cache at its exit, and V8 stamps a cache with the flags of the
  // process that made it: written after this change, a fresh start (which reads the cache before it gets
  // here) would reject it.
  if (process.env.SPEECH_EMULATOR_CODE_CACHE === 'write') return false;
  const given = (flag: string) => process.execArgv.some((a) => a.startsWith(flag)) || (process.env.NODE_OPTIONS ?? '').includes(flag);
  if (!given('--semi-space-growth-factor')) setFlagsFromString('--semi-space-growth-factor=1');
  if (!given('--heap-growing-percent')) setFlagsFromString('--heap-growing-percent=20');
  // The collector of streamed bodies and of the idle release (core/http/memory.ts) needs V8's gc extension.
  // Set here, at every start, so the flags that stamp Node's compile cache of packages loaded later are
  // the same from run to run (set at a first use, they would differ by when that came).
  setFlagsFromString('--expose-gc');
  return true;
}

/** The subcommands, each loaded only when it runs. */
const SUBCOMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  tapes: async (args) => {
    const { runTapesCommand } = await import('./tapes/cli.js');
    // `tapes check` starts an emulator of its own (free ports, no logs) to answer by its rules.
    const startEmulator = async (options: { seed?: string; fixturesDir?: string }) =>
      (await import('./index.js')).startEmulator({ logLevel: 'silent', ...options });
    const { out, status } = await runTapesCommand(args, { startEmulator });
    (status === 0 ? console.log : console.error)(out);
    process.exit(status);
  },
};

function refuse(message: string): never {
  console.error(`speech-emulator: ${message}`);
  process.exit(2);
}

function dataDirRefusal(dir: string): string | null {
  const problem = dataDirProblem(dir);
  return problem ? `--data-dir ${dir} cannot hold the emulator's state: ${problem}` : null;
}

/** Two settings asking for one port, or a port another process holds: named by flag and service. */
async function portProblem(config: Config): Promise<string | null> {
  const ports = portSettings(config).filter((p) => p.port !== 0);
  for (const [i, a] of ports.entries()) {
    const b = ports.slice(i + 1).find((p) => p.port === a.port);
    if (b) return `${a.setting.flag} and ${b.setting.flag} both ask for port ${a.port}; the ${a.service} and the ${b.service} need one each`;
  }
  for (const p of ports) {
    const code = await tryListen(config.host, p.port);
    if (code === 'EADDRINUSE') return `${p.setting.flag} ${p.port} (${p.service}) is already in use; choose another with ${p.setting.flag} or ${p.setting.env}`;
    if (code) return `${p.setting.flag} ${p.port} (${p.service}) cannot be listened on at ${config.host} (${code})`;
  }
  return null;
}

/** Opens and closes a listener on host:port: the error code when that fails, else null. */
function tryListen(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

void main();
