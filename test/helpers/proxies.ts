/**
 * nginx and HAProxy in front of emulators, configured with the exact configurations docs/scaling.md
 * prints. The test reads them from the doc, so doc and test cannot drift; it changes addresses only
 * (every listener on a free loopback port, `emu-N:<port>` on emulator N's own listener), and each of
 * those substitutions must match, or the doc has changed and the test says where.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
export const SCALING_DOC = join(ROOT, 'docs', 'scaling.md');

export type ProxyKind = 'nginx' | 'haproxy';

/** The fenced block of `lang` in the doc (there must be exactly one). */
export function docConfig(lang: ProxyKind, doc = readFileSync(SCALING_DOC, 'utf8')): string {
  const blocks = [...doc.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'gm'))].map((m) => m[1]!);
  if (blocks.length !== 1) throw new Error(`docs/scaling.md has ${blocks.length} \`\`\`${lang} blocks, not one`);
  return blocks[0]!;
}

/** The proxy binary (Debian puts both in /usr/sbin, which a user's PATH may leave out), or why there is none. */
export function proxyBinary(kind: ProxyKind): { path?: string; missing?: string } {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin']) {
    const path = join(dir, kind);
    if (dir && existsSync(path)) return { path };
  }
  return { missing: `${kind} is not installed (Debian/Ubuntu: apt-get install ${kind}; .ci/run installs it)` };
}

/**
 * The doc's "a third emulator is one more …": every line that names emulator 1 (its hop, its upstreams,
 * its ring entry, its `/emu-1/` location, its servers) gets a twin for emulator 2 right after it; a
 * block that belongs to emulator 1 as a whole (nginx's hop `server { … }`, HAProxy's `backend emu-1`)
 * gets a twin block. Emulator 1 appears as `emu-1`, `emu1_`, the hop port 9001 and HAProxy's `id 2`.
 */
export function withThirdEmulator(config: string): string {
  const names = /emu-1\b|emu1_|127\.0\.0\.1:9001\b|\bid 2\b/;
  const twin = (text: string) =>
    text
      .replace(/emu-1\b/g, 'emu-2')
      .replace(/emu1_/g, 'emu2_')
      .replace(/127\.0\.0\.1:9001\b/g, '127.0.0.1:9002')
      .replace(/\bid 2\b/g, 'id 3');
  const lines = config.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // A block that starts at column 0: nginx's `server {` … `}`, or an HAProxy section and its indented lines.
    if (/^\S/.test(line) && !line.startsWith('#')) {
      let end = i;
      if (line.trimEnd().endsWith('{')) while (end < lines.length && lines[end] !== '}') end++;
      else while (end + 1 < lines.length && /^\s+\S/.test(lines[end + 1]!)) end++;
      const block = lines.slice(i, end + 1);
      const ownHeader = names.test(line) && !line.includes('{ server');
      const ownListener = block.some((l) => /listen 127\.0\.0\.1:9001;/.test(l));
      if (end > i && (ownHeader || ownListener)) {
        out.push(...block, ...block.map(twin));
        i = end;
        continue;
      }
    }
    out.push(line);
    if (names.test(line) && !line.trimStart().startsWith('#')) out.push(twin(line));
  }
  return out.join('\n');
}

export interface EmulatorPorts {
  speech: number;
  speechBackup: number;
  platform: number;
}

export interface FrontPorts {
  speech: number;
  speechBackup: number;
  platform: number;
  /** nginx's per-emulator hops, on loopback. */
  hops: number[];
}

/** Replaces every match of `pattern`; at least one must match. */
function must(text: string, pattern: RegExp, to: (...m: string[]) => string, what: string): string {
  let n = 0;
  const out = text.replace(pattern, (...m: string[]) => (n++, to(...m)));
  if (n === 0) throw new Error(`docs/scaling.md: no ${what} (${pattern}) in the configuration; the test and the doc disagree`);
  return out;
}

/** The doc's configuration on this machine's loopback ports: addresses change, nothing else. */
export function localize(kind: ProxyKind, config: string, front: FrontPorts, emulators: EmulatorPorts[]): string {
  const listener = { '8900': 'speech', '8901': 'speechBackup', '8910': 'platform' } as const;
  let c = must(
    config,
    /\bemu-(\d+):(8900|8901|8910)\b/g,
    (_m, n, port) => {
      const emu = emulators[Number(n)];
      if (!emu) throw new Error(`the configuration names emu-${n}, and ${emulators.length} emulators run`);
      return `127.0.0.1:${emu[listener[port as keyof typeof listener]]}`;
    },
    'emulator address emu-N:port',
  );
  if (kind === 'nginx') {
    c = must(c, /\blisten (8900|8901|8910);/g, (_m, port) => `listen 127.0.0.1:${front[listener[port as keyof typeof listener]]};`, 'front listen');
    c = must(
      c,
      /\b127\.0\.0\.1:90(\d\d)\b/g,
      (_m, n) => {
        const hop = front.hops[Number(n)];
        if (hop === undefined) throw new Error(`the configuration names hop 90${n}, and ${front.hops.length} hops were given`);
        return `127.0.0.1:${hop}`;
      },
      'hop address 127.0.0.1:90NN',
    );
  } else {
    c = must(c, /\bbind :(8900|8901|8910)\b/g, (_m, port) => `bind 127.0.0.1:${front[listener[port as keyof typeof listener]]}`, 'front bind');
    c = must(c, /\bdst_port 8901\b/g, () => `dst_port ${front.speechBackup}`, 'backup port test');
  }
  return c;
}

/** Free loopback ports (bound and let go: the proxy takes them right after). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<import('node:net').Server>((resolve) => {
          const s = createServer();
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

export interface RunningProxy {
  kind: ProxyKind;
  speechUrl: string;
  speechBackupUrl: string;
  platformUrl: string;
  /** The configuration as the proxy runs it. */
  config: string;
  stop(): Promise<void>;
}

/** The doc's nginx block goes inside `http { }`; the rest keeps nginx in the foreground, its files in `dir`. */
function nginxMain(dir: string, body: string): string {
  return [
    'daemon off;',
    'master_process off;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} warn;`,
    'events { worker_connections 512; }',
    'http {',
    '    access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `    ${t}_temp_path ${join(dir, t)};`),
    body,
    '}',
    '',
  ].join('\n');
}

/** Starts nginx or HAProxy with `config` (already localized) and waits until every front port accepts. */
export async function startProxy(kind: ProxyKind, binary: string, config: string, front: FrontPorts): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), `speech-emulator-${kind}-`));
  const file = join(dir, `${kind}.conf`);
  let args: string[];
  if (kind === 'nginx') {
    writeFileSync(file, nginxMain(dir, config));
    args = ['-p', dir, '-c', file, '-e', join(dir, 'error.log')];
  } else {
    writeFileSync(file, config);
    args = ['-f', file, '-db'];
  }
  // The configuration check first: its message is clearer than a process that exits.
  const check = spawnSync(binary, kind === 'nginx' ? [...args, '-t', '-q'] : ['-c', ...args.filter((a) => a !== '-db')], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`${kind} refuses the configuration of docs/scaling.md:\n${check.stdout}${check.stderr}\n${config}`);
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const hops = front.hops.filter((port) => config.includes(`listen 127.0.0.1:${port};`));
  const ports = [front.speech, front.speechBackup, front.platform, ...hops];
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (gone) throw new Error(`${kind} exited at start:\n${out}${kind === 'nginx' ? readFileSync(join(dir, 'error.log'), 'utf8') : ''}`);
    if ((await Promise.all(ports.map(accepts))).every(Boolean)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${kind} did not listen on ${ports.join(', ')} within 15 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    kind,
    speechUrl: `http://127.0.0.1:${front.speech}`,
    speechBackupUrl: `http://127.0.0.1:${front.speechBackup}`,
    platformUrl: `http://127.0.0.1:${front.platform}`,
    config,
    stop: async () => {
      if (!gone) {
        // nginx stops at once on TERM; HAProxy on USR1 waits for connections, on TERM it does not.
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
