// Options refused at start and the CLI as a process: no emulator for the file.
import { spawn } from 'node:child_process';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliAnswer, ConfigError, readConfig, settings } from '../../src/config.js';
import { startEmulator } from '../../src/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

/** A valid raw value per setting and what it reads as. */
const SAMPLES: Record<string, [string, unknown]> = {
  host: ['0.0.0.0', '0.0.0.0'],
  speechPort: ['1234', 1234],
  speechBackupPort: ['1235', 1235],
  platformPort: ['1236', 1236],
  seed: ['abc', 'abc'],
  dataDir: ['/tmp/data-x', '/tmp/data-x'],
  fixturesDir: ['/tmp/fix-x', '/tmp/fix-x'],
  publicUrl: ['https://emu.example.test', 'https://emu.example.test'],
  strictKeys: ['on', true],
  resetFaultsOnStart: ['yes', true],
  journalLimit: ['50', 50],
  bodyTimeoutMs: ['1500', 1500],
  maxConnections: ['64', 64],
  socketStallMs: ['2500', 2500],
  idleReleaseMs: ['0', 0],
  logLevel: ['debug', 'debug'],
  controlToken: ['tok', 'tok'],
  globalLimits: ['off', false],
  latency: ['realistic', 'realistic'],
  voiceEngine: ['speech', 'speech'],
  livekitApiKey: ['lk', 'lk'],
  livekitApiSecret: ['lks', 'lks'],
  rtcUrl: ['wss://rtc.x.test', 'wss://rtc.x.test'],
  rtcUdpPorts: ['40000-40100', [40000, 40100]],
  rtcNodeIp: ['192.0.2.10', '192.0.2.10'],
  corsOrigins: ['http://localhost:5173, https://app.example.test/', ['http://localhost:5173', 'https://app.example.test']],
  allowedHosts: ['emulator, Speech.Internal', ['emulator', 'speech.internal']],
  record: ['/tmp/tapes-x', '/tmp/tapes-x'],
  recordMode: ['record-missing', 'record-missing'],
  recordPerAccount: ['on', true],
  replay: ['/tmp/tapes-y', '/tmp/tapes-y'],
  replayStrict: ['yes', true],
  replaySpeed: ['2.5', 2.5],
  upstreamSpeech: ['https://api.example.test', 'https://api.example.test'],
  upstreamSpeechBackup: ['https://api-b.example.test', 'https://api-b.example.test'],
  upstreamPlatform: ['https://platform.example.test', 'https://platform.example.test'],
};

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('no ConfigError');
}

describe('readConfig', () => {
  it('defaults match the documented ones', () => {
    const c = readConfig([], {});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      speechPort: 8900,
      speechBackupPort: 8901,
      platformPort: 8910,
      journalLimit: 1000,
      strictKeys: false,
      logLevel: 'info',
    });
    expect(c.dataDir).toBeUndefined();
    expect(c.controlToken).toBeUndefined();
  });

  it('every setting has a flag and an environment twin that read the same', () => {
    for (const s of settings) {
      const sample = SAMPLES[s.key];
      expect(sample, s.key).toBeDefined();
      const [raw, want] = sample!;
      // --record only makes sense with an upstream to forward to.
      const base: Record<string, string> = s.key === 'record' ? { EMULATOR_UPSTREAM_SPEECH: 'https://api.example.test' } : {};
      expect(readConfig([], { ...base, [s.env]: raw })[s.key], s.env).toEqual(want);
      expect(readConfig([s.flag, raw], base)[s.key], s.flag).toEqual(want);
      expect(readConfig([`${s.flag}=${raw}`], base)[s.key], `${s.flag}=`).toEqual(want);
    }
  });

  it('a flag wins over its environment twin; a bare boolean flag is true', () => {
    expect(readConfig(['--speech-port', '7000'], { EMULATOR_SPEECH_PORT: '6000' }).speechPort).toBe(7000);
    expect(readConfig(['--strict-keys', '--seed', 's'], {})).toMatchObject({ strictKeys: true, seed: 's' });
    expect(readConfig([], { EMULATOR_STRICT_KEYS: '' }).strictKeys).toBe(false);
  });

  it('a bad value is one line naming the variable or flag it came from', () => {
    const cases: [string[], Record<string, string>, string][] = [
      [[], { EMULATOR_SPEECH_PORT: 'abc' }, 'EMULATOR_SPEECH_PORT'],
      [['--speech-port', 'abc'], {}, '--speech-port'],
      [[], { EMULATOR_PLATFORM_PORT: '70000' }, 'EMULATOR_PLATFORM_PORT'],
      [[], { EMULATOR_JOURNAL_LIMIT: '0' }, 'EMULATOR_JOURNAL_LIMIT'],
      [[], { EMULATOR_STRICT_KEYS: 'maybe' }, 'EMULATOR_STRICT_KEYS'],
      [[], { EMULATOR_RTC_UDP_PORTS: '60000-50000' }, 'EMULATOR_RTC_UDP_PORTS'],
      [[], { EMULATOR_PUBLIC_URL: 'ftp://x' }, 'EMULATOR_PUBLIC_URL'],
      [[], { LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
      [['--nope'], {}, '--nope'],
    ];
    for (const [argv, env, name] of cases) {
      const msg = configError(() => readConfig(argv, env));
      expect(msg).toContain(name);
      expect(msg).not.toContain('\n');
    }
  });

  it('a flag that needs a value and has none is an error naming the flag and what it takes; switches may stand alone', () => {
    for (const s of settings.filter((x) => !x.switch)) {
      for (const argv of [[s.flag], [s.flag, '--strict-keys']]) {
        const msg = configError(() => readConfig(argv, {}));
        expect(msg).toBe(`${s.flag} needs a value: ${s.expects}`);
      }
    }
    expect(readConfig(['--strict-keys', '--global-limits'], {})).toMatchObject({ strictKeys: true, globalLimits: true });
    // a bad value says what was expected, not the schema's words
    expect(configError(() => readConfig(['--speech-port', 'abc'], {}))).toBe(
      'invalid --speech-port="abc": expected a port number from 0 to 65535 (0 = any free port)',
    );
    expect(configError(() => readConfig([], { LOG_LEVEL: 'loud' }))).toBe(
      'invalid LOG_LEVEL="loud": expected one of fatal, error, warn, info, debug, trace, silent',
    );
    // 0 turns the idle release off; a wait under a second would land in the gaps of a stream's frames
    expect(configError(() => readConfig(['--idle-release-ms', '50'], {}))).toBe(
      'invalid --idle-release-ms="50": expected 0 (never) or a whole number of milliseconds from 1000 to 3600000',
    );
  });

  it('--version and --help are answers, not errors', () => {
    const answer = (argv: string[]) => {
      try {
        readConfig(argv, {});
      } catch (err) {
        expect(err).toBeInstanceOf(CliAnswer);
        return (err as Error).message;
      }
      throw new Error('no answer');
    };
    expect(answer(['--version'])).toMatch(/^speech-emulator \d+\.\d+\.\d+/);
    expect(answer(['-v'])).toBe(answer(['--version']));
    const help = answer(['--help']);
    expect(help.split('\n')[0]).toMatch(/^speech-emulator: a self-hostable emulator/);
    expect(help).toContain('examples:');
    const examples = help.split('\n').filter((l) => /^  speech-emulator/.test(l));
    expect(examples.length).toBeGreaterThanOrEqual(3);
    expect(examples.some((l) => /^  speech-emulator tapes list DIR/.test(l))).toBe(true);
    for (const s of settings) expect(help).toContain(s.flag);
  });

  it('startEmulator names a bad option too, in the words of the CLI', async () => {
    await expect(startEmulator({ speechPort: 'abc' as unknown as number })).rejects.toThrow(
      'invalid option speechPort="abc": expected a port number from 0 to 65535 (0 = any free port)',
    );
    await expect(startEmulator({ journalLimit: 0 })).rejects.toThrow('invalid option journalLimit=0: expected a whole number from 1 to 1000000');
    await expect(startEmulator({ speechPort: 'abc' as unknown as number })).rejects.toBeInstanceOf(ConfigError);
  });

  it('startEmulator refuses a misspelt option instead of dropping it', async () => {
    const err = await startEmulator({ strict_keys: true } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/unknown option strict_keys.*strictKeys/);
  });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const pidOf = new WeakMap<() => string, number>();

function runCli(
  args: string[],
  env: Record<string, string>,
  during?: (out: () => string, kill: () => void) => Promise<void>,
  // Through tsx's own CLI by default; `node --import tsx` where signals must reach the emulator itself.
  runner: string[] = [],
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = runner.length
      ? spawn(process.execPath, [...runner, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(TSX, ['src/main.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    const out = () => stdout;
    pidOf.set(out, child.pid!);
    if (during)
      during(out, () => child.kill('SIGTERM')).catch((err) => {
        child.kill('SIGKILL');
        reject(err);
      });
  });
}

/** Runs the CLI until it exits by itself (a refusal), with a time bound that fails the test if it hangs. */
async function refusal(args: string[]): Promise<Run> {
  let timer: NodeJS.Timeout | undefined;
  const r = await runCli(args, {}, async (_out, kill) => {
    timer = setTimeout(kill, 20_000);
  });
  clearTimeout(timer);
  return r;
}

const FREE = ['--speech-port', '0', '--speech-backup-port', '0', '--platform-port', '0'];

describe('CLI refusals before any listener opens', () => {
  it('one port asked for twice: exit 2, one line naming both flags, nothing listening', async () => {
    const r = await refusal(['--speech-port', '0', '--speech-backup-port', '28901', '--platform-port', '28901']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'speech-emulator: --speech-backup-port and --platform-port both ask for port 28901; the speech backup and the voice platform service need one each',
    );
    expect(r.stdout).not.toMatch(/listening/i);
  }, 30_000);

  it('a busy port: exit 2 naming the flag, the service and the variable, before any listening line', async () => {
    const holder: Server = createServer();
    await new Promise<void>((res) => holder.listen(0, '127.0.0.1', res));
    const port = (holder.address() as { port: number }).port;
    try {
      const r = await refusal(['--speech-port', '0', '--speech-backup-port', '0', '--platform-port', String(port)]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(
        `speech-emulator: --platform-port ${port} (voice platform service) is already in use; choose another with --platform-port or EMULATOR_PLATFORM_PORT`,
      );
      expect(r.stdout).not.toMatch(/listening/i);
    } finally {
      holder.close();
    }
  }, 30_000);

  it('a data dir that cannot hold state fails fast with one line (a folder under /proc used to spin a CPU forever)', async () => {
    for (const [dir, why] of [
      ['/proc/speech-emulator-x', 'it cannot be created'],
      ['/etc/hostname', 'it is not a folder'],
    ]) {
      const r = await refusal([...FREE, '--data-dir', dir!]);
      expect(r.code, dir).toBe(2);
      expect(r.stderr.trim()).toMatch(new RegExp(`^speech-emulator: --data-dir ${dir} cannot hold the emulator's state: ${why}`));
      expect(r.stdout).not.toMatch(/listening/i);
    }
  }, 45_000);

  it('--version prints the version on stdout and exits 0', async () => {
    const r = await refusal(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^speech-emulator \d+\.\d+\.\d+$/);
  }, 30_000);
});

describe('CLI', () => {
  it("a second SIGINT ends the process at once, with the signal's exit code", async () => {
    const r = await runCli(
      FREE,
      { LOG_LEVEL: 'warn' },
      async (out) => {
        const deadline = Date.now() + 45_000;
        while (!/inspector\s+http/.test(out())) {
          if (Date.now() > deadline) throw new Error(`no start-up banner: ${out()}`);
          await new Promise((res) => setTimeout(res, 50));
        }
        expect(out()).toMatch(/inspector\s+http:\/\/127\.0\.0\.1:\d+\/_emulator\/ \(open in a browser\)/);
        // A request whose body never finishes keeps the first close waiting (its grace period).
        const speech = new URL(/speech synthesis\s+(http:\S+)/.exec(out())![1]!);
        const slow = connect(Number(speech.port), speech.hostname);
        slow.on('error', () => undefined);
        slow.write(`POST /v1/t2a_v2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"te`);
        await new Promise((res) => setTimeout(res, 300));
        const pid = pidOf.get(out)!;
        process.kill(pid, 'SIGINT');
        await new Promise((res) => setTimeout(res, 300));
        process.kill(pid, 'SIGINT');
        setTimeout(() => slow.destroy(), 15_000).unref();
      },
      ['--import', 'tsx', 'src/main.ts'],
    );
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('SIGINT again: exiting without waiting for open connections');
  }, 60_000);

  it('a bad flag exits non-zero with one line naming it', async () => {
    const r = await runCli(['--speech-port', 'abc'], {});
    expect(r.code).not.toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('--speech-port');
    expect(r.stdout).toBe('');
  }, 60_000);

  it('starts from EMULATOR_* variables, prints its URLs, logs one key-free line per request, closes on SIGTERM', async () => {
    const key = 'cli-secret-key-0123456789';
    const r = await runCli(
      [],
      { EMULATOR_SPEECH_PORT: '0', EMULATOR_SPEECH_BACKUP_PORT: '0', EMULATOR_PLATFORM_PORT: '0', LOG_LEVEL: 'info', EMULATOR_SEED: 'cli' },
      async (out, kill) => {
        const deadline = Date.now() + 45_000;
        while (!/voice platform\s+http/.test(out())) {
          if (Date.now() > deadline) throw new Error(`no start-up banner: ${out()}`);
          await new Promise((res) => setTimeout(res, 50));
        }
        const speech = /speech synthesis\s+(http:\S+)/.exec(out())![1]!;
        const platform = /voice platform\s+(http:\S+)/.exec(out())![1]!;
        expect((await fetch(`${speech}/_emulator/health`)).status).toBe(200);
        expect((await fetch(`${platform}/v1/where`, { headers: { 'x-api-key': key } })).status).toBe(404);
        await new Promise((res) => setTimeout(res, 100));
        kill();
      },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/speech backup\s+http:\/\/127\.0\.0\.1:\d+/);
    expect(r.stdout).toMatch(/control plane\s+http:\/\/127\.0\.0\.1:\d+\/_emulator/);
    const logs = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = logs.find((l) => l.path === '/v1/where');
    expect(line).toMatchObject({ method: 'GET', status: 404, path: '/v1/where' });
    expect(typeof line!.ms).toBe('number');
    expect(String(line!.account)).toMatch(/^cli-…[0-9a-f]{6}$/);
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(logs.filter((l) => String(l.path ?? '').startsWith('/_emulator'))).toEqual([]);
  }, 60_000);
});
