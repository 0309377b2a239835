import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningEmulator, StartOptions } from '../../src/index.js';
import { startTestEmulator } from '../helpers/emulator.js';

/** A voice only the upstream's catalogue lists: the replaying emulator's own rules refuse it (2054). */
export const UPSTREAM_VOICE = 'tape-upstream-voice';
/** The same, on the platform's catalogue. */
export const UPSTREAM_PLATFORM_VOICE = 'tape_upstream_voice';
/** The key the recording suite presents; no tape file may hold it. */
export const REAL_KEY = 'sk-real-upstream-key-0123456789abcdef';

/**
 * The "real service" of the tests: a second emulator with its own seed and its own fixtures (a voice the replaying
 * emulator does not know), so what it answered differs from what the replaying emulator would answer itself.
 */
export async function startUpstream(options: StartOptions = {}): Promise<{ emu: RunningEmulator; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tapes-upstream-fixtures-'));
  const voices = JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/speech-voices.json'), 'utf8')) as unknown[];
  voices.push({ voice_id: UPSTREAM_VOICE, voice_name: 'Upstream only', description: 'A voice of the upstream only.', language: 'English' });
  writeFileSync(join(dir, 'speech-voices.json'), JSON.stringify(voices));
  const platform = JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/platform-voices.json'), 'utf8')) as unknown[];
  platform.push({ voice_id: UPSTREAM_PLATFORM_VOICE, name: 'Upstream only', language: 'en', gender: 'female' });
  writeFileSync(join(dir, 'platform-voices.json'), JSON.stringify(platform));
  const emu = await startTestEmulator({ seed: 'upstream-seed', fixturesDir: dir, ...options });
  return {
    emu,
    close: async () => {
      await emu.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function tapeDir(): string {
  return mkdtempSync(join(tmpdir(), 'tapes-'));
}

/** An emulator recording into `dir` from `upstream`. */
export function startRecorder(dir: string, upstream: RunningEmulator, options: StartOptions = {}): Promise<RunningEmulator> {
  return startTestEmulator({
    record: dir,
    upstreamSpeech: upstream.speechUrl,
    upstreamSpeechBackup: upstream.speechBackupUrl,
    upstreamPlatform: upstream.platformUrl,
    ...options,
  });
}

/** An emulator replaying `dir` (as fast as it can unless told). */
export function startReplayer(dir: string, options: StartOptions = {}): Promise<RunningEmulator> {
  return startTestEmulator({ replay: dir, replaySpeed: 0, ...options });
}

/** Server-sent events of a body, as `data:` JSON. */
export function sseEvents(text: string): any[] {
  return text
    .split(/\n\n/)
    .filter((b) => b.trim())
    .map((b) => JSON.parse(b.replace(/^data: /, '')));
}
