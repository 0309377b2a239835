import pino, { type Logger, type LoggerOptions } from 'pino';

/**
 * A request as logs show it: the path without its query, since `?api_key=` carries a full key.
 * (The pipeline writes its own line per request; this guards any other line that names a request.)
 */
function requestForLogs(req: { method?: string; url?: string }) {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return { method: req.method, path: q === -1 ? url : url.slice(0, q) };
}

/** Options shared by every logger of the emulator (also used by tests that capture lines). */
export function loggerOptions(level: string): LoggerOptions {
  return { level, base: undefined, serializers: { req: requestForLogs } };
}

/** Pretty lines in a terminal, JSON lines otherwise (CI, Docker, files). */
export function createLogger(level: string, pretty = Boolean(process.stdout.isTTY)): Logger {
  if (pretty && level !== 'silent') {
    return pino({
      ...loggerOptions(level),
      transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,reqId' } },
    });
  }
  return pino(loggerOptions(level));
}
