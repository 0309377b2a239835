/**
 * The one admission path (the order of checks, docs/architecture.md). Before any body or message is
 * read, a request meets, in this order: the fault directive's `close_ws` (sockets only), `code`,
 * `status`, then the key, then the capability of the operation. The lifecycle (core/http/lifecycle.ts)
 * runs it for every HTTP route that names a capability; every socket route runs `admitUpgrade` (its
 * upgrade and a plain GET alike) and /mcp runs it in its handler. Each service, socket and tool
 * endpoint renders the refusal in its own shape; none of them decides the order again.
 */
import type { FastifyRequest } from 'fastify';
import type { Account, Accounts, Capability, Resolution } from '../state/accounts.js';
import { takeFault } from './request-context.js';

import type { Refusal } from './refusal.js';

export type { KeyTexts, Refusal } from './refusal.js';

export type Admission = { ok: true; account: Account } | { ok: false; refusal: Refusal };

/** The fault fields admission may express. */
export type AdmissionFaultField = 'close_ws' | 'code' | 'status';

export interface AdmissionInput {
  /** Takes one field of the request's fault directive (and marks it expressed), or undefined. */
  fault(field: AdmissionFaultField): number | undefined;
  /**
   * What the presented key resolved to. A function is called only once the faults let the request pass
   * (a key read from a body, like /mcp `arguments.apiKey`, may itself refuse by throwing the caller's error).
   */
  key: Resolution | (() => Resolution);
  /** The capability the operation needs, if any. */
  capability?: Capability;
  /** A WebSocket honours `close_ws` before anything else; HTTP operations never take it here. */
  socket?: boolean;
}

export function admit(emu: { readonly accounts: Accounts }, input: AdmissionInput): Admission {
  if (input.socket) {
    const closeCode = input.fault('close_ws');
    if (closeCode !== undefined) return { ok: false, refusal: { kind: 'close_ws', closeCode } };
  }
  const code = input.fault('code');
  if (code !== undefined) return { ok: false, refusal: { kind: 'fault_code', code } };
  const status = input.fault('status');
  if (status !== undefined) return { ok: false, refusal: { kind: 'fault_status', status } };
  const key = typeof input.key === 'function' ? input.key() : input.key;
  if (!key.ok) return { ok: false, refusal: { kind: 'key', problem: key.problem } };
  const account = key.account;
  if (input.capability && !emu.accounts.has(account, input.capability)) {
    return { ok: false, refusal: { kind: 'capability', capability: input.capability } };
  }
  return { ok: true, account };
}

/** The key a request presented, as the lifecycle resolved it (core/http/lifecycle.ts). */
export function keyOfRequest(req: FastifyRequest): Resolution {
  return req.ctx.account ? { ok: true, account: req.ctx.account } : { ok: false, problem: req.ctx.accountProblem ?? 'missing' };
}

/**
 * Admission of an HTTP request that went through the lifecycle, once: a request already admitted is let
 * in again without taking its fault fields a second time.
 */
export function admitRequest(emu: { readonly accounts: Accounts }, req: FastifyRequest, capability?: Capability): Admission {
  const ctx = req.ctx;
  if (ctx.admitted && ctx.account) return { ok: true, account: ctx.account };
  const admission = admit(emu, { fault: (field) => takeFault(req, field), key: keyOfRequest(req), capability });
  if (admission.ok) ctx.admitted = true;
  return admission;
}

/**
 * Admission of a socket route's request (its upgrade, or a plain GET without one), once: the answer is
 * kept on `req.ctx`, so the route's preValidation (which refuses over HTTP) and its socket handler
 * (which speaks the other refusals) read the same one. An upgrade meets the socket's order (`close_ws`
 * first); a plain GET has no socket to express `close_ws` or a fault code on, so it meets `status`,
 * the key and the capability (those two fields stay reported ignored), and only once let in gets the
 * route's 426.
 */
export function admitUpgrade(emu: { readonly accounts: Accounts }, req: FastifyRequest, capability: Capability): Admission {
  const ctx = req.ctx;
  if (ctx.refusal) return { ok: false, refusal: ctx.refusal };
  if (ctx.admitted && ctx.account) return { ok: true, account: ctx.account };
  const fault = req.ws
    ? (field: AdmissionFaultField) => takeFault(req, field)
    : (field: AdmissionFaultField) => (field === 'status' ? takeFault(req, field) : undefined);
  const admission = admit(emu, { fault, key: keyOfRequest(req), capability, socket: req.ws });
  if (admission.ok) ctx.admitted = true;
  else ctx.refusal = admission.refusal;
  return admission;
}
