/** The fault rules' calls (`/_emulator/faults`). */
import type { CallOptions } from '../transport.js';
import type { FaultAdded, FaultRuleInput, FaultRuleView } from '../types.js';
import { DELETED, isDeleted, isObject, seg, type Caller } from './caller.js';

export function faultsCalls(caller: Caller) {
  return {
    add: (rule: FaultRuleInput, options?: CallOptions): Promise<FaultAdded> =>
      caller.json({ method: 'POST', path: '/faults', body: rule }, 'the added rule {id, rule}', (b) => typeof b.id === 'string' && isObject(b.rule), options),
    list: async (options?: CallOptions): Promise<FaultRuleView[]> =>
      (await caller.json<{ rules: FaultRuleView[] }>({ method: 'GET', path: '/faults' }, 'the rules {rules: [...]}', (b) => Array.isArray(b.rules), options))
        .rules,
    /** Deletes every rule. */
    clear: (options?: CallOptions): Promise<{ deleted: 'all' }> => caller.json({ method: 'DELETE', path: '/faults' }, DELETED, isDeleted, options),
    /** Deletes one rule (404 when there is none of that id). */
    remove: (id: string, options?: CallOptions): Promise<{ deleted: string }> =>
      caller.json({ method: 'DELETE', path: `/faults/${seg(id)}` }, DELETED, isDeleted, options),
  };
}
