#!/usr/bin/env node
import { ConfigError, readConfig } from './config.js';

/** CLI: read flags and environment, start the three listeners, close gracefully on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  let config;
  try {
    config = readConfig(process.argv.slice(2), process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      // --help is an answer, not an error: stdout and exit 0, so `--help | less` works.
      if (/^usage:/.test(err.message)) {
        console.log(err.message);
        process.exit(0);
      }
      console.error(`speech-emulator: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  // Loaded only once the configuration is valid: a bad flag or --help answers at once.
  const [{ runEmulator }, { FixtureError }, { createLogger }] = await Promise.all([import('./app.js'), import('./core/fixtures.js'), import('./logger.js')]);
  const logger = createLogger(config.logLevel);
  let running;
  try {
    running = await runEmulator(config, logger);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const reason = err instanceof FixtureError ? err.message : e.code === 'EADDRINUSE' ? `port already in use (${e.message})` : e.message;
    console.error(`speech-emulator: cannot start: ${reason}`);
    process.exit(1);
  }
  // Handlers first: whoever reads the banner may signal at once.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'closing');
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
      `  data              ${running.emulator.persistent ? running.emulator.dataDir : 'in memory (temporary folder, removed at exit)'}`,
    ].join('\n'),
  );
}

void main();
