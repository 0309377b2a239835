// The emulator's inspector: plain browser JavaScript over the control plane (/_emulator), no build step.
const BASE = '/_emulator';
const TOKEN_KEY = 'speech-emulator-control-token';
const MAX_ROWS = 500;

const $ = (sel, root = document) => root.querySelector(sel);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
};

// ---- control plane calls, with the token asked for once and kept for this tab ----
let token = sessionStorage.getItem(TOKEN_KEY) || '';
let waitingForToken = null;

function askToken() {
  const form = $('#token-form');
  form.hidden = false;
  $('#token-input').focus();
  waitingForToken ??= new Promise((resolve) => {
    form.onsubmit = (ev) => {
      ev.preventDefault();
      token = $('#token-input').value.trim();
      sessionStorage.setItem(TOKEN_KEY, token);
      form.hidden = true;
      waitingForToken = null;
      resolve();
    };
  });
  return waitingForToken;
}

async function api(path, { method = 'GET', body } = {}) {
  for (;;) {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${BASE}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status === 401) {
      await askToken();
      continue;
    }
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data?.error?.message || `HTTP ${res.status}`);
    return data;
  }
}

// ---- tabs ----
const loaders = {};
for (const button of document.querySelectorAll('#tabs button')) {
  button.addEventListener('click', () => {
    for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b === button);
    for (const s of document.querySelectorAll('.tab')) s.hidden = s.id !== `tab-${button.dataset.tab}`;
    loaders[button.dataset.tab]?.();
  });
}

// ---- clock ----
let clock = { now_ms: 0, frozen: false };
function showClock(c) {
  clock = c;
  const out = $('#clock-now');
  out.dataset.ms = String(c.now_ms);
  out.textContent = new Date(c.now_ms).toISOString().replace('T', ' ').replace('Z', ' UTC');
  $('#clock-state').textContent = c.frozen ? 'frozen' : 'running';
  $('#clock-state').className = `pill ${c.frozen ? 'warn' : 'ok'}`;
  $('#clock-freeze').textContent = c.frozen ? 'Unfreeze' : 'Freeze';
}
const refreshClock = async () => showClock(await api('/clock'));
$('#clock-freeze').addEventListener('click', async () => showClock(await api('/clock', { method: 'POST', body: { freeze: !clock.frozen } })));
for (const b of document.querySelectorAll('.clock-advance')) {
  b.addEventListener('click', async () => showClock(await api('/clock', { method: 'POST', body: { advance_ms: Number(b.dataset.ms) } })));
}
setInterval(() => {
  if (!clock.frozen && !document.hidden) refreshClock().catch(() => {});
}, 5000);

// ---- journal ----
const entries = new Map();
let selected = null;

/** The spec code of an answer, as the control plane read it (core/journal-entry.ts entryCode). */
function codeOf(e) {
  return typeof e.response?.code === 'number' ? e.response.code : null;
}

/** The label the emulator shows for a key (first characters … sha256 prefix), to match a typed key. */
async function labelOf(key) {
  if (!crypto.subtle) return null;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key)));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${key.slice(0, Math.min(4, Math.floor(key.length / 2)))}…${hex.slice(0, 6)}`;
}

const filters = { account: '', accountLabel: null, path: '', status: '', code: '' };
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
  if (filters.code && String(codeOf(e) ?? '') !== filters.code) return false;
  return true;
}

function row(e) {
  const code = codeOf(e);
  const tr = el(
    'tr',
    { className: `${e.id === selected ? 'selected ' : ''}${e.status === null ? 'pending' : e.status >= 400 || (code && code !== 0) ? 'failed' : ''}` },
    el('td', { className: 'mono' }, new Date(e.at_ms).toISOString().slice(11, 23)),
    el('td', {}, e.service),
    el('td', {}, e.method),
    el('td', { className: 'mono' }, e.path),
    el('td', {}, e.status ?? '…'),
    el('td', {}, code ?? ''),
    el('td', { className: 'mono' }, e.account ?? ''),
    el('td', { className: 'num' }, e.duration_ms === null ? '' : Math.round(e.duration_ms)),
  );
  tr.dataset.id = e.id;
  tr.addEventListener('click', () => {
    selected = e.id;
    renderJournal();
    renderDetail();
  });
  return tr;
}

function renderJournal() {
  const shown = [...entries.values()]
    .filter(matches)
    .sort((a, b) => (a.id < b.id ? 1 : -1))
    .slice(0, MAX_ROWS);
  $('#journal tbody').replaceChildren(...shown.map(row));
  $('#journal-count').textContent = `${shown.length} of ${entries.size} requests`;
}

/** Every download link in an answer: the stored files (T2A url output, podcasts, platform TTS files). */
function links(value, out = []) {
  if (typeof value === 'string' && /^https?:\/\/[^\s]+\/download\//.test(value)) out.push(value);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) links(v, out);
  return out;
}

const PLAYABLE = /\.(mp3|wav|flac|ogg|m4a)(\?|$)/i;

function block(title, value) {
  if (value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0)) return null;
  return el('section', {}, el('h3', {}, title), el('pre', {}, typeof value === 'string' ? value : JSON.stringify(value, null, 2)));
}

/** A player and a download link for audio on the control plane, fetched with the token (an <audio> element cannot send headers). */
function kept(url, filename, className) {
  const player = el('audio', { controls: true, preload: 'metadata', className });
  const link = el('a', { download: filename }, filename);
  fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} })
    .then((res) => (res.ok ? res.blob() : null))
    .then((blob) => {
      if (!blob) return;
      player.src = link.href = URL.createObjectURL(blob);
    });
  return el('div', { className: 'file' }, player, link);
}

/** The audio a client streamed on a socket. */
function clientAudio(e) {
  const sent = e.client_audio;
  if (!sent?.bytes) return null;
  return el(
    'section',
    {},
    el('h3', {}, `Audio the client sent (${sent.bytes} B at ${sent.sample_rate} Hz${sent.truncated ? ', cut at the cap' : ''})`),
    kept(sent.url, `${e.id}-client.wav`, 'client-audio'),
  );
}

/** The audio an answer carried as hex inside its body. */
function answerAudio(e) {
  const got = e.answer_audio;
  if (!got?.bytes) return null;
  const ext = got.format === 'pcm' ? 'wav' : got.format;
  return el(
    'section',
    {},
    el('h3', {}, `Audio of the answer (${got.format}, ${got.bytes} B, ${got.sample_rate} Hz, ${got.channels} ch)`),
    kept(got.url, `${e.id}-answer.${ext}`, 'answer-audio'),
  );
}

function renderDetail() {
  const e = entries.get(selected);
  const aside = $('#detail');
  if (!e) return aside.replaceChildren(el('p', { className: 'muted' }, 'Select a request to see its detail.'));
  const files = links(e.response?.summary).map((url) => {
    // Same listener, whatever host the link names: the page may be open on another address.
    const local = url.replace(/^https?:\/\/[^/]+/, '');
    return el(
      'div',
      { className: 'file' },
      PLAYABLE.test(local) ? el('audio', { controls: true, preload: 'metadata', src: local }) : null,
      el('a', { href: local, download: '' }, local.split('?')[0].split('/').pop()),
    );
  });
  const frames = e.ws_frames?.length
    ? el(
        'section',
        {},
        el(
          'h3',
          {},
          `WebSocket frames (${e.ws_frames_total} in all${e.ws_frames_total > e.ws_frames.length ? `, first and last ${e.ws_frames.length / 2} shown` : ''})`,
        ),
        el(
          'table',
          { className: 'frames' },
          el(
            'tbody',
            {},
            ...e.ws_frames.map((f) =>
              el(
                'tr',
                {},
                el('td', { className: 'mono' }, f.dir === 'in' ? '→' : '←'),
                el('td', {}, f.type),
                el('td', {}, f.event ?? ''),
                el('td', { className: 'num' }, `${f.size} B`),
              ),
            ),
          ),
        ),
      )
    : null;
  aside.replaceChildren(
    ...[
      el('h2', {}, `${e.method} ${e.path}`),
      el(
        'p',
        { className: 'muted' },
        `${e.id} · ${e.service} · status ${e.status ?? 'pending'}${codeOf(e) !== null ? ` · code ${codeOf(e)}` : ''}${e.duration_ms !== null ? ` · ${e.duration_ms} ms` : ''}${e.chunks ? ` · ${e.chunks} chunks` : ''}${e.note ? ` · ${e.note}` : ''}`,
      ),
      files.length ? el('section', {}, el('h3', {}, 'Audio and files'), ...files) : null,
      clientAudio(e),
      answerAudio(e),
      block('Request headers (keys redacted)', e.request?.headers),
      block('Query', e.request?.query),
      block('Request body (summary)', e.request?.body),
      block(`Response${e.response?.content_type ? ` (${e.response.content_type})` : ''}`, e.response?.summary),
      frames,
    ].filter(Boolean),
  );
}

$('#journal-clear').addEventListener('click', async () => {
  await api('/journal', { method: 'DELETE' });
  entries.clear();
  selected = null;
  renderJournal();
  renderDetail();
});

function take(entry) {
  entries.set(entry.id, entry);
  if (entries.size > MAX_ROWS * 2) entries.delete([...entries.keys()].sort()[0]);
  renderJournal();
  if (entry.id === selected) renderDetail();
}

let feed = null;
function connectFeed() {
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

async function loadJournal() {
  const { entries: list } = await api(`/journal?limit=${MAX_ROWS}`);
  for (const e of list) entries.set(e.id, e);
  renderJournal();
}

// ---- sessions, sockets, timers ----
loaders.state = async () => {
  const s = await api('/state');
  $('#state-totals').textContent =
    `${s.totals.open_websockets} open sockets · ${s.totals.pending_timers} pending timers · ${s.totals.journal_entries} journal entries · ${s.totals.fault_rules} fault rules`;
  $('#state').replaceChildren(
    ...(s.accounts.length
      ? s.accounts.map((a) =>
          el(
            'article',
            { className: 'card' },
            el('h3', {}, a.account, a.disabled ? el('span', { className: 'pill warn' }, 'disabled') : null),
            el('p', { className: 'muted' }, `balance ${a.balance_micro} µ · capabilities ${a.capabilities?.join(', ') || 'none'}`),
            el('h4', {}, `Open sockets (${a.open_websockets.length})`),
            el('ul', {}, ...a.open_websockets.map((w) => el('li', { className: 'mono' }, `${w.path} since ${new Date(w.opened_at_ms).toISOString()}`))),
            el('h4', {}, `Pending timers (${a.pending_timers.length})`),
            el('ul', {}, ...a.pending_timers.map((t) => el('li', { className: 'mono' }, `${t.label} due ${new Date(t.due_ms).toISOString()}`))),
            ...Object.entries(a.resources)
              .map(([area, view]) => block(area, view))
              .filter(Boolean),
          ),
        )
      : [el('p', { className: 'muted' }, 'No account has made a request yet.')]),
  );
};
$('#state-refresh').addEventListener('click', () => loaders.state());

// ---- faults ----
loaders.faults = async () => {
  const { rules } = await api('/faults');
  $('#faults tbody').replaceChildren(
    ...rules.map((r) => {
      const del = el('button', { type: 'button', textContent: 'Delete' });
      del.addEventListener('click', async () => {
        await api(`/faults/${encodeURIComponent(r.id)}`, { method: 'DELETE' });
        loaders.faults();
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
        el('td', {}, r.remaining),
        el('td', {}, del),
      );
    }),
  );
};
$('#fault-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = Object.fromEntries(new FormData(ev.target));
  const rule = { fault: { [f.field]: Number(f.value) } };
  for (const k of ['service', 'method', 'path', 'account']) if (f[k]) rule[k] = f[k];
  if (f.times) rule.times = f.times === 'always' ? 'always' : Number(f.times);
  try {
    await api('/faults', { method: 'POST', body: rule });
    $('#fault-error').textContent = '';
    ev.target.reset();
  } catch (err) {
    $('#fault-error').textContent = err.message;
  }
  loaders.faults();
});

// ---- accounts ----
$('#account-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const key = new FormData(ev.target).get('key').trim();
  const put = ev.submitter?.value === 'put';
  try {
    const body = put ? JSON.parse($('#account-settings').value || '{}') : undefined;
    const view = await api(`/accounts/${encodeURIComponent(key)}`, put ? { method: 'PUT', body } : {});
    $('#account-view').textContent = JSON.stringify(view, null, 2);
    $('#account-error').textContent = '';
  } catch (err) {
    $('#account-error').textContent = err.message;
  }
});

// ---- documents ----
loaders.documents = () => {
  const docs = [
    ['OpenAPI: speech service', 'openapi/speech.json'],
    ['OpenAPI: voice platform', 'openapi/platform.json'],
    ['OpenAPI: control plane', 'openapi/control.json'],
    ['AsyncAPI: WebSockets', 'asyncapi.json'],
  ];
  $('#documents').replaceChildren(
    ...docs.map(([title, path]) => {
      const link = el('a', { href: `${BASE}/${path}` }, `${BASE}/${path}`);
      // With a token the browser cannot follow a plain link: fetch and open the JSON instead.
      link.addEventListener('click', async (ev) => {
        if (!token) return;
        ev.preventDefault();
        const blob = new Blob([JSON.stringify(await api(`/${path}`), null, 2)], { type: 'application/json' });
        window.open(URL.createObjectURL(blob));
      });
      return el('li', {}, `${title}: `, link);
    }),
  );
};

// ---- start ----
(async () => {
  const health = await api('/health');
  $('#version').textContent = `v${health.version}`;
  await refreshClock();
  await loadJournal();
  connectFeed();
})().catch((err) => {
  $('#feed').textContent = `error: ${err.message}`;
  $('#feed').className = 'pill warn';
});
