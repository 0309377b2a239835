import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two tiers. `unit`: pure rules and models called directly, no listening server (`npm run test:unit`,
 * seconds). `e2e`: every scenario over real sockets. `npm test` runs both.
 */
export default defineConfig({
  test: {
    // Two cores: each file starts its own emulator on port 0, so files run in parallel safely.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/unit/**'] } },
    ],
  },
});
