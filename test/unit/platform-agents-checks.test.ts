// createAgentSession (platform/agents/model.ts) called directly, through its export only: one test per
// check, in the order the model runs them (idempotency key, a key reused for another agent, the agent,
// its project, the balance, the connection limit).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/core/emulator.js';
import { AGENT_TOKEN_TTL_SEC, createAgentSession } from '../../src/services/platform/agents/model.js';
import type { CreateBody } from '../../src/services/platform/agents/schema.js';
import { accountOf, modelEmulator, rejected } from './model-emulator.js';
import { expectRefusal, messageOf } from './platform-refusal.js';
import { roomServerUrl } from '../../src/services/platform/shared/room-hosts.js';

let emu: Emulator;
beforeAll(async () => {
  emu = await modelEmulator();
});
afterAll(async () => {
  await emu.close({ save: false });
});

let keys = 0;
/** No Idempotency-Key header at all. */
const NO_HEADER = null;
/** A create with a fresh Idempotency-Key header unless the test names one (or NO_HEADER). */
const create = (key: string, body: Partial<CreateBody> = {}, header: string | null = `idem-${++keys}`) =>
  createAgentSession(emu, accountOf(emu, key), { agentId: 'agent_demo', ...body } as CreateBody, header ?? undefined);
const agent = (codeOrKind: 'param' | 'notFound' | 'forbidden' | 'balance' | 'rate', code: number, message: string) =>
  ({ family: 'agent', codeOrKind, code, message }) as const;

describe('createAgentSession: the checks in order', () => {
  it('createAgentSession: no Idempotency-Key header and no clientRequestId (blank counts as none) → 10001', async () => {
    expectRefusal(
      await rejected(create('ag', { clientRequestId: '  ' }, '  ')),
      agent('param', 10001, 'Idempotency-Key: header is required (or clientRequestId in the body)'),
    );
    expectRefusal(await rejected(create('ag', {}, NO_HEADER)), agent('param', 10001, 'Idempotency-Key: header is required (or clientRequestId in the body)'));
  });

  it('createAgentSession: an Idempotency-Key already used for another agent → 10001', async () => {
    await create('ag', {}, 'shared-key');
    expectRefusal(
      await rejected(create('ag', { agentId: 'agent_support' }, 'shared-key')),
      agent('param', 10001, 'Idempotency-Key "shared-key" was already used for agent "agent_demo"; use a new key for another request'),
    );
  });

  it('createAgentSession: the same Idempotency-Key for the same agent answers the same session', async () => {
    const first = await create('ag', {}, 'replay-key');
    const again = await create('ag', { clientRequestId: 'ignored-when-a-header-is-sent' }, ' replay-key ');
    expect(again.item.sessionId).toBe(first.item.sessionId);
    expect(again.traceId).toBe(first.traceId);
  });

  it('createAgentSession: agentId not among the agents → 10002', async () => {
    expectRefusal(await rejected(create('ag', { agentId: 'agent_nobody' })), agent('notFound', 10002, 'agentId: no published agent "agent_nobody"'));
  });

  it('createAgentSession: agentId of an unpublished agent → 10002', async () => {
    expectRefusal(await rejected(create('ag', { agentId: 'agent_draft' })), agent('notFound', 10002, 'agentId: no published agent "agent_draft"'));
  });

  it("createAgentSession: agentId of another project's agent → 10004", async () => {
    expectRefusal(
      await rejected(create('ag', { agentId: 'agent_foreign' })),
      agent('forbidden', 10004, 'agentId: agent "agent_foreign" belongs to another project space'),
    );
  });

  it('createAgentSession: balance short of 1 second at the agent price → 20003', async () => {
    emu.accounts.put('ag-poor', { balance_micro: 1999 });
    expectRefusal(
      await rejected(create('ag-poor')),
      agent('balance', 20003, 'insufficient balance: an agent session needs at least 1 second (2000 micro-units); balance 1999'),
    );
  });

  it('createAgentSession: max_concurrent_calls sessions open already → 10014', async () => {
    emu.accounts.put('ag-two', { limits: { max_concurrent_calls: 2 } });
    await create('ag-two');
    await create('ag-two');
    expectRefusal(await rejected(create('ag-two')), agent('rate', 10014, 'connection limit reached: 2 of 2 agent sessions are open'));
  });

  it('createAgentSession: a create that passes every check opens a connecting session', async () => {
    const now = emu.clock.now();
    const { item, traceId } = await create('ag-ok', { userIdentifier: 'user-7', traceId: 'trace-7' });
    expect(item).toEqual({
      sessionId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      wsUrl: roomServerUrl(emu),
      userToken: expect.stringMatching(/\S/),
      roomName: expect.stringMatching(/^agent_room_[0-9a-f]{16}$/),
      expireAt: Math.floor(now / 1000) + AGENT_TOKEN_TTL_SEC,
      status: 'connecting',
      agentId: 'agent_demo',
    });
    expect(traceId).toBe('trace-7');
    // clientRequestId stands in for the header; the trace id is made when none is given.
    const byBody = await create('ag-ok', { clientRequestId: 'from-body' }, NO_HEADER);
    expect(byBody.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect((await create('ag-ok', {}, 'from-body')).item.sessionId).toBe(byBody.item.sessionId);
  });

  it('createAgentSession: the order — the key is checked before the agent; a reused key before the agent exists', async () => {
    expect(messageOf(await rejected(create('ag', { agentId: 'agent_nobody' }, NO_HEADER)))).toBe(
      'Idempotency-Key: header is required (or clientRequestId in the body)',
    );
    await create('ag', {}, 'reused-key');
    expect(messageOf(await rejected(create('ag', { agentId: 'agent_nobody' }, 'reused-key')))).toMatch(/^Idempotency-Key "reused-key" was already used/);
  });

  it('createAgentSession: the order — a replayed key answers its session though the balance is gone since', async () => {
    emu.accounts.put('ag-replay', { balance_micro: 10_000 });
    const first = await create('ag-replay', {}, 'replay-poor');
    emu.accounts.put('ag-replay', { balance_micro: 0 });
    expect((await create('ag-replay', {}, 'replay-poor')).item.sessionId).toBe(first.item.sessionId);
  });

  it('createAgentSession: the order — agent before project before balance before the connection limit', async () => {
    emu.accounts.put('ag-order', { balance_micro: 0, limits: { max_concurrent_calls: 0 } });
    expect(messageOf(await rejected(create('ag-order', { agentId: 'agent_nobody' })))).toBe('agentId: no published agent "agent_nobody"');
    expect(messageOf(await rejected(create('ag-order', { agentId: 'agent_foreign' })))).toBe('agentId: agent "agent_foreign" belongs to another project space');
    expect(messageOf(await rejected(create('ag-order')))).toMatch(/^insufficient balance: /);
    emu.accounts.put('ag-order', { balance_micro: 10_000 });
    expect(messageOf(await rejected(create('ag-order')))).toBe('connection limit reached: 0 of 0 agent sessions are open');
  });
});
