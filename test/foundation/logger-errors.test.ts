// The emulator's logger writes whatever is logged as `err`: an Error (its stack, with the built bundle's frames named
// by their sources), and also null, a string, a number or a plain object, as pino's own serializer does. Logging must
// never throw: a log call sits in error handlers, where a throw ends the process.
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/logger.js';

function capture() {
  const lines: any[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino(loggerOptions('info'), out), lines };
}

describe('the logger and what is logged as err', () => {
  it('null, a string, a number and a plain object are written as they are, without a throw', async () => {
    const { logger, lines } = capture();
    for (const err of [null, 'a reason', 42, { message: 'not an Error' }]) expect(() => logger.error({ err }, 'failed')).not.toThrow();
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => l.err)).toEqual([null, 'a reason', 42, { type: 'Object', message: 'not an Error', stack: '' }]);
  });

  it('an Error keeps its message and stack', async () => {
    const { logger, lines } = capture();
    logger.error({ err: new Error('boom') }, 'failed');
    await new Promise((r) => setImmediate(r));
    expect(lines[0].err).toMatchObject({ type: 'Error', message: 'boom' });
    expect(lines[0].err.stack).toMatch(/^Error: boom\n\s+at /);
  });
});
