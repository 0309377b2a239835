// The anchor: a bare Fastify app (the project's own Fastify) with one schema route and a health route.
// Type coercion is off, so `{"text": 42}` is rejected with a 400 as the emulator rejects it with 2013:
// Fastify's default Ajv would turn 42 into "42" and answer 200, which measures the success path instead.
import Fastify from 'fastify';

const app = Fastify({ ajv: { customOptions: { coerceTypes: false } } });
app.get('/_emulator/health', async () => ({ status: 'ok' }));
const body = { type: 'object', required: ['model', 'text'], properties: { model: { type: 'string' }, text: { type: 'string' } } };
app.post('/v1/t2a_v2', { schema: { body } }, async (req) => ({ data: { text: req.body.text.length }, base_resp: { status_code: 0 } }));
app.post('/v1/files/upload', async () => ({ ok: true }));
app.addContentTypeParser('multipart/form-data', (_req, payload, done) => {
  payload.resume();
  payload.on('end', () => done(null, {}));
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
