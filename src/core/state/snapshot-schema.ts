/**
 * What a saved state must look like before any of it is loaded: the snapshot's own fields and the core
 * parts (accounts, signature records, fault rules, id streams). A part with the right syntax but the
 * wrong types would otherwise be loaded half, or dropped, and the file overwritten at the next write;
 * here it is named (`accounts[3].balanceMicro: …`) so the start can stop instead. Objects accept
 * fields added later (a newer snapshot read by the same version keeps its meaning).
 */
import * as z from 'zod';
import type { AccountRegistry } from './account-settings.js';
import { faultDirectiveSchema } from '../faults/faults.js';

export const SNAPSHOT_VERSION = 1;

const count = z.number().int().min(0);

const accountSchemaOf = (registry: AccountRegistry) =>
  z.looseObject({
    id: z.string().min(1),
    label: z.string(),
    balanceMicro: z.number(),
    capabilities: z.array(z.enum(registry.capabilities)),
    project: z.string(),
    disabled: z.boolean(),
    limits: z.looseObject({
      requests_per_minute: count.optional(),
      characters_per_minute: count.optional(),
      speech_to_text_per_minute: count.optional(),
      max_concurrent_calls: count.optional(),
      single_channel: z.boolean().optional(),
    }),
    realNameVerified: z.boolean(),
    freeCallSeconds: z.number(),
    listed: z.boolean(),
    speechSettings: registry.serviceSettings.optional(),
  });

const segmentSchema = z.looseObject({ text: z.string(), startMs: z.number(), endMs: z.number(), speaker: z.number().optional() });

const signatureSchema = z.looseObject({
  id: z.string().min(1),
  kind: z.enum(['speech', 'dialogue']),
  text: z.string(),
  language: z.string().optional(),
  speakers: z.array(z.looseObject({ speaker: z.number(), voices: z.array(z.string()) })),
  segments: z.array(segmentSchema),
  words: z.array(segmentSchema).optional(),
  pronunciations: z.array(z.looseObject({ text: z.string(), replacement: z.string() })).optional(),
  durationMs: z.number(),
  createdAtMs: z.number(),
});

const timesSchema = z.union([count, z.literal('always')]);

const faultsSchema = z.looseObject({
  rules: z.array(
    z.looseObject({
      id: z.string().min(1),
      service: z.enum(['speech', 'speech-backup', 'platform']).optional(),
      method: z.string().optional(),
      path: z.string().optional(),
      accountId: z.string().optional(),
      accountLabel: z.string().optional(),
      times: timesSchema,
      probability: z.number().min(0).max(1).optional(),
      fault: faultDirectiveSchema,
      remaining: timesSchema,
    }),
  ),
  counter: count,
});

const idStreamSchema = z.looseObject({ counter: count, used: count.optional(), pool: z.string().optional() });

const snapshotSchemaOf = (registry: AccountRegistry) =>
  z.looseObject({
    version: z.literal(SNAPSHOT_VERSION, { error: `must be ${SNAPSHOT_VERSION}, the only snapshot version this emulator reads` }),
    saved_at_ms: z.number().optional(),
    accounts: z.array(accountSchemaOf(registry)).optional(),
    signatures: z.array(signatureSchema).optional(),
    faults: faultsSchema.optional(),
    ids: z.record(z.string(), idStreamSchema).optional(),
    areas: z.record(z.string(), z.unknown()).optional(),
  });

const schemas = new WeakMap<AccountRegistry, ReturnType<typeof snapshotSchemaOf>>();

/** The snapshot as a whole: each core part checked in full (accounts with the registered capabilities and settings), each area's part by the area itself. */
export function snapshotSchema(registry: AccountRegistry): ReturnType<typeof snapshotSchemaOf> {
  let schema = schemas.get(registry);
  if (!schema) schemas.set(registry, (schema = snapshotSchemaOf(registry)));
  return schema;
}

export type SavedSnapshot = z.output<ReturnType<typeof snapshotSchemaOf>>;

/** `accounts[3].balanceMicro: expected number, received string`: the first problem, with its part's path. */
export function snapshotProblem(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return `${partPath(issue.path)}: ${issue.message}`;
}

/** `areas.calls.sessions[2]` from a path of keys and indexes. */
export function partPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`;
  return out || '(the whole file)';
}
