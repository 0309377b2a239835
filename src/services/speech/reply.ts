/**
 * What the speech operations beyond `/v1/t2a_v2` share: the capability the lifecycle admits them with
 * and the success envelope (`trace_id`, `Trace-Id`, `base_resp` 0). Their bodies are read in the handler
 * by the one reader of the service (body.ts `parseWith`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Capability } from '../../core/state/accounts.js';
import type { Emulator } from '../../core/emulator.js';
import { STATUS_MSG, traceIdOf } from './errors.js';

/**
 * Declares the plugin's routes as speech operations: each needs `capability`, so the lifecycle admits
 * it before its body is read (core/http/lifecycle.ts); routes read their body in the handler (body.ts `parseWith`),
 * so the order of checks stays the spec's.
 */
export function speechOperations(app: FastifyInstance, _emu: Emulator, capability: Capability): void {
  app.setValidatorCompiler(() => (data: unknown) => ({ value: data }));
  // The route's own config object, which the lifecycle reads per request (its onRoute hook ran first).
  app.addHook('onRoute', (route) => {
    (route.config ??= {}).capability ??= capability;
  });
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
