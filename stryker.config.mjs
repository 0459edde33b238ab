// Mutation testing (`npm run mutate`; not in CI): Stryker mutates one part of the code and runs, for each
// mutant, the in-process suites that cover it (see vitest.mutate.config.ts). The default part is the
// lifecycle (machines/ and src/runtime/); MUTATE_PART names another (`npm run mutate:env`, ...), each
// with its own incremental file and report, so the parts can be measured apart and re-run incrementally.
// Incremental: results are kept in reports/stryker-incremental[-part].json, so a rerun only tests what changed.
// CPU-heavy: run it with `nice -n 19` on a shared machine; one test process at a time. To measure part of it,
// pass files: `npm run mutate -- --mutate machines/coordinator.ts`. docs/testing.md has the measurements.

/** Each part's files: sized so that one part finishes in under an hour on a 2-core machine. */
const PARTS = {
  lifecycle: ['machines/**/*.ts', 'src/runtime/**/*.ts', '!machines/index.ts', '!**/*-types.ts'],
  env: ['src/env/**/*.ts'],
  state: ['src/state/**/*.ts'],
  'cli-client': ['src/cli/api-client.ts'],
  hooks: ['src/hooks/**/*.ts'],
  drivers: ['src/drivers/*.ts'],
  // The mock driver is a test tool; the lifecycle suites drive most of it, these suites only a part.
  'mock-driver': ['src/drivers/mock/**/*.ts'],
  // The API's pure modules with in-process suites of their own (the routes start an agent; the registry and
  // the canonical job form are pinned through it).
  api: ['src/api/job-diff.ts', 'src/api/job-json.ts', 'src/api/alloc-json.ts', 'src/api/event-broker.ts', 'src/api/list-cache.ts', 'src/api/query-options.ts', 'src/api/bexpr.ts', 'src/api/apply-order.ts', 'src/api/alloc-metric.ts'],
  // The API's routes and the registry they write through (issue 32), pinned by in-process agents. Its suites
  // start an agent per test, so a whole run takes hours here: measure it a few files (or line ranges) at a
  // time with --mutate (docs/testing.md says which were measured).
  'api-routes': ['src/api/routes/**/*.ts', 'src/api/context.ts', 'src/api/job-registry.ts', 'src/api/serve-agent-api.ts', 'src/api/server.ts', 'src/api/blocked-evals.ts', 'src/api/node-capacity.ts', 'src/api/ordered-commit.ts'],
  // raw_exec (issue 32): its suites run real processes; the driver's code runs in the test process, so per-test
  // coverage sees it (the supervisor's sh and the spawner helper run in children and are not measured).
  'raw-exec': ['src/drivers/raw-exec/**/*.ts'],
  // raw_exec in three sub-parts that each finish in under an hour here (the whole part takes hours): the files
  // and parsers (claim, status, /proc, config, logs, stats), mostly pinned by rule tables; the driver and the
  // task user; the launch, the workloads and the spawner. All three run every raw_exec suite.
  'raw-exec-files': ['src/drivers/raw-exec/{config,errors,process,proc-stat,supervisor,rotating-log,log-reader,stats}.ts'],
  'raw-exec-driver': ['src/drivers/raw-exec/{raw-exec-driver,task-user}.ts'],
  'raw-exec-launch': ['src/drivers/raw-exec/{launch,workload,backstop,spawner}.ts'],
};
/**
 * Slices of a part too slow to run whole here (MUTATE_SUB=<slice>, e.g. `MUTATE_SUB=client npm run mutate:api-routes`):
 * each has its own incremental file, report and temp dir, so slices of one part can run side by side.
 */
const SLICES = {
  'api-routes': {
    // The routes users hit most: jobs (register, update, stop), then allocations, evaluations, the event stream, ACL tokens.
    jobs: ['src/api/routes/jobs.ts'],
    core: ['src/api/routes/allocations.ts', 'src/api/routes/evaluations.ts', 'src/api/routes/events.ts', 'src/api/routes/acl.ts'],
    // An allocation's restart, signal, logs and stats, and the blocking query every read runs.
    client: ['src/api/routes/client.ts', 'src/api/context.ts'],
    // The registry by line range, each under an hour here: register, deregister, stop, load, adopt, heal,
    // evaluate, plan and the job reads; the summary, the job's status, the allocation and evaluation reads and
    // the blocked evaluations' retries; the write path (evaluation, reconcile, placement, stop, the commit and
    // its apply, the runners' start and watch, the events).
    // A range holds only the mutants that lie whole inside it, so each boundary sits between two methods (the job's
    // list stub, 533-543, straddled the old 536/537 line and was in neither slice, and `storedOf` ends on the file's last line).
    'registry-jobs': ['src/api/job-registry.ts:1-542'],
    'registry-reads': ['src/api/job-registry.ts:543-685'],
    'registry-writes': ['src/api/job-registry.ts:686-962'],
    // Deployments (read from the allocations' health), and job plan and evaluate.
    'deploy-plan': ['src/api/routes/deployments.ts', 'src/api/routes/job-plan.ts'],
    // Variables and the service catalog's routes.
    'vars-services': ['src/api/routes/variables.ts', 'src/api/routes/services.ts'],
    // The allocation filesystem and the small routes clients probe.
    'small-routes': ['src/api/routes/{alloc-fs,cluster,nodes,agent,operator,metrics,alloc-checks}.ts'],
    // How the API is built (the body parser, the error handler) and where it listens.
    server: ['src/api/server.ts', 'src/api/serve-agent-api.ts'],
    // The one commit path of the writes that commit before they apply (registry, deployment fail, tokens, variables).
    'ordered-commit': ['src/api/ordered-commit.ts'],
  },
  'raw-exec-driver': {
    // What runs when the modules load or once per process (the tools' search paths, their lookups, the
    // driver's defaults, the task user's constants): a `--force` run of these lines measures them against
    // every raw_exec suite, the mutant active from the start.
    'load-time': [
      'src/drivers/raw-exec/raw-exec-driver.ts:39-39',
      'src/drivers/raw-exec/raw-exec-driver.ts:95-95',
      'src/drivers/raw-exec/raw-exec-driver.ts:484-507',
      'src/drivers/raw-exec/task-user.ts:40-40',
      'src/drivers/raw-exec/task-user.ts:83-96',
      'src/drivers/raw-exec/task-user.ts:132-132',
      'src/drivers/raw-exec/task-user.ts:154-154',
    ],
  },
};
const part = process.env.MUTATE_PART || 'lifecycle';
if (!(part in PARTS)) throw new Error(`MUTATE_PART=${part}: not one of ${Object.keys(PARTS).join(', ')}`);
const slice = process.env.MUTATE_SUB || '';
if (slice && !(slice in (SLICES[part] ?? {}))) throw new Error(`MUTATE_SUB=${slice}: not a slice of ${part} (${Object.keys(SLICES[part] ?? {}).join(', ') || 'it has none'})`);
// The lifecycle part keeps the file names it had before there were parts, so its incremental results stay.
const suffix = (part === 'lifecycle' ? '' : `-${part}`) + (slice && `-${slice}`);
const reportDir = (part === 'lifecycle' ? 'reports/mutation' : `reports/mutation/${part}`) + (slice && `/${slice}`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: true },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: slice ? SLICES[part][slice] : PARTS[part],
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: `reports/stryker-incremental${suffix}.json`,
  concurrency: 1,
  // A mutant's time limit is timeoutFactor × its tests' unmutated time + timeoutMS + the runner's overhead
  // (~12 s). Each mutant that hangs costs the whole limit and a new test process: at 60 s, the hanging mutants
  // took most of a whole run's time.
  timeoutMS: 15_000,
  timeoutFactor: 3,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `${reportDir}/index.html` },
  jsonReporter: { fileName: `${reportDir}/mutation.json` },
  // `--reporters ...,event-recorder` writes each mutant's result here as it is known, so a long run's survivors can
  // be worked on before it ends.
  eventReporter: { baseDir: `${reportDir}/events` },
  thresholds: { high: 90, low: 80, break: null },
  // .scratch/ holds another engineer's local profiling files (gitignored), which change while a run copies the tree.
  ignorePatterns: ['dist', 'docs', 'visualizer/dist', 'reports', '.stryker-tmp*', '.scratch'],
  // One temp dir per part, so two parts never share one.
  tempDirName: `.stryker-tmp${suffix}`,
  cleanTempDir: true,
};
