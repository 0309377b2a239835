// The forms: fault rules, account settings, reset.
import { $, api, el } from './api.js';
import { FAULT_FIELDS } from './fault-fields.js';
import { balance } from './state.js';

// ---- faults ----
// Every fault field the emulator takes, from its one registry (fault-fields.js, written from core/faults/fields.ts).
const FIELDS = Object.fromEntries(FAULT_FIELDS.map((f) => [f.name, f]));

const LEGENDS = { answer: 'What they get', pace: 'Pace of audio streams', audio: 'Damage inside the audio' };

/** The form's inputs for the fault fields, one fieldset per stage (the answer, the pace, the audio). */
function faultInputs() {
  const sets = {};
  for (const f of FAULT_FIELDS) {
    const group = f.stage === 'answer' ? 'answer' : f.group;
    sets[group] ??= el('fieldset', { className: `fault-fields ${group}` }, el('legend', {}, LEGENDS[group] ?? group));
    const input = el('input', {
      name: f.name,
      placeholder: f.example,
      size: 7,
      inputMode: f.type === 'decimal' ? 'decimal' : 'numeric',
      title: `${f.does} (${f.values}; ${f.appliesTo})`,
    });
    sets[group].append(el('label', {}, `${f.name} `, input));
  }
  return Object.values(sets);
}
$('#fault-fields').replaceWith(...faultInputs());

/** `n` against a field's range; an error naming the field and the values it takes, or null. */
function outOfRange(name, rule, n) {
  const low = rule.min !== undefined && (rule.minExclusive ? n <= rule.min : n < rule.min);
  const high = rule.max !== undefined && n > rule.max;
  return low || high ? `${name} must be ${rule.values}; got ${n}` : null;
}

/** The rule the form describes, or an error naming the field that is wrong and why. */
export function faultRule(f) {
  const fault = {};
  for (const [name, rule] of Object.entries(FIELDS)) {
    const raw = (f[name] ?? '').trim();
    if (!raw) continue;
    const n = Number(raw);
    if (rule.type === 'decimal') {
      if (!/^-?\d+(\.\d+)?$/.test(raw) || !Number.isFinite(n)) throw new Error(`${name} must be a number (${rule.values}); got "${raw}"`);
    } else if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(n)) throw new Error(`${name} must be a whole number (${rule.values}); got "${raw}"`);
    const wrong = outOfRange(name, rule, n);
    if (wrong) throw new Error(wrong);
    fault[name] = n;
  }
  if (!Object.keys(fault).length) throw new Error(`fill at least one of ${Object.keys(FIELDS).join(', ')}`);
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
