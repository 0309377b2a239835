import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { baseApp, composeService, createEmulator } from '../../src/app.js';
import { configSchema, type ConfigInput } from '../../src/config.js';
import type { Emulator } from '../../src/core/emulator.js';
import { loggerOptions } from '../../src/logger.js';
import { setupPlatformApp } from '../../src/services/platform/app.js';
import { setupSpeechApp } from '../../src/services/speech/app.js';

/**
 * The two service apps of the foundation with one extra probe route each, so the shared pipeline
 * (account, faults, error shapes) can be tested before any operation of the specs exists.
 */
export interface ProbeApps {
  emu: Emulator;
  speechUrl: string;
  platformUrl: string;
  close(): Promise<void>;
}

export async function startProbeApps(
  options: Partial<ConfigInput>,
  extra: {
    speech?: (app: FastifyInstance, emu: Emulator) => void;
    platform?: (app: FastifyInstance, emu: Emulator) => void;
    /** Receives every log line (JSON) at info and above. */
    logLines?: string[];
  },
): Promise<ProbeApps> {
  const config = configSchema.parse({ seed: 't', logLevel: 'silent', ...options });
  const sink = extra.logLines;
  const logger = sink ? pino(loggerOptions('info'), { write: (line: string) => void sink.push(line) }) : pino({ level: 'silent' });
  const emu = await createEmulator(config, logger);
  const make = () => baseApp(logger);
  const speech = make();
  const platform = make();
  // Composed as the emulator composes its listeners, with the probe routes among the service's own.
  await composeService(speech, emu, 'speech', async (app) => {
    await setupSpeechApp(app, emu);
    extra.speech?.(app, emu);
  });
  await composeService(platform, emu, 'platform', async (app) => {
    await setupPlatformApp(app, emu);
    extra.platform?.(app, emu);
  });
  await speech.listen({ port: 0, host: '127.0.0.1' });
  await platform.listen({ port: 0, host: '127.0.0.1' });
  const url = (a: FastifyInstance) => `http://127.0.0.1:${(a.server.address() as AddressInfo).port}`;
  emu.urls = { speech: url(speech), speechBackup: url(speech), platform: url(platform) };
  return {
    emu,
    speechUrl: url(speech),
    platformUrl: url(platform),
    close: async () => {
      await Promise.allSettled([speech.close(), platform.close()]);
      await emu.close();
    },
  };
}
