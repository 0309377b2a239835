/**
 * Loaded first into an emulator under test (`node --import <this> --import tsx src/main.ts`): appends to
 * the file named by WERIFT_PROBE_FILE the URL of every module of the `werift` package the process loads,
 * so a test can tell whether the WebRTC stack was loaded at all.
 */
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const file = process.env.WERIFT_PROBE_FILE;
registerHooks({
  load(url, context, nextLoad) {
    if (file && url.includes('/node_modules/werift/')) appendFileSync(file, `${url}\n`);
    return nextLoad(url, context);
  },
});
