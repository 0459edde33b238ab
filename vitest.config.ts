import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// CLI tests spawn the real binary and browser tests drive Chromium: on a loaded 2-core machine they need
// more than vitest's 5 s default. These are ceilings for hung tests, not timing assertions.
export default defineConfig({
  // Tests written for users of the package (`allocrun replay --to-test`) import its testing entry: here, the source.
  resolve: { alias: { 'allocrun/testing': fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    // At least two files at once. Vitest's default is one fewer than the cores, so one at a time on a 2-core
    // machine, where most suites wait on real processes, agents and a browser rather than compute: two at
    // once ran the whole suite in 506 s against 591 s, measured back to back on the same loaded machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
