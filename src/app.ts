import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { ControlClient } from './client/index.js';
import { registerDocuments } from './control/documents.js';
import { registerRoot } from './control/pages.js';
import { controlPlane } from './control/routes.js';
import { corsHeaders } from './core/http/cors.js';
import { loadSpeechEngine } from './audio/index.js';
import { Emulator } from './core/emulator.js';
import { loadFixtures } from './core/state/fixtures.js';
import { installAccountSweep } from './core/account-sweep.js';
import { requestIdOnUpgrades } from './core/http/request-log.js';
import type { TapesOpener } from './core/http/exchange.js';
import type { BusyAnswer } from './core/http/listener-limits.js';
import { listenerServers } from './core/http/listeners.js';
import { parserErrorHandler } from './core/http/parser-errors.js';
import { schemaValidator } from './core/http/schema-validator.js';
import { composeRegistry, type ServiceRegistration } from './core/service.js';
import type { Listener } from './core/http/request-context.js';
import { platformService } from './services/platform/app.js';
import { sharedFixtures } from './services/shared/fixtures.js';
import { speechService } from './services/speech/app.js';

export interface RunningEmulator {
  /** @internal The emulator's inner object, for the project's own tests; not part of the public API. */
  emulator: Emulator;
  /** The typed control-plane client of this emulator (speech-emulator/client). */
  control: ControlClient;
  speechUrl: string;
  speechBackupUrl: string;
  platformUrl: string;
  /** With a data dir: what the start found there and loaded (counts), and the fault rules it dropped. */
  restored?: RestoredState;
  close(): Promise<void>;
}

/** What a start loaded from its data dir. */
export interface RestoredState {
  accounts: number;
  /** Records of every state area (voices, files, tasks, sessions, …). */
  resources: number;
  fault_rules: number;
  /** Fault rules dropped by `resetFaultsOnStart` (they are not in `fault_rules`'s effect any more). */
  fault_rules_dropped: number;
  /** Stored files no record named (left by a stop between a file's write and its record), removed by the start. */
  orphan_files_swept: number;
}

/** How long close() lets in-flight responses finish before it cuts their connections. */
const CLOSE_GRACE_MS = 3000;

const JSON_BODY_LIMIT = 1024 * 1024;

/** Codes of a client that went away while its answer was being written. */
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ERR_STREAM_DESTROYED']);

/** A client leaving mid-response is routine: one debug line, no stack. Other stream errors keep Fastify's warning. */
class EmulatorLogs extends LogController {
  override streamError(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
    if (CLIENT_GONE.has(error.code ?? '')) return void reply.log.debug({ code: error.code }, 'client left before the end of the response');
    super.streamError(error, request, reply);
  }
}

/** The answer to a URL the router cannot read (bad %-escape), in the shape of the service it reached. */
export type BadUrlAnswer = (message: string, url?: string) => { status: number; headers?: Record<string, string>; body: unknown };

/** The control plane has its own shape on every listener (see control/routes.ts). */
function controlOr(service: BadUrlAnswer): BadUrlAnswer {
  return (message, url) => (url?.startsWith('/_emulator') ? { status: 400, body: { error: { message } } } : service(message, url));
}

/** The control plane's shape for a refusal at HTTP 503 on every listener. */
function controlOr503(service: BusyAnswer): BusyAnswer {
  return (message, url) => (url?.startsWith('/_emulator') ? { status: 503, body: { error: { message } } } : service(message, url));
}

/**
 * Every schema is a zod schema. Given as the compilers' factories, Fastify never loads its default
 * Ajv and fast-json-stringify compilers, which no route uses (Fastify types these factories as Ajv's).
 */
const ZOD_COMPILERS = {
  buildValidator: () => schemaValidator,
  buildSerializer: () => serializerCompiler,
} as unknown as NonNullable<FastifyServerOptions['schemaController']>['compilersFactory'];

/** A Fastify app with the emulator's settings (exported for tests that add probe routes). */
export function baseApp(
  logger: Logger,
  serverFactory?: (handler: (req: IncomingMessage, res: ServerResponse) => void) => Server,
  badUrl?: BadUrlAnswer,
  corsOrigins: string[] = [],
): FastifyInstance {
  const app: FastifyInstance = Fastify({
    // Without this the router answers in Fastify's own shape, before any hook of ours runs.
    ...(badUrl
      ? {
          frameworkErrors: (err: Error, req: FastifyRequest, reply: FastifyReply) => {
            const answer = badUrl(err.message, req.raw.url);
            // No hook runs for a URL the router cannot read: the CORS headers are added here.
            const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
            void reply
              .code(answer.status)
              .headers({ ...corsHeaders(corsOrigins, origin), ...answer.headers, 'content-type': 'application/json; charset=utf-8' })
              .send(JSON.stringify(answer.body));
          },
        }
      : {}),
    // A request the HTTP parser refuses (bad bytes in the path, conflicting length headers, oversized
    // headers) is answered in the service's shape too.
    ...(badUrl ? { clientErrorHandler: parserErrorHandler(badUrl) } : {}),
    loggerInstance: logger,
    // No per-request child (making one is a visible share of a cheap answer): a request's lines name
    // it by its journal entry's id (core/http/request-log.ts), so Fastify's own `req-N` ids never show.
    childLoggerFactory: (parent) => parent,
    // One line per request is written when it finishes (core/http/request-log.ts), not by Fastify.
    logController: new EmulatorLogs({ disableRequestLogging: true }),
    bodyLimit: JSON_BODY_LIMIT,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // Real keys are long JWT-like strings and appear as a path parameter on the control plane.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 4096 },
    schemaController: { compilersFactory: ZOD_COMPILERS },
    ...(serverFactory ? { serverFactory } : {}),
  }) as unknown as FastifyInstance;
  // Every route's schema is read the one way (core/http/schema-validator.ts): a refusal names its first problem.
  app.setValidatorCompiler(schemaValidator);
  app.setSerializerCompiler(serializerCompiler);
  // A request answered before its body was read (a multipart body without a boundary, a refused part):
  // the rest is read and dropped, or the next request on the keep-alive connection waits behind it
  // until the body timeout and gets its 408.
  app.addHook('onResponse', (req, _reply, done) => {
    if (!req.raw.complete) req.raw.resume();
    done();
  });
  return app;
}

/**
 * One listener's app, composed: the API document generator first (it must see every route), then the
 * service (its lifecycle, error shape and operations), then the index at `/` and the control plane
 * under /_emulator, mounted here so neither service knows the control plane.
 */
export async function composeService(
  app: FastifyInstance,
  emu: Emulator,
  service: 'speech' | 'platform',
  setup: (app: FastifyInstance, emu: Emulator) => Promise<void>,
): Promise<void> {
  await registerDocuments(app, emu, service);
  await setup(app, emu);
  requestIdOnUpgrades(app);
  registerRoot(app, service, emu.config);
  await app.register(controlPlane, { prefix: '/_emulator', emu });
}

function urlOf(host: string, server: Server): string {
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Graceful close for one server: once closing, in-flight responses end their connection instead of
 * keeping it alive, so close() does not wait for clients to drop idle keep-alive sockets. Connections
 * are tracked, not requests: nothing runs per request until the server closes.
 */
function drainOnClose(server: Server): () => void {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  function closeIdleAfter(): void {
    setImmediate(() => server.closeIdleConnections());
  }
  function endAfterAnswer(res: ServerResponse): void {
    if (!res.headersSent) res.shouldKeepAlive = false;
    res.once('finish', closeIdleAfter);
  }
  return () => {
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => endAfterAnswer(res));
    // The response a connection is writing now (Node's own link from a socket to its current response).
    for (const socket of sockets) {
      const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (res && !res.writableFinished) endAfterAnswer(res);
    }
    server.closeIdleConnections();
  };
}

/** The services the emulator serves, and the fixture files both of them read. */
export const SERVICES = [speechService, platformService] as const;
export const REGISTRY = composeRegistry(SERVICES, sharedFixtures);

/** The emulator instance with every service's fixtures loaded (and the user's folder over them), no listener yet. */
export async function createEmulator(config: Config, logger: Logger): Promise<Emulator> {
  const fixtures = await loadFixtures(REGISTRY.fixtures, config.fixturesDir);
  return Emulator.create(config, REGISTRY.accounts, fixtures, logger);
}

/**
 * How this emulator opens a folder of tapes (`--record`/`--replay` at start, the control plane's replay route at run
 * time): with the services' declarations and the upstreams of the config. The tapes modules load only then.
 */
function tapesOpener(emu: Emulator, config: Config): TapesOpener {
  return async (settings) => {
    const { openTapes } = await import('./tapes/tapes.js');
    return openTapes(emu, {
      ...settings,
      perAccount: config.recordPerAccount,
      upstreams: { speech: config.upstreamSpeech, 'speech-backup': config.upstreamSpeechBackup, platform: config.upstreamPlatform },
      declarations: { speech: speechService.tapes ?? {}, platform: platformService.tapes ?? {} },
    });
  };
}

/** One service on its app, with a server for each listener it declares. */
interface ComposedService {
  service: ServiceRegistration;
  app: FastifyInstance;
  servers: Server[];
}

/** Builds the emulator and the listeners of every service (speech, speech backup, platform) on one shared state. */
export async function runEmulator(config: Config, logger: Logger): Promise<RunningEmulator> {
  // The speech engine's WebAssembly is loaded before anything listens (and only when chosen): a missing package refuses the start.
  if (config.voiceEngine === 'speech') await loadSpeechEngine();
  const emu = await createEmulator(config, logger);
  // Recording or replaying: the tapes are loaded (only then) and their hook is in place before any request arrives.
  emu.tapes.opener = tapesOpener(emu, config);
  if (config.record !== undefined || config.replay !== undefined) {
    try {
      await emu.tapes.load({
        mode: config.replay !== undefined ? 'replay' : config.recordMode,
        dir: (config.replay ?? config.record)!,
        strict: config.replayStrict,
        speed: config.replaySpeed,
      });
    } catch (err) {
      await emu.close({ save: false });
      throw err;
    }
  }
  const limits = { bodyTimeoutMs: config.bodyTimeoutMs, maxConnections: config.maxConnections };
  const composed: ComposedService[] = SERVICES.map((service) => {
    const answers = {
      badUrl: controlOr((message, url) => service.badUrl(emu, message, url)),
      // A request over the connection cap: the service's internal-error shape, with HTTP 503.
      busy: controlOr503((message, url) => service.busy(emu, message, url)),
    };
    const entry: ComposedService = { service, app: null as unknown as FastifyInstance, servers: [] };
    entry.app = baseApp(
      logger.child({ service: service.name }),
      (handler) => {
        entry.servers = listenerServers(
          service.listeners.map((l) => l.name) as [Listener, ...Listener[]],
          handler,
          limits,
          answers,
          service.keepAliveTimeoutMs,
        );
        return entry.servers[0]!;
      },
      answers.badUrl,
      config.corsOrigins,
    );
    return entry;
  });
  const drains: (() => void)[] = [];
  let restored: RestoredState | undefined;
  const servers = () => composed.flatMap((c) => c.servers);
  const closeAll = () => Promise.allSettled(composed.map((c) => c.app.close()));
  try {
    for (const { service, app } of composed) await composeService(app, emu, service.name, (a, e) => service.setup(a, e));
    const before = emu.stateCounts();
    await emu.loadSnapshot();
    const after = emu.stateCounts();
    const dropped = config.resetFaultsOnStart ? after.faultRules : 0;
    if (dropped) emu.faults.clear();
    restored = emu.persistent
      ? {
          accounts: after.accounts - before.accounts,
          resources: after.resources - before.resources,
          fault_rules: after.faultRules - before.faultRules,
          fault_rules_dropped: dropped,
          orphan_files_swept: emu.sweptFiles,
        }
      : undefined;
    drains.push(...servers().map(drainOnClose));
    // The main listener through Fastify (its own log line); the others as plain servers, with the same line.
    for (const { service, app, servers: own } of composed) {
      await app.listen({ port: service.listeners[0].port(config), host: config.host });
      for (const [i, listener] of service.listeners.entries()) {
        if (i === 0) continue;
        await listen(own[i]!, listener.port(config), config.host);
        logger.child({ service: listener.name }).info(`Server listening at ${urlOf(config.host, own[i]!)}`);
      }
    }
  } catch (err) {
    await Promise.allSettled([closeAll(), emu.tapes.unload(), emu.close({ save: false })]);
    for (const { servers: own } of composed) for (const server of own.slice(1)) server.close();
    throw err;
  }
  const urlOfListener = (name: Listener) => {
    for (const { service, servers: own } of composed) {
      const i = service.listeners.findIndex((l) => l.name === name);
      if (i !== -1) return urlOf(config.host, own[i]!);
    }
    throw new Error(`no listener ${name}`);
  };
  emu.urls = { speech: urlOfListener('speech'), speechBackup: urlOfListener('speech-backup'), platform: urlOfListener('platform') };
  emu.phase = 'ready';
  const stopSweep = installAccountSweep(emu);

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      emu.phase = 'closing';
      stopSweep();
      // Streams end at their next event boundary; sockets get a going-away close frame.
      emu.beginClose();
      emu.sockets.closeAll(1001, 'emulator shutting down');
      for (const drain of drains) drain();
      // Fastify closes the main server of each service; the other listeners are closed here.
      const others = composed.flatMap((c) => c.servers.slice(1)).map((server) => new Promise<void>((r) => server.close(() => r())));
      const closed = Promise.allSettled([closeAll(), ...others]);
      // In-flight responses get a grace period; a client that never reads its response (or a stream
      // still running) is then cut, so close() always ends.
      let grace: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([closed.then(() => false), new Promise<boolean>((r) => (grace = setTimeout(() => r(true), CLOSE_GRACE_MS)))]);
      clearTimeout(grace);
      if (timedOut) {
        for (const server of servers()) server.closeAllConnections();
        await closed;
      }
      await emu.tapes.unload();
      await emu.close();
    })());

  return {
    emulator: emu,
    control: new ControlClient({ url: emu.urls.speech, token: config.controlToken }),
    speechUrl: emu.urls.speech,
    speechBackupUrl: emu.urls.speechBackup,
    platformUrl: emu.urls.platform,
    ...(restored ? { restored } : {}),
    close,
  };
}
