// Sessions, sockets, timers and resources, as tables per account.
import { $, api, el } from './api.js';

/** Balances above this are the default one that never runs out (core/state/accounts.ts DEFAULT_BALANCE_MICRO). */
const UNLIMITED_MICRO = 1e14;

/** Micro-units as units (1 unit = 1,000,000 µ). */
export function balance(micro) {
  if (typeof micro !== 'number') return String(micro ?? '');
  if (micro >= UNLIMITED_MICRO) return 'unlimited';
  return `${(micro / 1e6).toLocaleString('en', { maximumFractionDigits: 6 })} units`;
}

const when = (ms) => (typeof ms === 'number' ? new Date(ms).toISOString().replace('T', ' ').replace('Z', '') : '');

/** A cell: a nested table for a list of records, a time for `*_ms` fields of a plausible size, JSON for other objects. */
function cell(key, value) {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value) && value.length && value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) return table(value);
  if (/_ms$|At$/.test(key) && typeof value === 'number' && value > 1e11) return when(value);
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Rows of objects as a table (their keys as columns); a plain object as a two-column table. */
function table(value) {
  if (Array.isArray(value)) {
    if (!value.length) return el('p', { className: 'muted' }, 'none');
    if (!value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) return el('p', { className: 'mono' }, value.map(String).join(', '));
    const keys = [...new Set(value.flatMap((v) => Object.keys(v)))];
    return el(
      'div',
      { className: 'table-scroll' },
      el(
        'table',
        { className: 'facts' },
        el('thead', {}, el('tr', {}, ...keys.map((k) => el('th', {}, k)))),
        el('tbody', {}, ...value.map((v) => el('tr', {}, ...keys.map((k) => el('td', { className: 'mono' }, cell(k, v[k])))))),
      ),
    );
  }
  if (value && typeof value === 'object') {
    const rows = Object.entries(value);
    if (!rows.length) return el('p', { className: 'muted' }, 'none');
    return el(
      'table',
      { className: 'facts' },
      el('tbody', {}, ...rows.map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', { className: 'mono' }, cell(k, v))))),
    );
  }
  return el('p', { className: 'mono' }, String(value));
}

function account(a) {
  const facts = {
    balance: balance(a.balance_micro),
    free_call_seconds: a.free_call_seconds,
    capabilities: a.capabilities?.join(', ') || 'none',
    project: a.project,
    disabled: a.disabled ? 'yes' : 'no',
    limits: Object.keys(a.limits ?? {}).length ? a.limits : 'defaults',
    speech_settings: Object.keys(a.speech_settings ?? {}).length ? a.speech_settings : 'defaults',
  };
  const resources = Object.entries(a.resources ?? {}).filter(([, v]) => !(Array.isArray(v) && v.length === 0));
  const empty = Object.entries(a.resources ?? {})
    .filter(([, v]) => Array.isArray(v) && v.length === 0)
    .map(([k]) => k);
  return el(
    'article',
    { className: 'card' },
    el('h3', {}, a.account, a.disabled ? el('span', { className: 'pill warn' }, 'disabled') : null),
    table(facts),
    el('h4', {}, `Open sockets (${a.open_websockets.length})`),
    table(a.open_websockets),
    el('h4', {}, `Pending timers (${a.pending_timers.length})`),
    table(a.pending_timers),
    ...resources.flatMap(([area, v]) => [el('h4', {}, area), table(v)]),
    empty.length ? el('p', { className: 'muted' }, `Nothing yet in: ${empty.join(', ')}`) : null,
  );
}

export async function loadState() {
  const s = await api('/state');
  $('#state-totals').textContent =
    `${s.totals.open_websockets} open sockets · ${s.totals.pending_timers} pending timers · ${s.totals.journal_entries} journal entries · ${s.totals.fault_rules} fault rules`;
  $('#state').replaceChildren(...(s.accounts.length ? s.accounts.map(account) : [el('p', { className: 'muted' }, 'No account has made a request yet.')]));
}
