/**
 * The package as a user gets it, without working in a clone: packed (`npm pack`, which builds it
 * through `prepare`) and installed into a fresh project, and installed by git URL (npm clones it,
 * installs its dependencies and builds it through `prepare`). In each project the package is imported
 * and required, started, driven with the control client and closed; the CLI starts by its bin.
 *
 * What npm prints is part of it: the install-script policy (`allowScripts` in package.json) covers
 * every dependency with an install script, so `npm ci` lists none; the tarball carries no `prepare`
 * (scripts/pack-manifest.mjs), so installing it prints no warning, with this npm or an older one
 * (npm 10, docs/troubleshooting.md).
 *
 * SLOW (one build and four installs: a minute or more; several on a busy machine): part of the full
 * suite (`npm test`), not of the quick tier. Installs read the npm cache first (--prefer-offline), so
 * they work where only the npm registry is reachable. What is packed and installed is the committed
 * HEAD (a clone of this repository), not uncommitted changes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlClient } from '../../src/client/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
const MINUTES = 60_000;

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  return runBoth(cmd, args, cwd, env).stdout;
}

/** Both outputs, for what npm prints as a user sees it. */
function runBoth(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): { stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', ...env }, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return { stdout: r.stdout, stderr: r.stderr };
}

/** npm's output without its progress and timing lines: what is left is what a user would read. */
const printed = (out: { stdout: string; stderr: string }) =>
  `${out.stdout}\n${out.stderr}`
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !/^(added|changed|removed|up to date)\b.* in [\d.]+m?s$/.test(line));

/** What each consumer script does: start, make one synthesis, check it with the control client, close. */
const body = (lib: string, client: string) => `
  const emu = await startEmulator({ logLevel: 'silent', controlToken: 'install-token' });
  try {
    const r = await fetch(emu.speechUrl + '/v1/t2a_v2', {
      method: 'POST',
      headers: { authorization: 'Bearer install-key', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'speech-02-turbo', text: 'Installed.', voice_setting: { voice_id: 'male-qn-qingse' } }),
    });
    const answer = await r.json();
    const byUrl = new ControlClient({ url: emu.platformUrl, token: 'install-token' });
    const verified = await byUrl.verify({ request: { path: '/v1/t2a_v2', code: 0 }, exactly: 1 });
    let refused = null;
    try { await new ControlClient({ url: emu.speechUrl }).state(); } catch (e) { refused = { name: e.name, status: e.status, same: e instanceof ControlClientError }; }
    const clock = await emu.control.clock.advance(1000);
    console.log(JSON.stringify({ lib: ${lib}, client: ${client}, code: answer.base_resp.status_code, verified, refused, frozen: clock.frozen,
      sameClient: emu.control instanceof ControlClient }));
  } finally {
    await emu.close();
  }`;

const ESM = `import { startEmulator } from 'speech-emulator';
import { ControlClient, ControlClientError } from 'speech-emulator/client';
${body("'import'", "'import'")}
`;
const CJS = `const { startEmulator } = require('speech-emulator');
const { ControlClient, ControlClientError } = require('speech-emulator/client');
(async () => {${body("'require'", "'require'")}
})().catch((e) => { console.error(e); process.exit(1); });
`;

/** A fresh project with the two consumer scripts. */
function project(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  writeFileSync(join(dir, 'esm.mjs'), ESM);
  writeFileSync(join(dir, 'cjs.cjs'), CJS);
  return dir;
}

function consume(dir: string) {
  return ['esm.mjs', 'cjs.cjs'].map((file) => JSON.parse(run(process.execPath, [file], dir).trim().split('\n').at(-1)!));
}

function expectWorking(results: ReturnType<typeof consume>) {
  expect(results.map((r) => r.lib)).toEqual(['import', 'require']);
  for (const r of results) {
    expect(r.code).toBe(0);
    expect(r.verified).toEqual({ ok: true, count: 1, expected: 'exactly 1' });
    expect(r.refused).toEqual({ name: 'ControlClientError', status: 401, same: true });
    expect(r.frozen).toBe(false);
    expect(r.sameClient).toBe(true);
  }
}

/** Starts the installed CLI by its bin on free ports; answers its speech URL once the banner is out. */
function startBin(dir: string): Promise<{ url: string; stop: () => Promise<number | null> }> {
  const child = spawn(join(dir, 'node_modules', '.bin', 'speech-emulator'), ['--speech-port', '0', '--speech-backup-port', '0', '--platform-port', '0'], {
    cwd: dir,
    env: { ...process.env, NODE_OPTIONS: '', EMULATOR_HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let out = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => (out += d));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /speech synthesis\s+(http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, stop: () => (child.kill('SIGTERM'), exited) });
    });
    void exited.then((code) => reject(new Error(`the bin exited ${code} before it ran: ${out}`)));
  });
}

describe('installing the package without a clone (slow: a build and four installs)', { timeout: 10 * MINUTES }, () => {
  const work = mkdtempSync(join(tmpdir(), 'speech-emulator-install-'));
  const clone = join(work, 'clone');
  let tarball = '';

  beforeAll(() => {
    run('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone], work);
    // The clone packs with this checkout's build tools (the packed files do not include node_modules).
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
    const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work, '--loglevel=error'], clone)) as { filename: string }[];
    tarball = join(work, packed[0]!.filename);
  }, 10 * MINUTES);
  afterAll(() => {
    // The link first, so nothing removes this checkout's node_modules through it.
    rmSync(join(clone, 'node_modules'), { force: true });
    rmSync(work, { recursive: true, force: true });
  }, 5 * MINUTES);

  it('npm pack builds through prepack: the tarball holds the ES and CommonJS entries, their types, the CLI and fixtures', () => {
    const listing = run('tar', ['-tzf', tarball], work).split('\n');
    for (const file of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/index.cjs',
      'dist/index.d.cts',
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/client/index.cjs',
      'dist/client/index.d.cts',
      'dist/main.js',
      'dist/emulator.cjs',
      'dist/inspector/index.html',
      'fixtures/accounts.json',
      'LICENSE',
      'README.md',
    ]) {
      expect(listing, file).toContain(`package/${file}`);
    }
    expect(listing.some((f) => f.startsWith('package/src/') || f.startsWith('package/test/'))).toBe(false);
    // The public types name no internals.
    const types = run('tar', ['-xzOf', tarball, 'package/dist/app.d.ts'], work);
    expect(types).not.toMatch(/\bemulator: Emulator\b/);
    // The packed manifest has no script that only means something in a clone; the clone's is left whole.
    const manifest = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json'], work)) as { scripts: Record<string, string> };
    expect(Object.keys(manifest.scripts)).not.toContain('prepare');
    expect(Object.keys(manifest.scripts)).not.toContain('prepack');
    expect(run('git', ['status', '--porcelain', '--untracked-files=no'], clone)).toBe('');
    expect(existsSync(join(clone, '.package.json.unpacked'))).toBe(false);
  });

  it('npm ci would list no install script to review: allowScripts covers every dependency that has one', () => {
    // The list `npm ci` ends with, made from the installed tree and package.json's allowScripts (in this
    // checkout: the clone's node_modules is a link to it, which npm reads as a tree of links).
    const pending = printed(runBoth('npm', ['install-scripts', 'ls'], ROOT));
    expect(pending).toEqual(['No packages with unreviewed install scripts.']);
  });

  it('the packed tarball installs into a fresh project: import, require, start, control client; the bin starts', async () => {
    const dir = project(join(work, 'from-tarball'));
    // At npm's own log level: no install-script list, no warning about `prepare`, nothing but the count.
    expect(printed(runBoth('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], dir))).toEqual([]);
    expectWorking(consume(dir));
    expect(run(join(dir, 'node_modules', '.bin', 'speech-emulator'), ['--version'], dir).trim()).toMatch(/^speech-emulator \d+\.\d+\.\d+/);
    const cli = await startBin(dir);
    try {
      const control = new ControlClient({ url: cli.url });
      expect(await control.health()).toMatchObject({ status: 'ok', ready: true });
    } finally {
      expect(await cli.stop()).toBe(0);
    }
  });

  it('an older npm (10, before allowScripts) installs the tarball printing nothing about scripts either', () => {
    const npm10 = join(work, 'npm10');
    run('npm', ['install', ...NPM_FLAGS, '--prefix', npm10, 'npm@10'], work);
    const dir = project(join(work, 'from-tarball-npm10'));
    const cli = join(npm10, 'node_modules', 'npm', 'bin', 'npm-cli.js');
    expect(run(process.execPath, [cli, '--version'], dir).trim()).toMatch(/^10\./);
    expect(printed(runBoth(process.execPath, [cli, 'install', '--prefer-offline', '--no-audit', '--no-fund', tarball], dir))).toEqual([]);
    expect(existsSync(join(dir, 'node_modules', 'speech-emulator', 'dist', 'main.js'))).toBe(true);
  });

  it('installs by git URL (npm clones it, installs its dependencies, builds through prepare): import, require, start', () => {
    const dir = project(join(work, 'from-git'));
    const out = runBoth('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', `git+file://${clone}`], dir);
    // A git install builds through `prepare`, which npm lists for approval (docs/troubleshooting.md).
    expect(printed(out).join('\n')).toMatch(/speech-emulator@\S+ \(prepare: /);
    expect(existsSync(join(dir, 'node_modules', 'speech-emulator', 'dist', 'index.cjs'))).toBe(true);
    const installed = JSON.parse(readFileSync(join(dir, 'node_modules', 'speech-emulator', 'package.json'), 'utf8')) as { version: string };
    expectWorking(consume(dir));
    expect(run(join(dir, 'node_modules', '.bin', 'speech-emulator'), ['--version'], dir).trim()).toContain(installed.version);
  });
});
