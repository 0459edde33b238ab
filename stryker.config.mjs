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
  // A mutant's time limit is timeoutFactor × its tests' unmutated time + timeoutMS + the runner's overhead
  // (~12 s). Each mutant that hangs costs the whole limit and a new test process: at 60 s, the hanging mutants
  // took most of a whole run's time.
  timeoutMS: 15_000,
  timeoutFactor: 3,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  // .scratch/ holds another engineer's local profiling files (gitignored), which change while a run copies the tree.
  ignorePatterns: ['dist', 'docs', 'visualizer/dist', 'reports', '.stryker-tmp', '.scratch'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
