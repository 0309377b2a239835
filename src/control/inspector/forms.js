// The forms: fault rules, account settings, reset.
import { $, api, el } from './api.js';
import { balance } from './state.js';

// ---- faults ----
const FAULT_FIELDS = {
  code: { what: 'a spec error code, like 1002' },
  status: { min: 100, max: 599, what: 'an HTTP status from 100 to 599' },
  delay_ms: { min: 0, max: 600_000, what: 'milliseconds from 0 to 600000' },
  cut_after_chunks: { min: 0, what: 'a number of chunks, 0 or more' },
  close_ws: { min: 1000, max: 4999, what: 'a WebSocket close code from 1000 to 4999' },
};

/** The rule the form describes, or an error naming the field that is wrong and why. */
export function faultRule(f) {
  const fault = {};
  for (const [name, rule] of Object.entries(FAULT_FIELDS)) {
    const raw = (f[name] ?? '').trim();
    if (!raw) continue;
    const n = Number(raw);
    if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(n)) throw new Error(`${name} must be a whole number (${rule.what}); got "${raw}"`);
    if ((rule.min !== undefined && n < rule.min) || (rule.max !== undefined && n > rule.max)) throw new Error(`${name} must be ${rule.what}; got ${n}`);
    fault[name] = n;
  }
  if (!Object.keys(fault).length) throw new Error(`fill at least one of ${Object.keys(FAULT_FIELDS).join(', ')}`);
  const rule = { fault };
  for (const k of ['service', 'method', 'path', 'account']) if (f[k]?.trim()) rule[k] = f[k].trim();
  if (rule.path && !rule.path.startsWith('/')) throw new Error(`path must start with "/" (exact, or a prefix ending in *); got "${rule.path}"`);
  const times = (f.times ?? '').trim();
  if (times === 'always') rule.times = 'always';
  else if (times) {
    if (!/^\d+$/.test(times) || Number(times) < 1) throw new Error(`times must be a whole number of 1 or more, or "always"; got "${times}"`);
    rule.times = Number(times);
  }
  const p = (f.probability ?? '').trim();
  if (p) {
    const n = Number(p);
    if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`probability must be a number from 0 to 1, like 0.25; got "${p}"`);
    rule.probability = n;
  }
  return rule;
}

export async function loadFaults() {
  const { rules } = await api('/faults');
  $('#faults tbody').replaceChildren(
    ...rules.map((r) => {
      const del = el('button', { type: 'button', textContent: 'Delete' });
      del.addEventListener('click', async () => {
        await api(`/faults/${encodeURIComponent(r.id)}`, { method: 'DELETE' });
        loadFaults();
      });
      return el(
        'tr',
        {},
        el('td', { className: 'mono' }, r.id),
        el('td', {}, r.service ?? 'any'),
        el('td', {}, r.method ?? 'any'),
        el('td', { className: 'mono' }, r.path ?? 'any'),
        el('td', { className: 'mono' }, r.account ?? 'any'),
        el(
          'td',
          { className: 'mono' },
          Object.entries(r.fault)
            .map(([k, v]) => `${k}=${v}`)
            .join(' '),
        ),
        el('td', {}, r.probability ?? ''),
        el('td', {}, r.remaining),
        el('td', {}, del),
      );
    }),
  );
}

$('#fault-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const out = $('#fault-error');
  try {
    await api('/faults', { method: 'POST', body: faultRule(Object.fromEntries(new FormData(ev.target))) });
    out.textContent = '';
    ev.target.reset();
  } catch (err) {
    out.textContent = err.message;
  }
  loadFaults();
});

// ---- accounts ----
/** The fields `PUT /accounts/{key}` takes (control/accounts.ts), read back from the account's view. */
const SETTINGS = ['balance_micro', 'free_call_seconds', 'capabilities', 'project', 'disabled', 'real_name_verified', 'limits', 'speech_settings'];

$('#account-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const key = new FormData(ev.target).get('key').trim();
  const put = ev.submitter?.value === 'put';
  try {
    let body;
    if (put) {
      try {
        body = JSON.parse($('#account-settings').value || '{}');
      } catch (err) {
        throw new Error(`settings are not JSON: ${err.message}`);
      }
    }
    const view = await api(`/accounts/${encodeURIComponent(key)}`, put ? { method: 'PUT', body } : {});
    $('#account-view').textContent = `balance: ${balance(view.balance_micro)}\n${JSON.stringify(view, null, 2)}`;
    // "Show" fills the editor with the settings as they are, ready to change and save.
    if (!put) $('#account-settings').value = JSON.stringify(Object.fromEntries(SETTINGS.filter((k) => k in view).map((k) => [k, view[k]])), null, 2);
    $('#account-error').textContent = '';
  } catch (err) {
    $('#account-error').textContent = err.message;
  }
});

// ---- reset, asked twice ----
const confirmBox = $('#reset-confirm');
$('#reset').addEventListener('click', () => {
  const key = $('#reset-account').value.trim();
  $('#reset-what').textContent = key
    ? 'Reset this account? Its resources, sessions and journal entries are dropped.'
    : 'Reset the whole emulator? All resources, sessions, fault rules and the journal are dropped.';
  confirmBox.hidden = false;
});
$('#reset-cancel').addEventListener('click', () => {
  confirmBox.hidden = true;
});
export function onReset(done) {
  $('#reset-yes').addEventListener('click', async () => {
    const key = $('#reset-account').value.trim();
    try {
      const r = await api(`/reset${key ? `?account=${encodeURIComponent(key)}` : ''}`, { method: 'POST' });
      $('#reset-result').textContent = r.reset === 'all' ? 'The emulator was reset.' : `Account ${r.account} was reset.`;
    } catch (err) {
      $('#reset-result').textContent = err.message;
    }
    confirmBox.hidden = true;
    done();
  });
}
