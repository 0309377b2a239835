/**
 * With a data dir, no answer leaves before the changes made so far are on disk: what a client saw
 * acknowledged survives `kill -9`. When they cannot be saved (a full or read-only disk) the answer
 * becomes the family's internal error instead (its error handler renders the StorageError). An answer
 * that is already an error acknowledges nothing: it leaves as it is even when the save fails, so the
 * family's own error (a parameter error, or the StorageError itself) is never replaced by the
 * framework's.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

export function installDurableAnswers(app: FastifyInstance, emu: { persist(): Promise<void> }): void {
  // Requests whose answer comes from an error handler (onError runs before it).
  const answeringError = new WeakSet<FastifyRequest>();
  app.addHook('onError', (req, _reply, _err, done) => {
    answeringError.add(req);
    done();
  });
  app.addHook('onSend', async (req, _reply, payload) => {
    try {
      await emu.persist();
    } catch (err) {
      if (!answeringError.has(req)) throw err;
    }
    return payload;
  });
}
