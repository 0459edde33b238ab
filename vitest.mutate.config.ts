import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

// The suites Stryker runs against each mutant of one part (MUTATE_PART, see stryker.config.mjs): the ones
// that drive that part in process. CLI and browser suites spawn processes or Chromium, which Stryker's
// per-test coverage cannot see. Property runs are kept small per mutant (PROPERTY_RUNS, see
// test/properties/arbitraries.ts).
process.env.PROPERTY_RUNS ??= '25';

/** The lifecycle's suites (machines/ and src/runtime/): everything that drives them in process. */
const LIFECYCLE = [
  'test/machines/**/*.test.ts',
  'test/runtime/**/*.test.ts',
  'test/model/**/*.test.ts',
  'test/properties/**/*.test.ts',
  'test/drivers/do.test.ts',
  'test/drivers/resolve-running.test.ts',
  'test/drivers/mock.test.ts',
  // src/runtime/create-executor.ts: the executor's in-process suite (mock and capturing drivers only).
  'test/drivers/create-executor.test.ts',
  'test/hooks/**/*.test.ts',
  // Nomad-fidelity scenarios, restore of damaged records and the task env: in process, on the mock driver.
  'test/fidelity/**/*.test.ts',
  'test/restore/corrupt-record.test.ts',
  'test/env/**/*.test.ts',
];

/**
 * The outer layers' suites, part by part: the suites that pin that part's rules. The lifecycle suites are
 * left out of them: they reach these files too, but a mutant that only they could see is a rule with no
 * test of its own, and under them each mutant costs the whole runtime's suite (most of the env's mutants
 * run at module load or in a beforeAll, where Stryker must run every test for each).
 */
const PARTS: Record<string, string[]> = {
  lifecycle: LIFECYCLE,
  env: ['test/env/**/*.test.ts', 'test/jobspec/env-names.test.ts'],
  state: ['test/state/**/*.test.ts', 'test/restore/corrupt-record.test.ts', 'test/runtime/agent-store.test.ts', 'test/cli/file-store.test.ts'],
  // The health watcher's timers and subscriptions are driven by the deployment-health scenarios.
  hooks: ['test/hooks/**/*.test.ts', 'test/fidelity/deployment-health.test.ts'],
  // The driver contract, Do/Resolve, the executor and errors (the mock driver is a part of its own with these
  // suites; raw_exec and the API's routes are parts of their own).
  drivers: [
    'test/drivers/do.test.ts',
    'test/drivers/resolve-running.test.ts',
    'test/drivers/mock.test.ts',
    'test/drivers/errors.test.ts',
    'test/drivers/executor.test.ts',
    'test/drivers/create-executor.test.ts',
    'test/properties/do-properties.test.ts',
    'test/machines/task-manager*.test.ts',
    'test/runtime/executor-contract.test.ts',
    'test/runtime/driver-names.test.ts',
    'test/drivers/driver-config-checks.test.ts',
    'test/drivers/sleep-on-clock.test.ts',
    'test/drivers/state-names-and-signals.test.ts',
    'test/drivers/error-classifiers.test.ts',
    'test/drivers/do-status-rules.test.ts',
    'test/drivers/publish-logs-rules.test.ts',
    // The mock driver's rule suites: each config option, and its run on a simulated clock.
    'test/drivers/mock-*.test.ts',
  ],
  // src/api's pure modules: their unit suites, and query-options' (bexpr and the list options, over an
  // in-process server).
  api: [
    'test/api/job-diff.test.ts',
    'test/api/job-json.test.ts',
    'test/api/job-json-fields.test.ts',
    'test/api/alloc-json-units.test.ts',
    'test/api/event-broker.test.ts',
    'test/api/list-cache.test.ts',
    'test/api/query-options.test.ts',
    'test/api/api-*-rules.test.ts',
    'test/api/alloc-metric.test.ts',
  ],
  'cli-client': ['test/cli/api-client.test.ts', 'test/cli/agent-addressing-rules.test.ts', 'test/cli/agent-request-rules.test.ts'],
  // The routes and the registry: the in-process agent suites that pin their rules (real agent processes are
  // left out: their code runs where Stryker cannot see it).
  'api-routes': [
    'test/api/blocked-evals.test.ts',
    'test/api/list-scopes.test.ts',
    'test/api/blocking-lists.test.ts',
    'test/api/store-writes.test.ts',
    'test/api/port-allocator.test.ts',
    'test/api/openapi-conformance.test.ts',
    'test/api/registry-*-rules.test.ts',
    // (nomad-parity.test.ts is left out: its raw_exec tasks' pipes aborted the next suite in the worker. They no
    // longer do (the spawner helper opens them); whether it joins is a question of the part's run time.)
    // The routes' rules over an in-process agent: the HTTP semantics of the jobs, allocations, evaluations,
    // events and ACL routes (what each changes, answers and refuses), and the suites that already drove them.
    'test/api/route-*-rules.test.ts',
    'test/api/acl.test.ts',
    'test/api/nomad-cluster.test.ts',
  ],
  // raw_exec: its suites run real processes, and the pure rules' tables (raw-exec-*-rules) kill most mutants
  // in milliseconds. All of them run in one worker thread (isolate: false below).
  'raw-exec': ['test/drivers/raw-exec*.test.ts', 'test/drivers/proc-stat.test.ts', 'test/drivers/rotating-log.test.ts'],
};
PARTS['mock-driver'] = PARTS.drivers!;
// raw_exec's sub-parts (stryker.config.mjs), each under an hour: the same suites, different files mutated.
PARTS['raw-exec-files'] = PARTS['raw-exec']!;
PARTS['raw-exec-driver'] = PARTS['raw-exec']!;
PARTS['raw-exec-launch'] = PARTS['raw-exec']!;

/** raw_exec's suites that start real processes (seconds per test); the others take milliseconds. */
const REAL_PROCESS_SUITE = /\/raw-exec(-claim-reap|-spawner|-supervisor|-task-user)?\.test\.ts$/;

/**
 * Runs the rule tables (milliseconds) before the suites of real processes. Stryker stops a mutant's run at
 * its first failing test, so a mutant a table kills never waits for a process; vitest's own order (the
 * slowest file first) would make every mutant pay for the slow suites first.
 */
class RulesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => (REAL_PROCESS_SUITE.test(f.moduleId) ? 1 : 0);
    return [...files].sort((a, b) => rank(a) - rank(b) || a.moduleId.localeCompare(b.moduleId));
  }
}
/**
 * The registry's suites, those that serve one agent for the whole file first and those that start agents per test
 * (restarts, crashes, blocked evaluations, the store's faults) last: under a mutant Stryker stops at the first
 * failure, so a mutant the quick suites kill never waits for the slow ones.
 */
const REGISTRY_ORDER = ['registry-writes', 'registry-jobs', 'registry-reads', 'registry-plan', 'registry-host', 'registry-summary', 'registry-heal', 'registry-crash', 'registry-restart', 'blocked-evals', 'store-writes'];
class QuickRegistrySuitesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = REGISTRY_ORDER.findIndex((name) => f.moduleId.endsWith(`/${name}.test.ts`) || f.moduleId.endsWith(`/${name}-rules.test.ts`));
      return i < 0 ? REGISTRY_ORDER.length : i;
    };
    return [...files].sort((a, b) => rank(a) - rank(b) || a.moduleId.localeCompare(b.moduleId));
  }
}
const part = process.env.MUTATE_PART || 'lifecycle';

/**
 * The suites of a part's slices (MUTATE_SUB, see stryker.config.mjs): only the rule suites of the slice's files.
 * The api-routes part's whole set starts an agent per test (190 tests, 3 minutes here), and a route's survivor
 * or timeout costs every test that covers it: most of them, for the registration and the blocking query.
 */
const SLICE_SUITES: Record<string, Record<string, string[]>> = {
  'api-routes': {
    jobs: ['test/api/route-jobs-rules.test.ts', 'test/api/route-jobs-input-rules.test.ts', 'test/api/route-allocs-evals-events-rules.test.ts', 'test/api/route-unknown-job-rules.test.ts'],
    core: ['test/api/route-jobs-rules.test.ts', 'test/api/route-allocs-evals-events-rules.test.ts', 'test/api/route-acl-rules.test.ts', 'test/api/acl.test.ts', 'test/api/route-reads-input-rules.test.ts', 'test/api/route-unknown-job-rules.test.ts', 'test/api/route-events-index-order-rules.test.ts'],
    client: ['test/api/route-client-rules.test.ts', 'test/api/route-blocking-query-rules.test.ts', 'test/api/route-client-input-rules.test.ts'],
    // The registry's halves: its own rule suites and the store-durability ones (commit, heal after a restart in
    // process). The route suites that write through it (jobs, allocations, nomad-cluster) reach the same code but
    // would cost every surviving mutant a minute more here; the registry's rules are pinned by its own suites.
    'registry-jobs': ['test/api/registry-*-rules.test.ts', 'test/api/store-writes.test.ts'],
    // Blocked evaluations processed again and placements that do not fit are blocked-evals' rules.
    'registry-reads': ['test/api/registry-*-rules.test.ts', 'test/api/store-writes.test.ts', 'test/api/blocked-evals.test.ts'],
    'registry-writes': ['test/api/registry-*-rules.test.ts', 'test/api/store-writes.test.ts', 'test/api/blocked-evals.test.ts', 'test/api/route-events-index-order-rules.test.ts'],
    // The -input-rules suites serve inside each test: what runs when the API starts (the routes' schemas, the
    // publishers) counts as covered only by a test that starts it (docs/testing.md, "Code that runs in beforeAll").
    'deploy-plan': ['test/api/route-deployments-rules.test.ts', 'test/api/route-job-plan-rules.test.ts', 'test/api/route-deploy-plan-input-rules.test.ts', 'test/api/route-deployments-events-rules.test.ts', 'test/api/route-deployments-reads-rules.test.ts', 'test/api/nomad-cluster.test.ts', 'test/api/list-scopes.test.ts', 'test/api/route-unknown-job-rules.test.ts', 'test/api/route-events-index-order-rules.test.ts'],
    'vars-services': ['test/api/route-variables-rules.test.ts', 'test/api/route-services-rules.test.ts', 'test/api/route-services-input-rules.test.ts', 'test/api/variables.test.ts', 'test/api/route-unknown-job-rules.test.ts', 'test/api/route-events-index-order-rules.test.ts'],
    // (alloc-fs.test.ts runs a raw_exec task, whose pipes abort the next suite in the worker: left out.)
    // route-small-registered-rules serves inside each test: the routes' registrations (handlers, schemas) run there.
    'small-routes': ['test/api/route-alloc-fs-rules.test.ts', 'test/api/route-cluster-node-rules.test.ts', 'test/api/route-small-registered-rules.test.ts', 'test/api/nomad-cluster.test.ts', 'test/api/metrics.test.ts'],
    // registry-crash-rules: the runners an agent finds at its start (serveAgentApi's `found`) adopted live.
    server: ['test/api/route-server-rules.test.ts', 'test/api/acl.test.ts', 'test/api/registry-crash-rules.test.ts', 'test/api/route-events-index-order-rules.test.ts'],
    // Its writers' order rules: applies and commits in index order, the events held, a failed commit released.
    'ordered-commit': ['test/api/route-apply-order-rules.test.ts', 'test/api/route-events-index-order-rules.test.ts', 'test/api/route-variables-rules.test.ts', 'test/api/route-acl-rules.test.ts', 'test/api/acl.test.ts'],
  },
};
const slice = process.env.MUTATE_SUB;
// The route rule suites give each test a minute (an agent under load); under mutation a hung request fails sooner.
process.env.MUTATE_TEST_TIMEOUT_MS ??= '15000';

export default defineConfig({
  test: {
    include: (slice && SLICE_SUITES[part]?.[slice]) || (PARTS[part] ?? []),
    // Real processes and agents (raw_exec) only time out under mutation; they do not drive the machines' logic.
    exclude: ['test/properties/broken-variants.test.ts', 'test/runtime/real-processes.test.ts', 'test/runtime/agent.test.ts'],
    // Unmutated, the slowest test here takes about a second. Under a mutant, a test that waits forever (a
    // restart loop at one instant of the simulated clock) is a detected mutant: fail it after 15 s rather
    // than wait for Stryker's own limit, which also restarts the test process.
    testTimeout: 15_000,
    hookTimeout: 15_000,
    // raw_exec's suites share one worker thread (Stryker forces threads; vitest gives each file a new one
    // unless isolate is off), so the driver is imported and its spawner helper started once per run. (Isolate
    // was first turned off because a torn-down worker aborted the process: the output pipes were opened with
    // fs.openSync then, see docs/testing.md; the spawner helper opens them now.)
    ...(part.startsWith('raw-exec') ? { isolate: false, sequence: { sequencer: RulesFirst } } : {}),
    // The registry's slices run 11 suites that each import the whole agent: in a fresh worker per file that import
    // took most of a mutant's time (the whole set: 146 s with, 65 s without, at a load of 20 on 2 cores). Their
    // suites share nothing at module level that one leaves for the next (each serves its own agents on its own dirs).
    ...(slice?.startsWith('registry-') ? { isolate: false, sequence: { sequencer: QuickRegistrySuitesFirst } } : {}),
  },
});
