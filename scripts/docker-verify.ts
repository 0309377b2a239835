/**
 * `npm run docker:verify`: carries out the Dockerfile without a Docker engine. Each stage gets a clean
 * temporary root; COPY, WORKDIR, ENV and the RUN steps that install and build (npm/node/npx) are carried
 * out as written; OS-level steps (users, ownership, apt) are listed as skipped. Then the final stage's CMD
 * starts with its ENV (ports moved to free ones) and its HEALTHCHECK command runs until healthy; SIGTERM
 * must then close it cleanly. In between, a smoke test (image-smoke.ts) makes real requests that need every
 * runtime dependency. This stands in for `docker build` + `docker run`; it is not a container.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { smokeTest } from './image-smoke.js';

const context = resolve(import.meta.dirname, '..');
const keep = process.argv.includes('--keep');

interface Stage {
  name?: string;
  image: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
}

interface Instruction {
  op: string;
  args: string;
  line: number;
}

function log(msg: string) {
  process.stdout.write(`docker:verify  ${msg}\n`);
}

function fail(msg: string): never {
  process.stderr.write(`docker:verify  FAILED: ${msg}\n`);
  process.exit(1);
}

function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    const start = i + 1;
    if (/^\s*(#|$)/.test(line)) continue;
    while (/\\\s*$/.test(line) && i + 1 < lines.length) {
      line = line.replace(/\\\s*$/, ' ') + lines[++i]!.trim();
    }
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) fail(`line ${start}: cannot read "${line}"`);
    out.push({ op: m[1]!.toUpperCase(), args: m[2]!.trim(), line: start });
  }
  return out;
}

/** Exec form `["a","b"]` or shell form `a b` → argv. */
function commandOf(args: string): string[] {
  if (args.startsWith('[')) return JSON.parse(args) as string[];
  return ['sh', '-c', args];
}

function parseEnv(args: string): Record<string, string> {
  const env: Record<string, string> = {};
  const re = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(args))) env[m[1]!] = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!;
  if (Object.keys(env).length === 0) {
    const [k, ...v] = args.split(/\s+/);
    env[k!] = v.join(' ');
  }
  return env;
}

function dockerignore(): string[] {
  const file = join(context, '.dockerignore');
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'))
    : [];
}

function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

const OS_LEVEL = /^(apt-get|apk|useradd|adduser|groupadd|addgroup|chown|chmod|mkdir\s+-p\s+\/)/;

/** The image's Node major must be one that package.json's `engines` accepts (">=22.13" accepts 22 and up). */
function checkEngines(image: string, major: number): void {
  const range = (JSON.parse(readFileSync(join(context, 'package.json'), 'utf8')) as { engines?: { node?: string } }).engines?.node;
  const least = /^>=\s*(\d+)/.exec(range ?? '')?.[1];
  if (!least) fail(`package.json engines.node is ${JSON.stringify(range)}: expected a ">=N" range to check the base image against`);
  if (major < Number(least)) fail(`base image ${image} runs Node ${major}, but package.json engines.node is "${range}"`);
  log(`FROM ${image}: Node ${major} is within engines.node "${range}"`);
}

async function main() {
  log(
    'not a container engine: none here, and node:24-slim cannot be pulled; podman on a base made from Debian packages works but takes ~15 min, past CI budget (docs/ci.md)',
  );
  const instructions = parseDockerfile(readFileSync(join(context, 'Dockerfile'), 'utf8'));
  const ignored = dockerignore();
  const stages: Stage[] = [];
  const skipped: string[] = [];
  let cmd: string[] | null = null;
  let health: string[] | null = null;
  const exposed: string[] = [];
  const started = Date.now();

  for (const ins of instructions) {
    const stage = stages[stages.length - 1];
    if (ins.op !== 'FROM' && !stage) fail(`line ${ins.line}: ${ins.op} before FROM`);
    switch (ins.op) {
      case 'FROM': {
        const [image, as, name] = ins.args.split(/\s+/);
        const major = /^node:(\d+)/.exec(image ?? '')?.[1];
        if (major && process.versions.node.split('.')[0] !== major) fail(`base image ${image} wants Node ${major}, this machine has ${process.version}`);
        if (major) checkEngines(image!, Number(major));
        const root = mkdtempSync(join(tmpdir(), 'docker-verify-'));
        stages.push({ name: as?.toUpperCase() === 'AS' ? name : undefined, image: image!, root, workdir: '/', env: {} });
        log(`FROM ${image}${name ? ` AS ${name}` : ''}: stage root ${root} (this machine's Node ${process.version} stands in for the base image)`);
        cmd = null;
        health = null;
        break;
      }
      case 'WORKDIR':
        stage!.workdir = resolve(stage!.workdir, ins.args);
        mkdirSync(join(stage!.root, stage!.workdir), { recursive: true });
        break;
      case 'ENV':
        Object.assign(stage!.env, parseEnv(ins.args));
        break;
      case 'COPY': {
        const parts = ins.args.split(/\s+/);
        let from: Stage | undefined;
        const paths = parts.filter((p) => {
          if (p.startsWith('--from=')) {
            const ref = p.slice(7);
            from = stages.find((s) => s.name === ref) ?? stages[Number(ref)];
            if (!from) fail(`line ${ins.line}: unknown stage ${ref}`);
            return false;
          }
          return !p.startsWith('--');
        });
        const dest = paths.pop()!;
        const destAbs = join(stage!.root, resolve(stage!.workdir, dest));
        for (const src of paths) {
          const srcAbs = from ? join(from.root, resolve(from.workdir, src)) : join(context, src);
          if (!existsSync(srcAbs)) fail(`line ${ins.line}: COPY source ${src} does not exist`);
          if (!from && ignored.includes(src)) fail(`line ${ins.line}: COPY ${src} is excluded by .dockerignore`);
          const target = statSync(srcAbs).isDirectory() || !(dest.endsWith('/') || paths.length > 1) ? destAbs : join(destAbs, basename(src));
          mkdirSync(dirname(target), { recursive: true });
          cpSync(srcAbs, target, {
            recursive: true,
            filter: (p) => from !== undefined || !ignored.some((ig) => p === join(context, ig) || p.startsWith(join(context, ig) + '/')),
          });
        }
        log(`COPY ${ins.args}`);
        break;
      }
      case 'RUN': {
        if (OS_LEVEL.test(ins.args)) {
          skipped.push(`line ${ins.line}: RUN ${ins.args} (OS-level step: needs a container)`);
          log(`RUN ${ins.args}  (skipped: OS-level)`);
          break;
        }
        log(`RUN ${ins.args}`);
        const t = Date.now();
        const [bin, ...args] = commandOf(ins.args);
        const r = spawnSync(bin!, args, {
          cwd: join(stage!.root, stage!.workdir),
          env: { ...process.env, ...stage!.env, CI: 'true' },
          stdio: ['ignore', 'pipe', 'pipe'],
          encoding: 'utf8',
        });
        if (r.status !== 0) fail(`line ${ins.line}: RUN ${ins.args} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
        log(`  done in ${((Date.now() - t) / 1000).toFixed(1)} s`);
        break;
      }
      case 'USER':
        skipped.push(`line ${ins.line}: USER ${ins.args} (runs as this user in a container)`);
        break;
      case 'EXPOSE':
        exposed.push(...ins.args.split(/\s+/));
        break;
      case 'HEALTHCHECK': {
        const m = /\bCMD\s+(.*)$/.exec(ins.args);
        if (!m) fail(`line ${ins.line}: HEALTHCHECK without CMD`);
        health = commandOf(m[1]!);
        break;
      }
      case 'CMD':
        cmd = commandOf(ins.args);
        break;
      default:
        skipped.push(`line ${ins.line}: ${ins.op} ${ins.args} (not carried out)`);
    }
  }

  const final = stages[stages.length - 1];
  if (!final || !cmd) fail('the final stage has no CMD');
  if (!health) fail('the final stage has no HEALTHCHECK');
  const appDir = join(final.root, final.workdir);
  for (const dev of ['vitest', 'typescript', 'tsx']) {
    if (existsSync(join(appDir, 'node_modules', dev))) fail(`the image holds the development dependency ${dev}`);
  }
  for (const p of ['8900', '8901', '8910']) if (!exposed.includes(p)) fail(`EXPOSE lacks ${p}`);
  // The rooms' media: the UDP range the image sets must be the one it exposes.
  const udp = /^(\d+)-(\d+)$/.exec(final.env.EMULATOR_RTC_UDP_PORTS ?? '');
  if (!udp || !exposed.includes(`${udp[1]}-${udp[2]}/udp`))
    fail(`EXPOSE lacks the rooms' UDP range ${final.env.EMULATOR_RTC_UDP_PORTS ?? '(EMULATOR_RTC_UDP_PORTS unset)'}/udp`);

  const ports = { EMULATOR_SPEECH_PORT: await freePort(), EMULATOR_SPEECH_BACKUP_PORT: await freePort(), EMULATOR_PLATFORM_PORT: await freePort() };
  // A control token is set so the HEALTHCHECK must also work when the control plane requires one.
  const token = 'docker-verify-token';
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: tmpdir(),
    ...final.env,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    EMULATOR_CONTROL_TOKEN: token,
  };
  log(`CMD ${JSON.stringify(cmd)} with ENV ${JSON.stringify(final.env)} (ports moved to ${Object.values(ports).join(', ')}; EMULATOR_CONTROL_TOKEN set)`);
  const t0 = Date.now();
  const child = spawn(cmd[0]!, cmd.slice(1), { cwd: appDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  let exited: number | null = null;
  child.on('exit', (code) => (exited = code ?? -1));

  let healthyAfter = -1;
  while (Date.now() - t0 < 20_000) {
    if (exited !== null) fail(`the process exited with ${exited} before it was healthy:\n${output}`);
    const r = spawnSync(health[0]!, health.slice(1), { cwd: appDir, env, encoding: 'utf8', timeout: 3000 });
    if (r.status === 0) {
      healthyAfter = Date.now() - t0;
      break;
    }
    await new Promise((r2) => setTimeout(r2, 50));
  }
  if (healthyAfter < 0) {
    child.kill('SIGKILL');
    fail(`not healthy within 20 s:\n${output}`);
  }
  log(`healthy ${healthyAfter} ms after start (HEALTHCHECK command exited 0)`);

  const health2 = await fetch(`http://127.0.0.1:${ports.EMULATOR_PLATFORM_PORT}/_emulator/health`, { headers: { authorization: `Bearer ${token}` } }).then(
    (r) => r.json() as Promise<{ status: string }>,
  );
  if (health2.status !== 'ok') fail('platform listener is not healthy');
  // Probes are public; the rest of the control plane needs the token.
  const refused = await fetch(`http://127.0.0.1:${ports.EMULATOR_PLATFORM_PORT}/_emulator/state`);
  if (refused.status !== 401) fail(`the control plane answered ${refused.status} without its token`);
  try {
    const done = await smokeTest(`http://127.0.0.1:${ports.EMULATOR_SPEECH_PORT}`, `http://127.0.0.1:${ports.EMULATOR_PLATFORM_PORT}`, token);
    log(`smoke test on the image: ${done.join(', ')}`);
  } catch (err) {
    child.kill('SIGKILL');
    fail(`smoke test on the image: ${(err as Error).message}\n${output}`);
  }

  child.kill('SIGTERM');
  const closedIn = await new Promise<number>((res) => {
    const t = Date.now();
    const timer = setTimeout(() => res(-1), 10_000);
    const done = () => {
      clearTimeout(timer);
      res(Date.now() - t);
    };
    if (exited !== null) done();
    else child.on('exit', done);
  });
  if (closedIn < 0) {
    child.kill('SIGKILL');
    fail('did not exit within 10 s of SIGTERM');
  }
  if (exited !== 0) fail(`exited with ${exited} after SIGTERM:\n${output}`);
  log(`SIGTERM: closed cleanly in ${closedIn} ms`);
  for (const s of skipped) log(`skipped ${s}`);
  if (!keep) for (const s of stages) rmSync(s.root, { recursive: true, force: true });
  log(`OK in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err) => fail((err as Error).stack ?? String(err)));
