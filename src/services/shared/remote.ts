/**
 * The offline resolver for audio handed over by URL or object key (voice cloning `ref_audio`, detection
 * `audio_url`, diarization `url`/`object_key`, podcast prompts). The emulator never reaches the network:
 * - its own signed download links (any listener, or EMULATOR_PUBLIC_URL) are read from the blob store,
 *   signature and expiry checked;
 * - URLs of the remote-audio fixture (host `cdn.emulator.test`) are read from fixtures/remote/;
 * - a host that is loopback, private-range, link-local or `localhost` is "not public";
 * - any other URL is a download failure.
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { Account } from '../../core/state/accounts.js';
import { DOWNLOAD_PREFIX } from '../../core/state/blobs.js';
import type { Emulator } from '../../core/emulator.js';

export type Fetched =
  | { ok: true; bytes: Buffer; name: string; contentType?: string }
  | { ok: false; problem: 'not-http' | 'not-public' | 'download-failed' | 'expired' | 'not-found'; message: string };

/** True for IPv4 addresses that are not public: this-network, private, shared (CGNAT), loopback, link-local, IETF, benchmarking, multicast and reserved. */
function isNonPublicV4(host: string): boolean {
  const [a, b] = host.split('.').map(Number) as [number, number];
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    a >= 224 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && (b === 168 || (b === 0 && host.split('.')[2] === '0'))) ||
    (a === 198 && (b === 18 || b === 19))
  );
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part counts as two). */
function v6Groups(host: string): number[] {
  let text = host;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = part(head);
  const t = part(tail);
  return tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/**
 * True for hosts a public URL must not point at. The URL parser already turns decimal, hex and short
 * IPv4 forms into dotted quads and writes IPv6 in compressed hex (`[::ffff:127.0.0.1]` becomes
 * `::ffff:7f00:1`), so IPv6 is read group by group and an embedded IPv4 address is checked as IPv4.
 */
export function isNonPublicHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === '') return true;
  const v = isIP(host);
  if (v === 4) return isNonPublicV4(host);
  if (v !== 6) return false;
  const g = v6Groups(host.replace(/%.*$/, ''));
  const embedded = () => isNonPublicV4(`${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`);
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return true; // ::
  if (zeros(7) && g[7] === 1) return true; // ::1
  if (zeros(5) && g[5] === 0xffff) return embedded(); // IPv4-mapped ::ffff:a.b.c.d
  if (zeros(6)) return embedded(); // IPv4-compatible ::a.b.c.d (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded(); // NAT64 64:ff9b::/96
  const first = g[0]!;
  // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local (deprecated), ff00::/8 multicast.
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xffc0) === 0xfec0 || (first & 0xff00) === 0xff00;
}

/** Whether `url` points at one of this emulator's own listeners or its public URL. */
function isOwnUrl(emu: Emulator, url: URL): boolean {
  const bases = [emu.urls.speech, emu.urls.speechBackup, emu.urls.platform, emu.config.publicUrl].filter(Boolean) as string[];
  return bases.some((b) => {
    try {
      const base = new URL(b);
      return base.host === url.host && url.pathname.startsWith(`${base.pathname.replace(/\/$/, '')}${DOWNLOAD_PREFIX}`);
    } catch {
      return false;
    }
  });
}

/** Fetches audio by URL without touching the network (see the rules above). */
export async function fetchRemote(emu: Emulator, raw: string): Promise<Fetched> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: 'not-http', message: 'is not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, problem: 'not-http', message: 'must be an http or https URL' };

  if (isOwnUrl(emu, url)) {
    const rel = url.pathname.slice(url.pathname.indexOf(DOWNLOAD_PREFIX) + DOWNLOAD_PREFIX.length);
    const check = emu.blobs.verify(rel, url.searchParams.get('expires') ?? undefined, url.searchParams.get('sig') ?? undefined);
    if (check === 'expired') return { ok: false, problem: 'expired', message: 'is an expired download link' };
    if (check !== 'ok') return { ok: false, problem: 'download-failed', message: 'is a download link with an invalid signature' };
    try {
      return { ok: true, bytes: await emu.blobs.read(rel), name: rel.split('/').pop()! };
    } catch {
      return { ok: false, problem: 'not-found', message: 'points at a file that no longer exists' };
    }
  }

  if (isNonPublicHost(url.hostname)) return { ok: false, problem: 'not-public', message: 'does not resolve to a public address' };

  const entry = emu.fixtures.data['remote-audio.json'].find((e) => e.url === `${url.origin}${url.pathname}` || e.url === raw);
  if (!entry) return { ok: false, problem: 'download-failed', message: 'could not be downloaded (the emulator is offline; only fixture URLs resolve)' };
  try {
    const bytes = await readFile(emu.fixtures.resolveFile(entry.file));
    return { ok: true, bytes, name: url.pathname.split('/').pop() || entry.file, contentType: entry.content_type };
  } catch {
    return { ok: false, problem: 'download-failed', message: 'could not be downloaded (fixture file missing)' };
  }
}

/**
 * Object keys are blob paths whose third segment is the owning account's id:
 * `uploads/{scene}/{account.id}/…` (uploads) and `podcasts/{account.id}/…` (podcast audio).
 */
export function uploadKeyPrefix(account: Account, scene: string): string {
  return `uploads/${scene}/${account.id}/`;
}

export function podcastKeyPrefix(account: Account): string {
  return `podcasts/${account.id}/`;
}

/** True when `key` names a blob of `account` (an upload of any scene or a podcast). */
export function ownsObjectKey(account: Account, key: string): boolean {
  const parts = key.split('/');
  if (parts[0] === 'uploads') return parts.length >= 4 && parts[2] === account.id;
  if (parts[0] === 'podcasts') return parts.length >= 3 && parts[1] === account.id;
  return false;
}

/** Reads an object key of `account`; null when it is not theirs or does not exist. */
export async function readObjectKey(emu: Emulator, account: Account, key: string): Promise<Buffer | null> {
  if (!ownsObjectKey(account, key)) return null;
  try {
    return await emu.blobs.read(key);
  } catch {
    return null;
  }
}
