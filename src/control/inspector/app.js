// The emulator's inspector: plain browser JavaScript over the control plane (/_emulator), no build step.
// Modules: api.js (calls, token, files), journal.js (the list), detail.js (one request), state.js, forms.js.
import { $, BASE, api, el, token } from './api.js';
import { listeners } from './detail.js';
import { onReset, loadFaults } from './forms.js';
import { connectFeed, forgetJournal, loadJournal } from './journal.js';
import { loadState } from './state.js';

// ---- tabs ----
const loaders = { state: loadState, faults: loadFaults };
for (const button of document.querySelectorAll('#tabs button')) {
  button.addEventListener('click', () => {
    for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b === button);
    for (const s of document.querySelectorAll('.tab')) s.hidden = s.id !== `tab-${button.dataset.tab}`;
    loaders[button.dataset.tab]?.();
  });
}
$('#state-refresh').addEventListener('click', () => loadState());
onReset(() => {
  forgetJournal();
  loadState();
  refreshClock().catch(() => {});
});

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
  Object.assign(listeners, { speech: health.services?.speech, 'speech-backup': health.services?.speech_backup, platform: health.services?.platform });
  await refreshClock();
  await loadJournal();
  connectFeed();
})().catch((err) => {
  $('#feed').textContent = `error: ${err.message}`;
  $('#feed').className = 'pill warn';
});
