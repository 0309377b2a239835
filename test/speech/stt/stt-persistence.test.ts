// Speech to text across a restart on one data dir: the usage in seconds and the balance it was charged
// come back, and the emulator's own audio made before the restart is still transcribed exactly.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { control, startTestEmulator } from '../../helpers/emulator.js';
import { toneWav } from '../../helpers/transcode.js';
import { speak, STT_KEY, sttFile } from './stt-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'emulator-stt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('usage, balance and signature records survive a restart', async () => {
  const first = await startTestEmulator({ dataDir: dir });
  let own: Awaited<ReturnType<typeof speak>>;
  try {
    own = await speak(first.speechUrl, 'Kept across a restart.');
    await control(first.speechUrl).putAccount(STT_KEY, { balance_micro: 10_000 });
    expect((await sttFile(first.speechUrl, toneWav(2))).status).toBe(200);
  } finally {
    await first.close();
  }
  const second = await startTestEmulator({ dataDir: dir });
  try {
    const ctl = control(second.speechUrl);
    const state = await ctl.accountState(STT_KEY);
    expect(state.resources.speech_to_text).toEqual({ requests: 1, audio_seconds: 2 });
    // 2 s at 2,500,000 micro-units an hour: 1,389.
    expect(state.balance_micro).toBe(10_000 - 1_389);
    const res = await sttFile(second.speechUrl, own.wav);
    expect(res.body.text).toBe('Kept across a restart.');
  } finally {
    await second.close();
  }
});
