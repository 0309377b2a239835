// First: on a Node.js too old, an error says which is needed before anything imports node:sqlite.
import './library-node-check.js';
import { checkedConfig, ConfigError, configSchema, recordWithoutUpstream, type ConfigInput } from './config.js';
import { runEmulator, type RunningEmulator } from './app.js';
import { createLogger } from './logger.js';

export type { RunningEmulator } from './app.js';
export type { Config, ConfigInput } from './config.js';
export { ConfigError } from './config.js';
export { FixtureError } from './core/state/fixtures.js';
/** @internal */
export type { Emulator } from './core/emulator.js';
export * from './client/index.js';

export type StartOptions = Partial<ConfigInput>;

/**
 * Starts the emulator in-process, as a test suite does. Ports default to 0 (any free port), logs to
 * `warn`; returns the three base URLs and `close()`.
 */
export async function startEmulator(options: StartOptions = {}): Promise<RunningEmulator> {
  const raw: Record<string, unknown> = { speechPort: 0, speechBackupPort: 0, platformPort: 0, logLevel: 'warn', ...options };
  // A misspelt option (speech_port, strict) would otherwise be dropped in silence.
  const unknown = Object.keys(options).filter((k) => !(k in configSchema.shape));
  if (unknown.length) throw new ConfigError(`unknown option ${unknown.join(', ')} (options: ${Object.keys(configSchema.shape).join(', ')})`);
  // One line naming the option and what it must be, in the CLI's words.
  const config = checkedConfig(raw, (key) => `option ${key}`);
  const tapes = recordWithoutUpstream(config);
  if (tapes) throw new ConfigError('option record needs an upstream to forward to: upstreamSpeech and/or upstreamPlatform');
  const logger = createLogger(config.logLevel, false);
  return runEmulator(config, logger);
}
