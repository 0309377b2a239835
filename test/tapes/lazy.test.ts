import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * Starts an emulator in a fresh process with `options`, asks the control plane what tapes are in effect (and, with
 * `replayDir`, replays that folder from then on), serves one T2A request, and lists the src/tapes/ modules it loaded.
 */
function tapesModulesLoaded(options: Record<string, unknown>, replayDir?: string): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const loaded = new Set();
    registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); if (r.url.includes('/src/tapes/')) loaded.add(r.url.slice(r.url.indexOf('/src/tapes/') + 1)); return r; } });
    const { startEmulator } = await import('./src/index.ts');
    const emu = await startEmulator(${JSON.stringify({ logLevel: 'silent', ...options })});
    const view = await emu.control.tapesLoaded();
    if (view.mode !== ${JSON.stringify(options.replay ? 'replay' : null)}) throw new Error('tapes in effect: ' + JSON.stringify(view));
    ${replayDir ? `await emu.control.tapesReplay({ dir: ${JSON.stringify(replayDir)} });` : ''}
    await fetch(emu.speechUrl + '/v1/t2a_v2', { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'speech-02-turbo', text: 'Hi.', voice_setting: { voice_id: 'male-qn-qingse' } }) }).then((r) => r.text());
    await emu.close();
    console.log(JSON.stringify([...loaded]));
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as string[];
}

describe('tapes are loaded only when asked for', () => {
  it('without --record or --replay no module of src/tapes/ is loaded, even to answer a request or tell that no tapes are in effect', () => {
    expect(tapesModulesLoaded({})).toEqual([]);
  });

  it('with --replay they are (the check above would see them)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapes-lazy-'));
    try {
      expect(tapesModulesLoaded({ replay: dir })).toContain('src/tapes/tapes.ts');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('replayed from the control plane at run time, they are loaded then', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapes-lazy-'));
    try {
      expect(tapesModulesLoaded({}, dir)).toEqual(expect.arrayContaining(['src/tapes/tapes.ts', 'src/tapes/sockets/install.ts']));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
