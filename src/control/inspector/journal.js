// The journal list: newest first, live, filtered in the page; it holds still under the cursor.
import { $, BASE, api, el, token } from './api.js';
import { codeOf, listenerOf, listeners, renderDetail, shownCode } from './detail.js';

const MAX_ROWS = 500;
const entries = new Map();
const view = { selected: null, hovered: null, unseen: 0 };

/** The label the emulator shows for a key (first characters … sha256 prefix), to match a typed key. */
async function labelOf(key) {
  if (!crypto.subtle) return null;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key)));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${key.slice(0, Math.min(4, Math.floor(key.length / 2)))}…${hex.slice(0, 6)}`;
}

const filters = { account: '', accountLabel: null, path: '', status: '', code: '', fault: '' };
$('#filters').addEventListener('input', async (ev) => {
  const { name, value } = ev.target;
  filters[name] = value.trim();
  if (name === 'account') filters.accountLabel = filters.account ? await labelOf(filters.account) : null;
  renderJournal();
});

function matches(e) {
  if (filters.account && !(e.account ?? '').includes(filters.account) && e.account !== filters.accountLabel) return false;
  if (filters.path && !e.path.includes(filters.path)) return false;
  if (filters.status && String(e.status ?? '') !== filters.status) return false;
  // The answer's own code, as `verify` and `GET /_emulator/journal?code=` read it: a success that carries
  // none (audio bytes, a stream, a socket) shows a muted 0 but is not matched by one.
  if (filters.code && String(codeOf(e) ?? '') !== filters.code) return false;
  // As `GET /_emulator/journal?fault=`: a fault by header, rule or the account's standing stream faults.
  if (filters.fault && String(e.fault !== undefined && e.fault !== null) !== filters.fault) return false;
  return true;
}

/** A path that may wrap after its slashes only (never inside a name). */
function pathCell(path) {
  const td = el('td', { className: 'mono path' });
  path.split(/(?<=\/)/).forEach((part, i) => td.append(...(i ? [el('wbr'), part] : [part])));
  return td;
}

/** What a fault did, in a few words, for the row's mark (its origin and fields, as the detail shows them). */
function faultTitle(f) {
  const fields = Object.entries(f)
    .filter(([k]) => k !== 'origin' && k !== 'ignored')
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(' ') : v}`);
  return `injected fault (${f.origin}): ${fields.join(', ') || 'no field applied'}`;
}

function row(e) {
  const code = codeOf(e);
  const shown = shownCode(e);
  const failed = e.status !== null && (e.status >= 400 || (code !== null && code !== 0));
  // A fault's answer may look like a success (a stream cut at 200 / 0, a socket closed at 101 / 0) or a
  // real error (an injected 1002): the row says it was injected.
  const faulted = e.fault !== undefined && e.fault !== null;
  const statusCell = el('td', {}, e.status ?? '…');
  if (faulted) statusCell.append(' ', el('span', { className: 'fault-mark', title: faultTitle(e.fault) }, 'fault'));
  const tr = el(
    'tr',
    { className: `${e.id === view.selected ? 'selected ' : ''}${faulted ? 'faulted ' : ''}${e.status === null ? 'pending' : failed ? 'failed' : ''}` },
    el('td', { className: 'mono' }, new Date(e.at_ms).toISOString().slice(11, 23)),
    el('td', {}, listenerOf(e)),
    el('td', {}, e.method),
    pathCell(e.path),
    statusCell,
    el('td', shown.implied ? { className: 'muted', title: 'a success: this answer carries no spec code' } : {}, shown.value),
    el('td', { className: 'mono' }, e.account ?? ''),
    el('td', { className: 'num' }, e.duration_ms === null || e.duration_ms === undefined ? '' : Math.round(e.duration_ms)),
  );
  tr.dataset.id = e.id;
  return tr;
}

/** An empty journal says how to send a first request (to this emulator's speech listener). */
function emptyRow() {
  const speech = listeners.speech ?? location.origin;
  const curl =
    `curl -s ${speech}/v1/t2a_v2 -H 'Authorization: Bearer my-key' -H 'content-type: application/json' ` +
    `-d '{"model":"speech-02-turbo","text":"Hello there.","voice_setting":{"voice_id":"male-qn-qingse"}}'`;
  return el(
    'tr',
    { className: 'empty' },
    el(
      'td',
      { colSpan: 8 },
      el('p', {}, 'No requests yet. Point a client at this emulator, or send a first request:'),
      el('pre', { className: 'mono' }, curl),
      el('p', { className: 'muted' }, 'Every request shows up here as it arrives (any key works unless the emulator runs with --strict-keys).'),
    ),
  );
}

const wrap = $('#journal-wrap');
const badge = $('#journal-new');
const spacer = $('#journal-spacer');

/** The first row in view of a list scrolled down. */
function firstInView() {
  if (wrap.scrollTop <= 2) return null;
  const top = wrap.getBoundingClientRect().top;
  for (const tr of wrap.querySelectorAll('tbody tr')) if (tr.getBoundingClientRect().bottom > top + 30) return tr.dataset.id;
  return null;
}

/** The row the reader is looking at: the one under the cursor, else the open one, else the first in view. */
const anchorId = () => view.hovered ?? view.selected ?? firstInView();

export function renderJournal() {
  const shown = [...entries.values()]
    .filter(matches)
    .sort((a, b) => (a.id < b.id ? 1 : -1))
    .slice(0, MAX_ROWS);
  // Rows that arrive above the row being read push it down: the list scrolls by as much, so it stays put.
  const anchor = anchorId();
  const before = anchor ? wrap.querySelector(`tr[data-id="${anchor}"]`)?.getBoundingClientRect().top : undefined;
  $('#journal tbody').replaceChildren(...(entries.size === 0 ? [emptyRow()] : shown.map(row)));
  if (before !== undefined) {
    const after = wrap.querySelector(`tr[data-id="${anchor}"]`)?.getBoundingClientRect().top;
    if (after !== undefined && after !== before) {
      const target = wrap.scrollTop + after - before;
      // A short list cannot scroll that far: room is made below it until the reader scrolls back up.
      const room = $('#journal').offsetHeight + spacer.offsetHeight - wrap.clientHeight;
      if (target > room) spacer.style.height = `${spacer.offsetHeight + target - room}px`;
      wrap.scrollTop = target;
    }
  }
  $('#journal-count').textContent = `${shown.length} of ${entries.size} requests`;
  showBadge();
}

function showBadge() {
  if (wrap.scrollTop <= 2) {
    view.unseen = 0;
    spacer.style.height = '0px';
  }
  badge.hidden = view.unseen === 0;
  badge.textContent = `${view.unseen} new ↑`;
}

$('#journal tbody').addEventListener('mouseover', (ev) => {
  view.hovered = ev.target.closest('tr')?.dataset.id ?? null;
});
wrap.addEventListener('mouseleave', () => {
  view.hovered = null;
});
wrap.addEventListener('scroll', showBadge, { passive: true });
badge.addEventListener('click', () => {
  wrap.scrollTo({ top: 0 });
  view.unseen = 0;
  showBadge();
});
$('#journal tbody').addEventListener('click', (ev) => {
  const id = ev.target.closest('tr')?.dataset.id;
  if (!id) return;
  view.selected = id;
  for (const tr of document.querySelectorAll('#journal tbody tr')) tr.classList.toggle('selected', tr.dataset.id === id);
  renderDetail(entries.get(id));
});

$('#journal-clear').addEventListener('click', async () => {
  await api('/journal', { method: 'DELETE' });
  entries.clear();
  view.selected = null;
  renderJournal();
  renderDetail(undefined);
});

function take(entry) {
  const fresh = !entries.has(entry.id);
  entries.set(entry.id, entry);
  if (entries.size > MAX_ROWS * 2) entries.delete([...entries.keys()].sort()[0]);
  // Counted while the reader is held away from the top (a row read or open, the list scrolled down).
  if (fresh && matches(entry) && anchorId()) view.unseen++;
  renderJournal();
  if (entry.id === view.selected) renderDetail(entry);
}

let feed = null;
export function connectFeed() {
  feed?.close();
  const url = `${BASE}/journal/live${token ? `?token=${encodeURIComponent(token)}` : ''}`;
  feed = new EventSource(url);
  const status = $('#feed');
  feed.onopen = () => {
    status.textContent = 'live';
    status.className = 'pill ok';
  };
  feed.onerror = () => {
    status.textContent = 'reconnecting';
    status.className = 'pill warn';
  };
  feed.addEventListener('entry', (ev) => take(JSON.parse(ev.data).entry));
}

export async function loadJournal() {
  const { entries: list } = await api(`/journal?limit=${MAX_ROWS}`);
  for (const e of list) entries.set(e.id, e);
  renderJournal();
}

/** Forgets what the page holds (after a reset of the emulator). */
export function forgetJournal() {
  entries.clear();
  view.selected = null;
  renderJournal();
  renderDetail(undefined);
}
