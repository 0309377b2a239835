// What a request carried inside its answer, made readable: the fault and what it did, the stream's
// first and last events, the socket's frames in order and the turns of a conversation.
import { el } from './api.js';
import { FAULT_FIELDS } from './fault-fields.js';

const HEX_AUDIO = /^[0-9a-f]+(…\((\d+) chars\))?$/i;
/** Fields that carry audio as text; the journal keeps them as `{"chars": N}` (core/journal/frames.ts). */
const AUDIO_FIELD = /audio|chunk/i;
/** Audio fields in Base64 (four characters per three bytes); every other one is hex (two per byte). */
const BASE64_FIELD = /base64|audio_data/i;

const bytesText = (n) => `‹audio: ${Math.floor(n).toLocaleString('en')} bytes›`;

/** The size an audio field stands for: the journal's `{chars}` record, or hex kept as text (older entries, bodies). */
function audioStandIn(key, v) {
  if (!AUDIO_FIELD.test(key)) return null;
  if (v && typeof v === 'object' && !Array.isArray(v) && typeof v.chars === 'number' && Object.keys(v).length === 1)
    return bytesText(BASE64_FIELD.test(key) ? (v.chars * 3) / 4 : v.chars / 2);
  const m = typeof v === 'string' && v.length > 16 ? HEX_AUDIO.exec(v) : null;
  return m ? bytesText(Number(m[2] ?? v.length) / 2) : null;
}

/** A value with its audio fields replaced by their size. */
/** A count with its noun, singular for one (`1 chunk`). */
export const countOf = (n, noun) => `${n} ${n === 1 ? noun : `${noun}s`}`;

export function withoutAudio(value) {
  if (Array.isArray(value)) return value.map(withoutAudio);
  if (!value || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = audioStandIn(k, v) ?? withoutAudio(v);
  return out;
}

/** JSON with audio sizes shown bare (not as quoted strings). */
function jsonText(value, indent) {
  return JSON.stringify(withoutAudio(value), null, indent).replace(/"(‹audio: [\d,]+ bytes›)"/g, '$1');
}

/** JSON on one line with a space after each comma and colon (line breaks only come from the indentation). */
const oneLine = (value) => jsonText(value, 1).replace(/\n\s*/g, ' ');

export const json = (value) => el('pre', {}, typeof value === 'string' ? value : jsonText(value, 2));

// ---- the fault ----

const ORIGIN = { header: 'the X-Emulator-Fault header', account: "the account's stream faults" };
// The stream fields from the registry (core/faults/fields.ts, written into fault-fields.js).
const PACE = FAULT_FIELDS.filter((f) => f.group === 'pace').map((f) => f.name);
const DAMAGE = FAULT_FIELDS.filter((f) => f.group === 'audio').map((f) => f.name);

const fields = (f, names) =>
  names
    .filter((n) => f[n] !== undefined)
    .map((n) => `${n}=${f[n]}`)
    .join(', ');

/** What the fault did, one line per effect, in words. */
function faultEffects(f) {
  const lines = [];
  if (f.code !== undefined) lines.push(`answered with spec code ${f.code}`);
  if (f.status !== undefined) lines.push(`answered with HTTP ${f.status}`);
  if (f.delay_ms !== undefined) lines.push(`delayed the answer by ${f.delay_ms} ms`);
  if (f.cut_after_chunks !== undefined)
    lines.push(
      f.cut_at_chunk !== undefined
        ? `cut the connection after chunk ${f.cut_at_chunk} (cut_after_chunks=${f.cut_after_chunks})`
        : `cut_after_chunks=${f.cut_after_chunks}: the answer ended before that chunk, nothing was cut`,
    );
  if (f.close_ws !== undefined) lines.push(`closed the socket with code ${f.close_ws}`);
  const pace = fields(f, PACE);
  if (pace) lines.push(`paced the audio: ${pace}${f.first_audio_ms !== undefined ? `; first audio after ${f.first_audio_ms} ms` : ''}`);
  else if (f.first_audio_ms !== undefined) lines.push(`first audio after ${f.first_audio_ms} ms`);
  const damage = fields(f, DAMAGE);
  if (damage) lines.push(`asked to damage the audio: ${damage}`);
  if (f.audio_faults?.length) lines.push(`damaged the audio: ${f.audio_faults.join(', ')}`);
  const known = new Set([
    'origin',
    'code',
    'status',
    'delay_ms',
    'cut_after_chunks',
    'cut_at_chunk',
    'close_ws',
    'first_audio_ms',
    'audio_faults',
    'ignored',
    ...PACE,
    ...DAMAGE,
  ]);
  for (const [k, v] of Object.entries(f)) if (!known.has(k)) lines.push(`${k}=${JSON.stringify(v)}`);
  if (f.ignored?.length) lines.push(`not expressed by this endpoint (named in X-Emulator-Fault-Ignored): ${f.ignored.join(', ')}`);
  return lines;
}

export function faultSection(e) {
  const f = e.fault;
  if (!f || typeof f !== 'object') return null;
  const origin = ORIGIN[f.origin] ?? `the fault rule ${f.origin}`;
  return el(
    'section',
    { className: 'fault' },
    el('h3', {}, 'Fault injected'),
    el('p', { className: 'fault-origin' }, 'From ', el('strong', {}, origin)),
    el('ul', { className: 'fault-effects' }, ...faultEffects(f).map((line) => el('li', {}, line))),
    el('details', {}, el('summary', {}, 'as JSON'), json(f)),
  );
}

// ---- a streamed answer (Server-Sent Events) ----

/** The stream as the journal keeps it: chunks and bytes, its first and last events with their JSON. */
export function streamSection(e) {
  const s = e.stream;
  const summary = e.response?.summary;
  // Older entries kept the events in the response summary.
  const listed = Array.isArray(summary?.events) ? summary.events : null;
  if (!s && !listed) return null;
  const parts = [];
  if (listed) listed.forEach((ev, i) => parts.push(eventBlock(`Event ${i + 1}`, ev)));
  if (s?.first_event !== undefined) parts.push(eventBlock('First event', s.first_event));
  if (s?.last_event !== undefined) parts.push(eventBlock(e.fault?.cut_at_chunk !== undefined ? 'Last event sent (then cut)' : 'Last event', s.last_event));
  const size = [e.chunks ? countOf(e.chunks, 'chunk') : null, typeof s?.bytes === 'number' ? `${s.bytes.toLocaleString('en')} bytes` : null].filter(Boolean);
  if (!parts.length && !size.length) return null;
  // A socket's stream has no events of its own: its chunks are the frames below.
  if (!parts.length) parts.push(el('p', { className: 'muted' }, `The answer's audio (${size.join(', ')}) went out in the frames below.`));
  return el('section', { className: 'events' }, el('h3', {}, `Stream${size.length ? ` (${size.join(', ')})` : ''}`), ...parts);
}

function eventBlock(title, ev) {
  return el('div', { className: 'event' }, el('h4', {}, title), json(ev));
}

// ---- a socket ----

/** A frame's content: its JSON as the journal keeps it (text that is JSON is read as JSON). */
function contentOf(f) {
  let c = f.content;
  if (c === undefined) return undefined;
  if (typeof c === 'string' && /^\s*[[{]/.test(c)) {
    try {
      c = JSON.parse(c);
    } catch {
      /* cut at the journal's bound: shown as text */
    }
  }
  return c;
}

/** The frames in order; a run of binary frames in one direction is one row (count and bytes). */
function frameRows(list, keptHead, dropped) {
  const rows = [];
  let run = null;
  list.forEach((f, i) => {
    if (dropped > 0 && i === keptHead)
      rows.push(
        el(
          'tr',
          { className: 'gap' },
          el('td', { colSpan: 5 }, `… ${dropped.toLocaleString('en')} frames not kept (the journal keeps the first and the last) …`),
        ),
      );
    if (f.type === 'binary' && run && run.dir === f.dir && !(dropped > 0 && i === keptHead)) {
      run.count++;
      run.bytes += f.size;
      run.cells.type.textContent = `binary ×${run.count}`;
      run.cells.size.textContent = `${run.bytes.toLocaleString('en')} B`;
      return;
    }
    run = null;
    const arrow = el('td', { className: 'mono', title: f.dir === 'in' ? 'from the client' : 'to the client' }, f.dir === 'in' ? '→' : '←');
    const type = el('td', {}, f.type === 'close' ? 'close' : f.type);
    const size = el('td', { className: 'num' }, `${f.size.toLocaleString('en')} B`);
    const content = contentOf(f);
    const cell = el('td', { className: 'content' });
    if (content !== undefined) cell.append(el('code', {}, typeof content === 'string' ? content : oneLine(content)));
    if (f.truncated) cell.append(el('span', { className: 'pill warn truncated', title: 'the journal kept only part of this frame' }, 'truncated'));
    const tr = el('tr', { className: `frame ${f.type}` }, arrow, type, el('td', {}, f.event ?? ''), size, cell);
    tr.dataset.dir = f.dir;
    if (f.event) tr.dataset.event = f.event;
    rows.push(tr);
    if (f.type === 'binary') run = { dir: f.dir, count: 1, bytes: f.size, cells: { type, size } };
  });
  return rows;
}

export function framesSection(e, frameTail) {
  const list = e.ws_frames;
  if (!list?.length) return null;
  const total = e.ws_frames_total ?? list.length;
  const dropped = total - list.length;
  const notes = [];
  if (dropped > 0) notes.push(`${list.length} kept: the first and the last`);
  if (e.ws_frames_truncated) notes.push('older contents dropped to keep the journal bounded');
  return el(
    'section',
    {},
    el('h3', {}, `WebSocket frames (${total} in all${notes.length ? `; ${notes.join('; ')}` : ''})`),
    el('table', { className: 'frames' }, el('tbody', {}, ...frameRows(list, list.length - frameTail, dropped))),
  );
}

/** The turns of a conversation socket: what was heard (`asr_final`) or typed (`text_input`), and the reply text (`done`). */
export function conversationSection(e) {
  const turns = [];
  let turn = null;
  for (const f of e.ws_frames ?? []) {
    const c = contentOf(f);
    if (!c || typeof c !== 'object') continue;
    if (f.dir === 'out' && c.type === 'asr_final' && typeof c.asr_text === 'string') turns.push((turn = { heard: c.asr_text }));
    else if (f.dir === 'in' && typeof c.text_input === 'string') turns.push((turn = { typed: c.text_input }));
    else if (f.dir === 'out' && c.type === 'done' && typeof c.reply_text === 'string') {
      if (!turn || turn.reply !== undefined) turns.push((turn = {}));
      turn.reply = c.reply_text;
    }
  }
  if (!turns.length) return null;
  const line = (label, text, className) => el('div', { className }, el('span', { className: 'muted' }, label), ' ', text);
  return el(
    'section',
    { className: 'conversation' },
    el('h3', {}, `Conversation (${turns.length} turn${turns.length === 1 ? '' : 's'})`),
    ...turns.map((t) =>
      el(
        'div',
        { className: 'turn' },
        t.heard !== undefined ? line('heard (asr_final):', t.heard, 'heard') : null,
        t.typed !== undefined ? line('typed (text_input):', t.typed, 'typed') : null,
        t.reply !== undefined ? line('replied:', t.reply, 'reply') : line('replied:', '(no reply in the kept frames)', 'reply muted'),
      ),
    ),
  );
}
