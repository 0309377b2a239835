import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { VERSION } from '../version.js';
import { controlRefusal, hostAllowed, INSPECTOR_HEADERS, type AccessConfig } from './access.js';

/** The inspector's static files sit beside this module, in src/ (tsx) and in dist/ (copied by the build). */
const INSPECTOR_DIR = new URL('./inspector/', import.meta.url);

const SCRIPT = 'text/javascript; charset=utf-8';
const FILES: Record<string, string> = {
  'app.js': SCRIPT,
  'api.js': SCRIPT,
  'journal.js': SCRIPT,
  'detail.js': SCRIPT,
  'contents.js': SCRIPT,
  'state.js': SCRIPT,
  'forms.js': SCRIPT,
  'style.css': 'text/css; charset=utf-8',
};

async function sendFile(reply: FastifyReply, name: string, type: string): Promise<FastifyReply> {
  const body = await readFile(new URL(name, INSPECTOR_DIR));
  return reply.headers(INSPECTOR_HEADERS).header('content-type', type).header('cache-control', 'no-cache').send(body);
}

/**
 * The inspector page, `/_emulator/` on every listener. The files themselves are public (they hold
 * nothing); the page asks for the control token and sends it with every call it makes.
 */
export async function inspectorPages(app: FastifyInstance): Promise<void> {
  const config = { control: { public: true } };
  app.get('/', { config }, (_req, reply) => sendFile(reply, 'index.html', 'text/html; charset=utf-8'));
  app.get('/inspector/:file', { config }, (req: FastifyRequest<{ Params: { file: string } }>, reply) => {
    const type = Object.hasOwn(FILES, req.params.file) ? FILES[req.params.file] : undefined;
    if (!type) return reply.code(404).send({ error: { message: `no inspector file ${req.params.file}` } });
    return sendFile(reply, req.params.file, type);
  });
}

/** Where everything is, relative to the listener that was asked. */
function index(base: string, service: string) {
  const control = `${base}/_emulator`;
  return {
    service,
    version: VERSION,
    inspector: `${control}/`,
    control,
    health: `${control}/health`,
    journal_live: `${control}/journal/live`,
    openapi: { speech: `${control}/openapi/speech.json`, platform: `${control}/openapi/platform.json`, control: `${control}/openapi/control.json` },
    asyncapi: `${control}/asyncapi.json`,
  };
}

/** `GET /` on a listener: a browser goes to the inspector, anything else gets the index of URLs as JSON. */
export function registerRoot(app: FastifyInstance, service: 'speech' | 'platform', access: AccessConfig): void {
  app.get('/', (req, reply) => {
    // The index names the Host it was asked on: a name that could be a rebinding domain gets nothing.
    if (!hostAllowed(access, req.headers.host)) {
      return reply.code(403).send({ error: { message: controlRefusal(access, req) } });
    }
    const accept = String(req.headers.accept ?? '');
    if (accept.includes('text/html')) return reply.redirect('/_emulator/', 302);
    return reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(index(`${req.protocol}://${req.host}`, service)));
  });
}
