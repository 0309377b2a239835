// Calls to the control plane and fetches of files, as the inspector makes them (no build step).
export const BASE = '/_emulator';
const TOKEN_KEY = 'speech-emulator-control-token';
/** Sent with every file the page fetches for its players: the listener serves it without journaling it (docs/control-plane.md). */
export const INSPECTOR_HEADER = { 'x-emulator-inspector': '1' };

export const $ = (sel, root = document) => root.querySelector(sel);
export const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  for (const c of children) if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : String(c));
  return node;
};

// ---- the control token, asked for once and kept for this tab ----
export let token = sessionStorage.getItem(TOKEN_KEY) || '';
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

export async function api(path, { method = 'GET', body } = {}) {
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

/**
 * A file for a player: control-plane audio with the token, a stored file (`/download/…`) with the
 * inspector's mark. Fetched once, whole (an <audio src> would send range requests and no header).
 */
export async function fetchFile(url) {
  const headers = url.startsWith(`${BASE}/`) ? (token ? { authorization: `Bearer ${token}` } : {}) : INSPECTOR_HEADER;
  const res = await fetch(url, { headers });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.blob();
}
