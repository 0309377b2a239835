// One request's detail: what it carried and what it got, in order, with a player for every audio the control plane serves.
import { $, el, fetchFile } from './api.js';

/** The listeners' base URLs (from /health), to name the listener a download link belongs to. */
export const listeners = {};

/** The spec code of an answer, as the control plane read it (core/journal-entry.ts entryCode). */
export function codeOf(e) {
  return typeof e.response?.code === 'number' ? e.response.code : null;
}

/** The code the list shows: the answer's own, or 0 for a success that carries none (audio bytes, a stream, a socket). */
export function shownCode(e) {
  const code = codeOf(e);
  if (code !== null) return { value: code, implied: false };
  if (e.status !== null && e.status !== undefined && e.status < 400) return { value: 0, implied: true };
  return { value: '', implied: false };
}

/** The listener that served a request: speech, speech-backup or platform. */
export function listenerOf(e) {
  if (typeof e.listener === 'string') return e.listener;
  return e.service === 'speech' && /backup listener/.test(e.note ?? '') ? 'speech-backup' : e.service;
}

function listenerOfUrl(url) {
  try {
    const origin = new URL(url, location.href).origin;
    for (const [name, base] of Object.entries(listeners)) if (base && new URL(base).origin === origin) return name;
  } catch {
    /* not a URL */
  }
  return null;
}

const HEX_AUDIO = /^[0-9a-f]+(…\((\d+) chars\))?$/i;

/** A value as JSON with its audio fields (hex) replaced by their size; `found` counts them. */
function withoutAudio(value, found = { count: 0 }) {
  if (Array.isArray(value)) return value.map((v) => withoutAudio(v, found));
  if (!value || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    const m = typeof v === 'string' && /audio|chunk/i.test(k) && v.length > 16 ? HEX_AUDIO.exec(v) : null;
    if (m) {
      found.count++;
      out[k] = `‹audio: ${Math.floor(Number(m[2] ?? v.length) / 2).toLocaleString('en')} bytes›`;
    } else out[k] = withoutAudio(v, found);
  }
  return out;
}

const json = (value) => el('pre', {}, typeof value === 'string' ? value : JSON.stringify(value, null, 2));

function block(title, value, ...extra) {
  if (value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0)) return null;
  return el('section', {}, el('h3', {}, title), json(value), ...extra);
}

/** A player and a download link, the file fetched by the page (with the token, or with the inspector's mark). */
function player(url, filename, className, label) {
  const audio = el('audio', { controls: true, preload: 'metadata', className });
  audio.dataset.source = url;
  const link = el('a', { download: filename, title: url }, filename);
  const status = el('span', { className: 'muted' });
  fetchFile(url)
    .then((blob) => {
      audio.src = link.href = URL.createObjectURL(blob);
    })
    .catch((err) => {
      status.textContent = `cannot load: ${err.message}`;
    });
  return el('div', { className: 'file' }, label ? el('span', { className: 'pill' }, label) : null, audio, link, status);
}

/** Every download link in an answer: the stored files (T2A url output, podcasts, platform files). */
function links(value, out = []) {
  if (typeof value === 'string' && /^(https?:\/\/[^\s/]+)?\/download\//.test(value)) out.push(value);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) links(v, out);
  return out;
}

const PLAYABLE = /\.(mp3|wav|flac|ogg|opus|m4a|pcm)(\?|$)/i;

function files(e) {
  const found = [...new Set(links(e.response?.summary))];
  if (!found.length) return null;
  return el(
    'section',
    {},
    el('h3', {}, 'Audio and files'),
    ...found.map((url) => {
      // Fetched from the page's own listener, whatever host the link names: every listener serves every file.
      const local = url.replace(/^https?:\/\/[^/]+/, '');
      const name = local.split('?')[0].split('/').pop();
      const from = listenerOfUrl(url) ?? listenerOf(e);
      if (PLAYABLE.test(local)) return player(local, name, 'download-audio', from);
      const link = el('a', { href: '#', title: local }, name);
      link.addEventListener('click', async (ev) => {
        ev.preventDefault();
        const a = el('a', { href: URL.createObjectURL(await fetchFile(local)), download: name });
        a.click();
      });
      return el('div', { className: 'file' }, el('span', { className: 'pill' }, from), link);
    }),
  );
}

function clientAudio(e) {
  const sent = e.client_audio;
  if (!sent?.bytes) return null;
  return el(
    'section',
    {},
    el('h3', {}, `Audio the client sent (${sent.bytes.toLocaleString('en')} B at ${sent.sample_rate} Hz${sent.truncated ? ', cut at the cap' : ''})`),
    player(sent.url, `${e.id}-client.wav`, 'client-audio'),
  );
}

/** The file the control plane serves for each answer format (control/journal.ts). */
const EXT = { pcm: 'wav', pcmu_raw: 'wav', pcmu_wav: 'wav', opus: 'opus' };

function answerAudio(e) {
  const got = e.answer_audio;
  if (!got?.bytes) return null;
  const ext = EXT[got.format] ?? got.format;
  return el(
    'div',
    {},
    el('p', { className: 'muted' }, `Audio of the answer: ${got.format}, ${got.bytes.toLocaleString('en')} B, ${got.sample_rate} Hz, ${got.channels} ch`),
    player(got.url, `${e.id}-answer.${ext}`, 'answer-audio'),
  );
}

/** What a frame or event holds beyond its name and size (its JSON, as far as the journal keeps it). */
function contentOf(f) {
  const { dir: _d, type: _t, size: _s, event: _e, at_ms: _a, ...rest } = f;
  if (!Object.keys(rest).length) return null;
  // A frame kept as its text shows as the JSON it holds.
  for (const [k, v] of Object.entries(rest)) {
    if (typeof v !== 'string' || !/^\s*[[{]/.test(v)) continue;
    try {
      rest[k] = JSON.parse(v);
    } catch {
      /* cut at the journal's bound: shown as text */
    }
  }
  return withoutAudio(rest);
}

function frames(e) {
  if (!e.ws_frames?.length) return null;
  const total = e.ws_frames_total ?? e.ws_frames.length;
  return el(
    'section',
    {},
    el('h3', {}, `WebSocket frames (${total} in all${total > e.ws_frames.length ? `, ${e.ws_frames.length} kept: the first and the last` : ''})`),
    el(
      'table',
      { className: 'frames' },
      el(
        'tbody',
        {},
        ...e.ws_frames.map((f) => {
          const content = contentOf(f);
          return el(
            'tr',
            {},
            el('td', { className: 'mono', title: f.dir === 'in' ? 'from the client' : 'to the client' }, f.dir === 'in' ? '→' : '←'),
            el('td', {}, f.type),
            el('td', {}, f.event ?? ''),
            el('td', { className: 'num' }, `${f.size.toLocaleString('en')} B`),
            el('td', { className: 'content' }, content ? json(content) : null),
          );
        }),
      ),
    ),
  );
}

/** Server-Sent Events as the journal keeps them (`events`, or the stream's first and last ones), each with its JSON. */
function events(e) {
  const s = e.response?.summary;
  if (!s || typeof s !== 'object') return null;
  const kept = [e.stream?.first_event, e.stream?.last_event].filter((ev) => ev !== undefined);
  const list = Array.isArray(s.events) ? s.events : kept;
  if (!list.length) return null;
  return el('section', {}, el('h3', {}, `Stream events (${e.chunks ?? list.length} in all)`), ...list.map((ev) => json(withoutAudio(ev))));
}

function response(e) {
  const summary = e.response?.summary;
  const audio = answerAudio(e);
  if ((summary === undefined || summary === null) && !audio) return null;
  const type = e.response?.content_type ? ` (${e.response.content_type})` : '';
  // An answer too large to summarize, or bytes (audio, a file), is kept as its size only.
  const sizeOnly =
    summary && typeof summary === 'object' && typeof summary.bytes === 'number' && Object.keys(summary).every((k) => k === 'bytes' || k === 'trace_id');
  const shown =
    summary === undefined || summary === null
      ? null
      : sizeOnly
        ? el('p', { className: 'muted' }, `${summary.bytes.toLocaleString('en')} bytes (the journal keeps the size of this answer, not its content)`)
        : json(withoutAudio(summary));
  return el('section', {}, el('h3', {}, `Response${type}`), shown, audio);
}

/** Headers come last and folded: they are rarely what one looks for. */
function headers(e) {
  const h = e.request?.headers;
  if (!h || !Object.keys(h).length) return null;
  return el('details', {}, el('summary', {}, `Request headers (${Object.keys(h).length}, keys redacted)`), json(h));
}

export function renderDetail(e) {
  const aside = $('#detail');
  if (!e) return aside.replaceChildren(el('p', { className: 'muted' }, 'Select a request to see its detail.'));
  const code = codeOf(e);
  aside.replaceChildren(
    ...[
      el('h2', {}, `${e.method} ${e.path}`),
      el(
        'p',
        { className: 'muted' },
        [
          e.id,
          listenerOf(e),
          `status ${e.status ?? 'pending'}`,
          code !== null ? `code ${code}` : null,
          e.duration_ms !== null && e.duration_ms !== undefined ? `${e.duration_ms} ms` : null,
          e.chunks ? `${e.chunks} chunks` : null,
          e.note ?? null,
        ]
          .filter(Boolean)
          .join(' · '),
      ),
      block('Fault', e.fault),
      files(e),
      clientAudio(e),
      block('Query', e.request?.query),
      block('Request body (summary)', e.request?.body === undefined ? undefined : withoutAudio(e.request.body)),
      response(e),
      events(e),
      frames(e),
      headers(e),
    ].filter(Boolean),
  );
}
