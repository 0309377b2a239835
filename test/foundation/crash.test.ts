import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnEmulator, type ChildEmulator } from '../helpers/child.js';
import { call } from '../helpers/emulator.js';
import { toneWav } from '../helpers/transcode.js';
import { upload } from '../platform/tts-helpers.js';

/**
 * With a data dir, whatever the emulator acknowledged survives `kill -9`: a burst of writes of every
 * kind runs with a few in flight, the process is killed at a seeded point of the burst, and after a
 * restart on the same folder every write answered before the kill is there.
 */
const SEED = Number(process.env.CRASH_SEED ?? 20261123);
const KEY = 'crash-key';
const h = { 'x-api-key': KEY };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Small seeded generator (mulberry32): the kill point and the order of writes follow the seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Kind = 'upload' | 'voice' | 'session' | 'call' | 'agent' | 'fault' | 'account';
const KINDS: Kind[] = ['upload', 'voice', 'session', 'call', 'agent', 'fault', 'account'];

/** One acknowledged write and what the restarted emulator must show for it. */
interface Acked {
  kind: Kind;
  i: number;
  value: string;
  extra?: number;
}

const nonce = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

async function write(emu: ChildEmulator, kind: Kind, i: number, refKey: string): Promise<Acked | null> {
  const p = emu.platformUrl;
  switch (kind) {
    case 'upload': {
      const r = await upload(p, KEY, toneWav(0.2 + (i % 5) / 10), { name: `u${i}.wav` });
      return r.body?.succeed ? { kind, i, value: r.body.data.object_key, extra: r.body.data.size } : null;
    }
    case 'voice': {
      const r = await call(`${p}/v1/voice/save`, { headers: h, json: { voice_id: `crash_voice_${i}`, ref_audio: refKey, ref_text: 'hello there' } });
      return r.body?.succeed ? { kind, i, value: `crash_voice_${i}` } : null;
    }
    case 'session': {
      const r = await call(`${p}/api/v1/audio/sessions`, { headers: h, json: { voice_id: 'default' } });
      return r.body?.succeed ? { kind, i, value: r.body.data.session_id } : null;
    }
    case 'call': {
      const r = await call(`${p}/v1/audio/assistant/start`, { headers: h, json: { client_nonce: nonce(i) } });
      return r.body?.succeed ? { kind, i, value: r.body.data.session_id } : null;
    }
    case 'agent': {
      const r = await call(`${p}/api/v1/agents/openapi/sessions/create`, {
        headers: { ...h, 'idempotency-key': `crash-${i}` },
        json: { agentId: 'agent_demo' },
      });
      return r.body?.succeed ? { kind, i, value: r.body.data.item.sessionId } : null;
    }
    case 'fault': {
      const r = await call(`${p}/_emulator/faults`, { json: { path: `/crash/${i}`, times: 'always', fault: { code: 1000 } } });
      return r.status === 200 || r.status === 201 ? { kind, i, value: `/crash/${i}` } : null;
    }
    case 'account': {
      const r = await call(`${p}/_emulator/accounts/crash-account-${i}`, { method: 'PUT', json: { balance_micro: 1_000_000 + i, project: `p${i}` } });
      return r.status === 200 ? { kind, i, value: `crash-account-${i}`, extra: 1_000_000 + i } : null;
    }
  }
}

/** Checks one write on the restarted emulator; answers what is missing, or null. */
async function missing(emu: ChildEmulator, dir: string, a: Acked, state: string): Promise<string | null> {
  const p = emu.platformUrl;
  switch (a.kind) {
    case 'upload': {
      if (!state.includes(a.value)) return `upload ${a.value} not in the state`;
      const size = statSync(join(dir, 'blobs', a.value), { throwIfNoEntry: false })?.size;
      return size === a.extra ? null : `upload ${a.value}: file has ${size} bytes, ${a.extra} acknowledged`;
    }
    case 'voice': {
      const r = await call(`${p}/v1/voice/list?voice_id=${a.value}&page_size=1`, { headers: h });
      return r.body?.data?.list?.[0]?.voice_id === a.value ? null : `voice ${a.value} not listed`;
    }
    case 'session':
      return state.includes(a.value) ? null : `session ${a.value} not in the state`;
    case 'call': {
      // The nonce is remembered: starting again with it answers the same session.
      const r = await call(`${p}/v1/audio/assistant/start`, { headers: h, json: { client_nonce: nonce(a.i) } });
      return r.body?.data?.session_id === a.value ? null : `nonce ${nonce(a.i)} answered ${r.body?.data?.session_id}, not ${a.value}`;
    }
    case 'agent': {
      // The idempotency key is remembered: the same create answers the same session.
      const r = await call(`${p}/api/v1/agents/openapi/sessions/create`, {
        headers: { ...h, 'idempotency-key': `crash-${a.i}` },
        json: { agentId: 'agent_demo' },
      });
      return r.body?.data?.item?.sessionId === a.value ? null : `idempotency key crash-${a.i} answered ${r.body?.data?.item?.sessionId}, not ${a.value}`;
    }
    case 'fault': {
      const r = await call(`${p}/_emulator/faults`);
      return JSON.stringify(r.body).includes(`"${a.value}"`) ? null : `fault rule on ${a.value} not listed`;
    }
    case 'account': {
      const r = await call(`${p}/_emulator/accounts/${a.value}`);
      return r.body?.balance_micro === a.extra ? null : `account ${a.value} has balance ${r.body?.balance_micro}, ${a.extra} acknowledged`;
    }
  }
}

describe('acknowledged writes survive kill -9 with a data dir', () => {
  it(`a burst of every kind of write, killed at a seeded point (seed ${SEED}), is all there after a restart`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emulator-crash-'));
    dirs.push(dir);
    const rnd = random(SEED);
    const first = await spawnEmulator(['--data-dir', dir, '--seed', 'crash', '--log-level', 'warn']);
    const acked: Acked[] = [];
    let killed = false;
    try {
      const ref = await upload(first.platformUrl, KEY, toneWav(1), { name: 'ref.wav' });
      expect(ref.body.succeed).toBe(true);
      const refKey = ref.body.data.object_key as string;

      // Every kind appears before the kill point; four writes are in flight at any time.
      const total = 70;
      const killAfter = KINDS.length * 2 + Math.floor(rnd() * (total - KINDS.length * 2 - 4));
      const plan = Array.from({ length: total }, (_, i) => (i < KINDS.length ? KINDS[i]! : KINDS[Math.floor(rnd() * KINDS.length)]!));
      let next = 0;
      const worker = async () => {
        while (!killed && next < plan.length) {
          const i = next++;
          const done = await write(first, plan[i]!, i, refKey).catch(() => null);
          if (killed) return; // answered after the kill: not acknowledged before it
          if (done) acked.push(done);
          if (acked.length >= killAfter && !killed) {
            killed = true;
            first.child.kill('SIGKILL');
          }
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      expect(killed).toBe(true);
      expect(await first.exited).toBe('SIGKILL');
    } finally {
      if (!killed) first.child.kill('SIGKILL');
    }

    expect(new Set(acked.map((a) => a.kind))).toEqual(new Set(KINDS));
    const second = await spawnEmulator(['--data-dir', dir, '--seed', 'crash', '--log-level', 'warn']);
    try {
      const state = JSON.stringify((await call(`${second.platformUrl}/_emulator/state`)).body);
      const lost: string[] = [];
      for (const a of acked) {
        const problem = await missing(second, dir, a, state);
        if (problem) lost.push(problem);
      }
      expect(lost).toEqual([]);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 120_000);
});
