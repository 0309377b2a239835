/**
 * What the speech operations beyond `/v1/t2a_v2` share: the capability the lifecycle admits them with,
 * bodies parsed by their zod schema into `invalid params, <field> <rule>`, and the success
 * envelope (`trace_id`, `Trace-Id`, `base_resp` 0).
 */
import { parseFirst } from '../../core/http/validation.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Capability } from '../../core/state/accounts.js';
import type { Emulator } from '../../core/emulator.js';
import { invalidParams, STATUS_MSG, traceIdOf } from './errors.js';
import { firstProblem } from './schema.js';

/**
 * Declares the plugin's routes as speech operations: each needs `capability`, so the lifecycle admits
 * it before its body is read (core/http/lifecycle.ts); routes validate in the handler (`parseWith`), so the
 * order of checks stays the spec's.
 */
export function speechOperations(app: FastifyInstance, _emu: Emulator, capability: Capability): void {
  app.setValidatorCompiler(() => (data: unknown) => ({ value: data }));
  // The route's own config object, which the lifecycle reads per request (its onRoute hook ran first).
  app.addHook('onRoute', (route) => {
    (route.config ??= {}).capability ??= capability;
  });
}

/** Parses a value with a zod schema; a failure is 2013 naming the first field and its rule. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what = 'request body'): z.output<S> {
  if (what === 'request body' && (value === null || typeof value !== 'object' || Array.isArray(value)))
    throw invalidParams('request body must be a JSON object');
  const parsed = parseFirst(schema, value);
  if (!parsed.success) throw invalidParams(firstProblem(parsed.problem));
  return parsed.data;
}

/** The success envelope: the operation's fields, `trace_id` and `base_resp` 0, with the `Trace-Id` header. */
export function sendOk(emu: Emulator, req: FastifyRequest, reply: FastifyReply, fields: Record<string, unknown>): FastifyReply {
  const traceId = traceIdOf(emu, req);
  const body = { ...fields, trace_id: traceId, base_resp: { status_code: 0, status_msg: STATUS_MSG[0] } };
  return reply.code(200).header('Trace-Id', traceId).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
}

/** A signed link to a blob, served by the listener that hands it out (the backup may be the only one up). */
export function signedLink(emu: Emulator, req: FastifyRequest, rel: string, expiresMs: number): string {
  if (!emu.config.publicUrl && req.ctx.listener === 'speech-backup') return emu.urls.speechBackup + emu.blobs.signedPath(rel, expiresMs);
  return emu.downloadUrl('speech', rel, expiresMs);
}

/** A 64-bit id below 2^53 (JavaScript clients keep it exact), 15 digits like the documented examples. */
export function numericId(emu: Emulator, stream: string): number {
  return 100_000_000_000_000 + (emu.ids.stream(stream).bytes(6).readUIntBE(0, 6) % 900_000_000_000_000);
}

/** Integer id given as a JSON number or a string of digits (clients send both); undefined when neither. */
export function idValue(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  if (typeof value === 'string' && /^\d{1,16}$/.test(value.trim())) {
    const n = Number(value.trim());
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  }
  return undefined;
}
