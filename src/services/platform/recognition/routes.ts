import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { sendJson } from '../../../core/http/request-context.js';
import { wholeTextValidator } from '../issues.js';
import { recognizeRequest } from './model.js';
import { BODY_LIMIT, speechToTextRequest } from './schema.js';
import { recognitionStreamRoutes } from './stream.js';

/**
 * `POST /v1/speech-to-text`: success is the bare transcription object; errors are the envelope with an
 * HTTP status (400 10001/20014, 401, 402, 429, 500), from the `recognition` family. Also the
 * recognition stream (`/v1/speech-to-text/stream`, stream.ts).
 */
export async function recognitionRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/v1/speech-to-text',
    {
      bodyLimit: BODY_LIMIT,
      config: { family: 'recognition', capability: 'recognition' },
      schema: { body: speechToTextRequest },
      validatorCompiler: wholeTextValidator(speechToTextRequest),
    },
    async (req, reply) => sendJson(reply, 200, await recognizeRequest(emu, req.ctx.account!, req.body)),
  );
  await app.register(recognitionStreamRoutes, { emu });
}
