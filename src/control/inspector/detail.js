// One request's detail: what it carried and what it got, in order, with a player for every audio the control plane serves.
import { $, el, fetchFile } from './api.js';
import { conversationSection, countOf, faultSection, framesSection, json, streamSection } from './contents.js';

/** The journal keeps a socket's first 100 and last 50 frames (docs/control-plane.md, Bounds). */
const FRAME_TAIL = 50;

/** The listeners' base URLs (from /health), to name the listener a download link belongs to. */
export const listeners = {};

/** The spec code of an answer, as the control plane read it (core/journal/entry.ts entryCode). */
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
        : json(summary);
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
        { className: 'muted facts' },
        el('span', { className: 'pill listener', title: 'the listener that served this request' }, listenerOf(e)),
        ' ',
        [
          e.id,
          `status ${e.status ?? 'pending'}`,
          code !== null ? `code ${code}` : null,
          e.duration_ms !== null && e.duration_ms !== undefined ? `${e.duration_ms} ms` : null,
          e.chunks && !e.stream ? countOf(e.chunks, 'chunk') : null,
          e.note ?? null,
        ]
          .filter(Boolean)
          .join(' · '),
      ),
      faultSection(e),
      files(e),
      clientAudio(e),
      block('Query', e.request?.query),
      block('Request body (summary)', e.request?.body),
      response(e),
      streamSection(e),
      conversationSection(e),
      framesSection(e, FRAME_TAIL),
      headers(e),
    ].filter(Boolean),
  );
}
