/**
 * Loaded into the emulator under measure (`node --import bench/loop-probe.mjs dist/main.js`) by
 * bench/persistence.ts: the longest stretch of the main thread's own CPU time between two ticks of a
 * 1 ms timer, i.e. the longest the event loop was kept busy, counted in CPU time so that a loaded
 * machine (the process waiting for a core) does not lengthen it. On SIGUSR2 it writes that figure (ms)
 * to the file named by LOOP_PROBE_FILE and starts again from zero.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.LOOP_PROBE_FILE;
const cpuMs = () => {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
};
let last = cpuMs();
let longest = 0;
setInterval(() => {
  const now = cpuMs();
  longest = Math.max(longest, now - last);
  last = now;
}, 1).unref();
process.on('SIGUSR2', () => {
  const now = cpuMs();
  if (file) writeFileSync(file, String(Math.max(longest, now - last)));
  longest = 0;
  last = now;
});
