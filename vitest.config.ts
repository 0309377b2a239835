import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two tiers. `unit`: pure rules and models called directly, no listening server (`npm run test:unit`,
 * seconds). `e2e`: every scenario over real sockets. `npm test` runs both.
 */
/** Test files whose assertions hold only when the machine keeps up with real time. */
const REAL_TIME_MEDIA = ['test/peers/livekit-room-*.test.ts'];

export default defineConfig({
  test: {
    // Two cores: each file starts its own emulator on port 0, so files run in parallel safely.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/unit/**', ...REAL_TIME_MEDIA] },
      },
      // Real-time media over WebRTC, judged by what a listener heard: after the rest, one file at a time, so no
      // other test's load stretches the audio a real client's jitter buffer receives.
      { extends: true, test: { name: 'media', include: REAL_TIME_MEDIA, fileParallelism: false, retry: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
