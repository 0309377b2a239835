import pino, { type Logger } from 'pino';

/** Pretty lines in a terminal, JSON lines otherwise (CI, Docker, files). */
export function createLogger(level: string, pretty = Boolean(process.stdout.isTTY)): Logger {
  if (pretty && level !== 'silent') {
    return pino({ level, transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,reqId' } } });
  }
  return pino({ level, base: undefined });
}
