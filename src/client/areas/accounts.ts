/** The accounts' calls (`/_emulator/accounts/:key`). */
import type { CallOptions } from '../transport.js';
import type { AccountChange, AccountView } from '../types.js';
import { seg, type Caller } from './caller.js';

const ACCOUNT = 'an account {account, balance_micro, ...}';
const isAccount = (b: any) => typeof b.account === 'string' && typeof b.balance_micro === 'number';

export function accountsCalls(caller: Caller) {
  return {
    /** The settings of one key (404 under strict keys for a key not listed). */
    get: (key: string, options?: CallOptions): Promise<AccountView> =>
      caller.json({ method: 'GET', path: `/accounts/${seg(key)}` }, ACCOUNT, isAccount, options),
    /** Changes the settings named; the others stay. */
    put: (key: string, change: AccountChange, options?: CallOptions): Promise<AccountView> =>
      caller.json({ method: 'PUT', path: `/accounts/${seg(key)}`, body: change }, ACCOUNT, isAccount, options),
  };
}
