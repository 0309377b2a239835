import { describe, expectTypeOf, it } from 'vitest';
import type * as z from 'zod';
import type * as client from '../../src/client/index.js';
import type { clockBody } from '../../src/control/clock.js';
import type { hear } from '../../src/control/hear.js';
import type { entryView, journalQuery } from '../../src/control/journal.js';
import type { BudgetResult, verifyBody } from '../../src/control/verify.js';
import type { latencyReport } from '../../src/control/report.js';
import type { Figure, Stat } from '../../src/control/figures.js';
import type { tapesReplayBody, TapesView } from '../../src/control/tapes.js';
import type { Difference } from '../../src/tapes/check/compare.js';
import type { CheckReport } from '../../src/tapes/check/run.js';
import type { accountView, Capability } from '../../src/core/state/accounts.js';
import type { AccountSchemas } from '../../src/core/state/account-settings.js';
import type { FixtureName, Fixtures } from '../../src/core/state/fixture-schemas.js';
import type { FaultDirective, faultRuleSchema, streamFaultsSchema } from '../../src/core/faults/faults.js';
import type { FaultField, StreamFaultField } from '../../src/core/faults/fields.js';
import type { WsFrameSummary } from '../../src/core/journal/entry.js';

// The client's public shapes are written out (no internals in its types); these checks, made by the
// type checker (npm run typecheck), keep each equal to the schema or view the control plane uses.
describe('control client types match the control plane', () => {
  it('requests equal the schemas the control plane validates with', () => {
    expectTypeOf<client.ClockChange>().toEqualTypeOf<z.input<typeof clockBody>>();
    expectTypeOf<client.AccountChange>().toEqualTypeOf<z.input<AccountSchemas['change']>>();
    expectTypeOf<client.FaultRuleInput>().toEqualTypeOf<z.input<typeof faultRuleSchema>>();
    expectTypeOf<client.FaultDirective>().toEqualTypeOf<FaultDirective>();
    // The fault fields' registry (core/faults/fields.ts): a field added there and not here fails the typecheck.
    expectTypeOf<keyof client.FaultDirective>().toEqualTypeOf<FaultField>();
    expectTypeOf<keyof client.StreamFaults>().toEqualTypeOf<StreamFaultField>();
    expectTypeOf<client.StreamFaults>().toEqualTypeOf<z.output<typeof streamFaultsSchema>>();
    // limit is coerced from the query string: its checked form is the number the client sends.
    expectTypeOf<client.JournalQuery>().toEqualTypeOf<z.output<typeof journalQuery>>();
    expectTypeOf<client.VerifyRequest>().toEqualTypeOf<z.input<typeof verifyBody>>();
    expectTypeOf<client.TapesReplayRequest>().toEqualTypeOf<z.input<typeof tapesReplayBody>>();
  });

  it('answers equal the views the control plane builds', () => {
    expectTypeOf<client.AccountView>().toEqualTypeOf<ReturnType<typeof accountView>>();
    expectTypeOf<client.JournalEntryView>().toEqualTypeOf<ReturnType<typeof entryView>>();
    expectTypeOf<client.WsFrameView>().toEqualTypeOf<WsFrameSummary>();
    expectTypeOf<client.LatencyReport>().toEqualTypeOf<ReturnType<typeof latencyReport>>();
    expectTypeOf<client.BudgetResult>().toEqualTypeOf<BudgetResult>();
    expectTypeOf<client.Figure>().toEqualTypeOf<Figure>();
    expectTypeOf<client.Stat>().toEqualTypeOf<Stat>();
    expectTypeOf<client.FixtureName>().toEqualTypeOf<FixtureName>();
    // Each file's content, as its schema (core's or its service's) gives it.
    expectTypeOf<{ [N in client.FixtureName]: client.FixtureContent<N> }>().toEqualTypeOf<{ [N in FixtureName]: Fixtures[N] }>();
    expectTypeOf<client.Capability>().toEqualTypeOf<Capability>();
    // hear's anomalies are an intersection there (the aligner's anomaly and its trace id): compared flattened.
    type Heard = Awaited<ReturnType<typeof hear>>;
    type Anomaly = Heard['anomalies'][number];
    expectTypeOf<Omit<client.HearResult, 'anomalies'>>().toEqualTypeOf<Omit<Heard, 'anomalies'>>();
    expectTypeOf<client.HearResult['anomalies'][number]>().toEqualTypeOf<{ [K in keyof Anomaly]: Anomaly[K] }>();
    // tapes check: the report the checker makes, with its summary line.
    expectTypeOf<client.TapeDifference>().toEqualTypeOf<Difference>();
    expectTypeOf<Omit<client.TapesCheckReport, 'summary' | 'results'>>().toEqualTypeOf<Omit<CheckReport, 'results'>>();
    expectTypeOf<client.TapesCheckReport['results'][number]>().toEqualTypeOf<CheckReport['results'][number]>();
    expectTypeOf<client.TapesView>().toEqualTypeOf<TapesView>();
  });
});
