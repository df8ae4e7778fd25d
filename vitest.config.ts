import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/vitest-setup.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // Generous: a test waits for what it asserts, and a loaded machine (CI beside other work) can be 4× slower.
    testTimeout: 180_000,
    hookTimeout: 300_000,
    reporters: ['default'],
  },
});
