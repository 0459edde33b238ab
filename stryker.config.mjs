// Mutation testing of the lifecycle code (`npm run mutate`; not in CI): Stryker mutates machines/ and
// src/runtime/ and runs, for each mutant, the in-process suites that cover it (see vitest.mutate.config.ts).
// Incremental: results are kept in reports/stryker-incremental.json, so a rerun only tests what changed.
// CPU-heavy: run it with `nice -n 19` on a shared machine; one test process at a time. To measure part of it,
// pass files: `npm run mutate -- --mutate machines/coordinator.ts`.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: true },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: ['machines/**/*.ts', 'src/runtime/**/*.ts', '!machines/index.ts', '!**/*-types.ts'],
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  concurrency: 1,
  timeoutMS: 60_000,
  timeoutFactor: 3,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  ignorePatterns: ['dist', 'docs', 'visualizer/dist', 'reports', '.stryker-tmp'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
