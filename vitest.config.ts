import { defineConfig } from 'vitest/config';

// CLI tests spawn the real binary and browser tests drive Chromium: on a loaded 2-core machine they need
// more than vitest's 5 s default. These are ceilings for hung tests, not timing assertions.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
