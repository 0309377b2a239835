/**
 * Fault injection. A directive says what an endpoint must do instead of its normal work; each endpoint
 * expresses it in its own spec-defined shape. Directives come from the `X-Emulator-Fault` header of one
 * request or from rules queued on the control plane (counted, or drawn with a seeded probability).
 */
import * as z from 'zod';
import { firstProblemOf } from '../http/validation.js';

/**
 * Fault fields of a stream that carries synthesized audio, applied by the stream guard (core/stream/guard.ts,
 * core/stream/shaping.ts): its pace (wall time) and damage inside its audio. Times are milliseconds.
 */
export const streamFaultFields = {
  ttfa_ms: z.int().min(0).max(600_000).optional(),
  rtf: z.number().gt(0).max(1000).optional(),
  jitter_ms: z.int().min(0).max(60_000).optional(),
  stall_ms: z.int().min(0).max(600_000).optional(),
  stall_at_ms: z.int().min(0).optional(),
  drop_final: z.int().min(0).max(1).optional(),
  duplicate_chunk: z.int().min(1).optional(),
  hex_odd: z.int().min(1).optional(),
  split_frame: z.int().min(0).max(1).optional(),
  gap_ms: z.int().min(0).max(600_000).optional(),
  gap_at_ms: z.int().min(0).optional(),
  corrupt_bytes: z.int().min(0).max(100_000).optional(),
  extra_info_mismatch: z.int().min(0).max(1).optional(),
};

/** An account's standing stream faults (`PUT /_emulator/accounts/{key}` `stream_faults`): every stream of its keys. */
export const streamFaultsSchema = z.object(streamFaultFields).strict();

/**
 * What one stream's pace and audio faults are; every field absent means an unpaced, intact stream. The
 * fields are the fault schema's: one list for the header, the rules, an account's standing faults and
 * the stream guard (core/stream/shaping.ts).
 */
export type StreamShape = z.output<typeof streamFaultsSchema>;

/** The one fault field that may be a decimal (`rtf=1.5`): every other value is an integer. */
const DECIMAL_FIELDS = new Set(['rtf']);

export const faultDirectiveSchema = z
  .object({
    code: z.int().optional(),
    status: z.int().min(100).max(599).optional(),
    delay_ms: z.int().min(0).max(600_000).optional(),
    cut_after_chunks: z.int().min(0).optional(),
    close_ws: z.int().min(1000).max(4999).optional(),
    ...streamFaultFields,
  })
  .strict();
export type FaultDirective = z.infer<typeof faultDirectiveSchema>;
export type FaultField = keyof FaultDirective;

export const faultRuleSchema = z
  .object({
    service: z.enum(['speech', 'speech-backup', 'platform']).optional(),
    method: z
      .string()
      .min(1)
      .transform((m) => m.toUpperCase())
      .optional(),
    path: z.string().startsWith('/').optional(),
    account: z.string().min(1).optional(),
    times: z.union([z.int().min(1), z.literal('always')]).default(1),
    probability: z.number().min(0).max(1).optional(),
    fault: faultDirectiveSchema.refine((f) => Object.keys(f).length > 0, 'fault must name at least one field'),
  })
  .strict();

export interface FaultRule {
  id: string;
  service?: 'speech' | 'speech-backup' | 'platform';
  method?: string;
  path?: string;
  /** Account id (hash) and its redacted label; the key itself is never kept. */
  accountId?: string;
  accountLabel?: string;
  times: number | 'always';
  probability?: number;
  fault: FaultDirective;
  remaining: number | 'always';
}

export interface FaultContext {
  /** The listener the request reached (`speech`, its backup `speech-backup`, `platform`): a rule can take one down alone. */
  service: string;
  method: string;
  path: string;
  accountId?: string;
}

/** What a fault header said: the fields it set, and why each part it could not apply was left out. */
export interface ReadFaultHeader {
  directive: FaultDirective | undefined;
  problems: string[];
}

/**
 * How much of an unreadable part a problem quotes, and how many problems are reported (a header can be
 * kilobytes). Problems go back in a response header: ASCII only, so the cut is marked with `...`.
 */
const QUOTED_CHARS = 60;
const MAX_PROBLEMS = 5;

const quoted = (text: string) => JSON.stringify(text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}...` : text);

/**
 * Reads `code=1002;delay_ms=50`. One rule for a header with a bad part: the valid fields apply, and every
 * part left out (unreadable, an unknown field, a value out of its range) is named, so a typo never
 * silently drops the fields the test did write.
 */
export function parseFaultHeader(value: string): ReadFaultHeader {
  const out: Record<string, number> = {};
  const problems: string[] = [];
  const fields = faultDirectiveSchema.shape as Record<string, z.ZodType>;
  for (const part of value.split(/[;,]/)) {
    const p = part.trim();
    if (!p) continue;
    const m = /^([a-z_]+)\s*=\s*(-?\d+)$/.exec(p) ?? decimalField(p);
    if (!m) {
      problems.push(`X-Emulator-Fault: cannot read ${quoted(p)} (expected key=integer)`);
      continue;
    }
    const [, name, raw] = m as unknown as [string, string, string];
    const schema = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!schema) {
      problems.push(`X-Emulator-Fault: ${quoted(name)} is not a fault field`);
      continue;
    }
    const checked = schema.safeParse(Number(raw));
    if (!checked.success) {
      problems.push(`X-Emulator-Fault: ${name}: ${firstProblemOf(checked.error)?.rule ?? 'invalid value'}`);
      continue;
    }
    out[name] = Number(raw);
  }
  const shown = problems.length > MAX_PROBLEMS ? [...problems.slice(0, MAX_PROBLEMS), `and ${problems.length - MAX_PROBLEMS} more`] : problems;
  // The directive lists its fields in the schema's order, whatever the header's (log lines name them so).
  const ordered: Record<string, number> = {};
  for (const name of Object.keys(fields)) if (name in out) ordered[name] = out[name]!;
  return { directive: Object.keys(ordered).length ? (ordered as FaultDirective) : undefined, problems: shown };
}

/** `rtf=0.5`: a decimal value, for the fields that take one. */
function decimalField(part: string): RegExpExecArray | null {
  const m = /^([a-z_]+)\s*=\s*(-?\d+\.\d+)$/.exec(part);
  return m && DECIMAL_FIELDS.has(m[1]!) ? m : null;
}

export interface SavedFaults {
  rules: FaultRule[];
  counter: number;
}

export class Faults {
  private rules: FaultRule[] = [];
  private counter = 0;

  /** `changed` is told of every change (a rule added, removed or used up) so it can be persisted. */
  constructor(
    private readonly random: () => { next(): number },
    private readonly changed: () => void = () => {},
  ) {}

  save(): SavedFaults {
    return { rules: this.list(), counter: this.counter };
  }

  load(saved: SavedFaults): void {
    this.rules = Array.isArray(saved.rules) ? saved.rules.map((r) => ({ ...r })) : [];
    this.counter = Number.isInteger(saved.counter) ? saved.counter : this.rules.length;
  }

  add(input: z.output<typeof faultRuleSchema>, account?: { id: string; label: string }): FaultRule {
    const rule: FaultRule = {
      id: `fault_${++this.counter}`,
      service: input.service,
      method: input.method,
      path: input.path,
      accountId: account?.id,
      accountLabel: account?.label,
      times: input.times,
      probability: input.probability,
      fault: input.fault,
      remaining: input.times,
    };
    this.rules.push(rule);
    this.changed();
    return rule;
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  remove(id: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    if (this.rules.length !== before) this.changed();
    return this.rules.length !== before;
  }

  clear(accountId?: string): void {
    this.rules = accountId === undefined ? [] : this.rules.filter((r) => r.accountId !== accountId);
    if (accountId === undefined) this.counter = 0;
    this.changed();
  }

  /**
   * The directive for this request and where it came from (`header`, or the rule's id): the header
   * wins, else the first queued rule that matches and fires.
   */
  take(ctx: FaultContext, header?: FaultDirective): { directive: FaultDirective; origin: string } | null {
    if (header) return { directive: header, origin: 'header' };
    for (const rule of this.rules) {
      if (!matches(rule, ctx)) continue;
      if (rule.probability !== undefined && !(this.random().next() < rule.probability)) continue;
      if (rule.remaining !== 'always') {
        rule.remaining -= 1;
        if (rule.remaining <= 0) this.rules = this.rules.filter((r) => r !== rule);
        this.changed();
      }
      return { directive: { ...rule.fault }, origin: rule.id };
    }
    return null;
  }
}

function matches(rule: FaultRule, ctx: FaultContext): boolean {
  if (rule.service && rule.service !== ctx.service) return false;
  if (rule.method && rule.method !== ctx.method.toUpperCase()) return false;
  if (rule.accountId && rule.accountId !== ctx.accountId) return false;
  if (rule.path) {
    if (rule.path.endsWith('*')) {
      if (!ctx.path.startsWith(rule.path.slice(0, -1))) return false;
    } else if (rule.path !== ctx.path) return false;
  }
  return true;
}
