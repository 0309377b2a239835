import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Emulator } from '../../../core/emulator.js';
import { takeFault } from '../../../core/http/request-context.js';
import { parseWith, sendOk, speechOperations } from '../reply.js';
import { createTask, queryTask, taskArea } from './model.js';
import { asyncBody, queryParams } from './schema.js';

/** `POST /v1/t2a_async_v2` and `GET` (or `POST`) `/v1/query/t2a_async_query_v2`. */
export async function speechAsyncRoutes(app: FastifyInstance, { emu }: { emu: Emulator }): Promise<void> {
  taskArea(emu);
  speechOperations(app, emu, 'tts');
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post('/v1/t2a_async_v2', { schema: { body: asyncBody } }, async (req, reply) => {
    const account = req.ctx.account!;
    const body = parseWith(asyncBody, req.body);
    // `cut_after_chunks` cuts the task's synthesis: the task is created and then reports Failed.
    const fail = takeFault(req, 'cut_after_chunks') !== undefined;
    const task = await createTask(emu, account, body, { fail });
    const token = emu.ids.stream(`${account.id}:tasks`).token(32);
    return sendOk(emu, req, reply, { task_id: task.task_id, task_token: token, file_id: task.file_id, usage_characters: task.usage_characters });
  });

  const answerQuery = async (req: FastifyRequest, reply: FastifyReply, taskId: number) => {
    const { task, status } = await queryTask(emu, req.ctx.account!, taskId);
    return sendOk(emu, req, reply, { task_id: task.task_id, status, file_id: task.file_id });
  };
  r.get('/v1/query/t2a_async_query_v2', { schema: { querystring: queryParams } }, async (req, reply) =>
    answerQuery(req, reply, parseWith(queryParams, req.query, 'query').task_id),
  );
  // The official CLI polls with POST and a JSON body `{task_id}` (rule E19): the same answer.
  r.post('/v1/query/t2a_async_query_v2', { schema: { body: queryParams } }, async (req, reply) =>
    answerQuery(req, reply, parseWith(queryParams, req.body).task_id),
  );
}
