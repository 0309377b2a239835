import { control } from '../../helpers/emulator.js';
import { resourcesOf, speechApi } from '../beyond.js';

/** Files of a USTAR archive: name → bytes. */
export function untar(tar: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (let at = 0; at + 512 <= tar.length;) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const field = (from: number, len: number) => h.toString('utf8', from, from + len).replace(/\0.*$/s, '');
    const name = [field(345, 155), field(0, 100)].filter(Boolean).join('/');
    const size = parseInt(field(124, 12).trim(), 8);
    out.set(name, tar.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** The state-view record of a task once its audio is made or it failed (real work; the clock may stay frozen). */
export async function madeTask(base: string, taskId: number): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const items = await resourcesOf(base, 'speech-async', (ts) => ts.some((t) => t.task_id === taskId));
    const t = items.find((x) => x.task_id === taskId);
    if (t?.audio_ready || t?.status === 'Failed') return t;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the task never finished its audio');
}

/**
 * The files of a finished task's tar: waits for its audio, moves the emulator clock to its ready
 * time and downloads the output (`api` speaks for the task's account).
 */
export async function taskFiles(api: ReturnType<typeof speechApi>, taskId: number, fileId: number): Promise<Map<string, Buffer>> {
  const task = await madeTask(api.base, taskId);
  const ctl = control(api.base);
  const now = (await ctl.clock()).body.now_ms as number;
  if (task.ready_at_ms > now) await ctl.advance(task.ready_at_ms - now);
  const content = await api.getBytes(`/v1/files/retrieve_content?file_id=${fileId}`);
  // An answer that is not the archive (an error in JSON) is shown as it is, not as an empty archive.
  if (content.status !== 200 || content.body !== undefined)
    throw new Error(`task ${JSON.stringify(task)}: retrieve_content answered ${content.status} ${content.bytes.toString('utf8', 0, 300)}`);
  return untar(content.bytes);
}
