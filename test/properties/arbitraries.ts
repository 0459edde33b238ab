/**
 * fast-check generators for property runs: allocations of one to three mock tasks in any lifecycle, their
 * scripted hooks, and storms of commands and clock advances. Shrinking works on every part, so a failure
 * comes back as a small allocation with a short command list.
 */
import fc from 'fast-check';
import type { AllocSpec, RestartPolicy, TaskLifecycle, TaskSpec } from '../../machines/model.ts';
import type { Command, PrestartOutcome, TaskPlan, WorldPlan } from './world.ts';
import { parseDuration } from '../../src/jobspec/duration.ts';

/** Runs per property in `npm test`; `PROPERTY_RUNS=10000 npx vitest run test/properties` for a long run. */
export const PROPERTY_RUNS = Number(process.env.PROPERTY_RUNS ?? 60);

/** A ceiling for one property test (not a timing claim): long runs on a loaded machine take minutes. */
export const PROPERTY_TIMEOUT = 60_000 + PROPERTY_RUNS * 2_000;

/** The seed of every property; `PROPERTY_SEED` replays another one (fast-check prints it on failure). */
export const PROPERTY_SEED = Number(process.env.PROPERTY_SEED ?? 20261123);

const SEC = 1_000;

const lifecycleArb: fc.Arbitrary<TaskLifecycle | undefined> = fc.constantFrom(
  undefined,
  undefined,
  { hook: 'prestart' as const },
  { hook: 'prestart' as const, sidecar: true },
  { hook: 'poststart' as const },
  { hook: 'poststart' as const, sidecar: true },
  { hook: 'poststop' as const },
);

const restartArb: fc.Arbitrary<RestartPolicy> = fc.record({
  attempts: fc.integer({ min: 0, max: 2 }),
  interval: fc.constantFrom(60 * SEC, 3_600 * SEC),
  delay: fc.constantFrom(1 * SEC, 5 * SEC),
  mode: fc.constantFrom('fail' as const, 'delay' as const),
});

/** Nomad's mock driver config; a start error is rare so that most runs get past the start. */
const mockConfigArb = fc
  .record({
    run_for: fc.constantFrom('1s', '5s', '30s', '10m', '10h'),
    exit_code: fc.constantFrom(0, 0, 1),
    kill_after: fc.constantFrom('0s', '2s', '20s'),
    start_error: fc.oneof({ weight: 7, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant('port busy') }),
    start_error_recoverable: fc.boolean(),
  })
  .map((c) => {
    const { start_error, start_error_recoverable, ...rest } = c;
    return start_error ? { ...rest, start_error, start_error_recoverable } : rest;
  });

const outcomeArb: fc.Arbitrary<PrestartOutcome> = fc.constantFrom('ok', 'ok', 'ok', 'done', 'fail', 'fatal', 'hang');

interface TaskDraft {
  lifecycle?: TaskLifecycle;
  leader: boolean;
  config: Record<string, unknown>;
  restart: RestartPolicy;
  killTimeout: number;
  shutdownDelay: number;
  prestart: PrestartOutcome[];
  poststartHangs: boolean;
  updateHangs: boolean;
}

const taskDraftArb: fc.Arbitrary<TaskDraft> = fc.record({
  lifecycle: lifecycleArb,
  leader: fc.boolean(),
  config: mockConfigArb,
  restart: restartArb,
  killTimeout: fc.constantFrom(1 * SEC, 5 * SEC, 10 * SEC),
  shutdownDelay: fc.constantFrom(0, 0, 2 * SEC),
  prestart: fc.array(outcomeArb, { maxLength: 3 }),
  poststartHangs: fc.boolean(),
  updateHangs: fc.boolean(),
});

/**
 * A task from a draft. Task 0 is always a main task. A poststop task must finish for the alloc to finish, so
 * it is short, its hooks never hang and it never restarts (a delay-mode poststop task that keeps failing runs forever, in
 * Nomad as here). Only one main task may lead.
 */
function taskOf(d: TaskDraft, i: number, leaderTaken: boolean): TaskPlan {
  const lifecycle = i === 0 ? undefined : d.lifecycle;
  const poststop = lifecycle?.hook === 'poststop';
  const name = `t${i}`;
  const spec: TaskSpec = {
    name,
    driver: 'mock',
    // A poststop task runs to its end after the others (an alloc kill does not stop it): keep it short.
    config: poststop ? { ...d.config, run_for: '5s' } : d.config,
    env: { [`T${i}_OWN`]: `value-of-${name}` },
    restart: poststop ? { ...d.restart, attempts: 0, mode: 'fail' } : d.restart,
    killTimeout: d.killTimeout,
    shutdownDelay: d.shutdownDelay,
    ...(lifecycle ? { lifecycle } : {}),
    ...(d.leader && !lifecycle && !leaderTaken ? { leader: true } : {}),
  };
  return {
    spec,
    prestart: poststop ? d.prestart.map((o) => (o === 'hang' ? 'ok' : o)) : d.prestart,
    poststartHangs: !poststop && d.poststartHangs,
    updateHangs: !poststop && d.updateHangs,
  };
}

function commandArb(tasks: number): fc.Arbitrary<Command> {
  const taskName = fc.option(fc.integer({ min: 0, max: tasks - 1 }).map((i) => `t${i}`), { nil: undefined });
  return fc.oneof(
    { weight: 8, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(1, 500, 1_000, 2_500, 6_000, 20_000, 120_000) }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'kill' as const }) },
    {
      weight: 2,
      arbitrary: fc.record(
        { kind: fc.constant('restart' as const), task: taskName, all: fc.boolean(), failure: fc.boolean() },
        { requiredKeys: ['kind'] },
      ),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('signal' as const), task: taskName }, { requiredKeys: ['kind'] }) },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('update' as const), stale: fc.boolean(), stop: fc.constantFrom(false, false, false, true) }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'shutdown' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'destroy' as const }) },
  );
}

/** A whole run: an allocation, its hooks' scripts, and the commands. */
export const worldPlanArb: fc.Arbitrary<WorldPlan> = fc
  .record({
    type: fc.constantFrom('service' as const, 'batch' as const),
    shutdownDelay: fc.constantFrom(0, 0, 1 * SEC),
    drafts: fc.array(taskDraftArb, { minLength: 1, maxLength: 3 }),
    prerunFails: fc.constantFrom(false, false, false, false, true),
  })
  .chain(({ type, shutdownDelay, drafts, prerunFails }) => {
    const tasks: TaskPlan[] = [];
    for (const [i, d] of drafts.entries()) tasks.push(taskOf(d, i, tasks.some((t) => t.spec.leader)));
    const alloc: AllocSpec = {
      id: 'prop-alloc',
      job: 'prop',
      group: 'g',
      type,
      shutdownDelay,
      modifyIndex: 1,
      tasks: tasks.map((t) => t.spec),
    };
    return fc.array(commandArb(tasks.length), { maxLength: 24 }).map((commands): WorldPlan => ({ alloc, tasks, prerunFails, commands }));
  });

/** A plan and a step at which to persist and restore (0 = before the first command). */
export const restorePlanArb = worldPlanArb.map(restorable).chain((plan) =>
  fc.integer({ min: 0, max: plan.commands.length }).map((restoreAt) => ({ plan, restoreAt })),
);

/**
 * A plan whose restored run can be compared with its straight run:
 * - a restore re-runs a running task's prestart hooks that are not Done (Nomad's RestoreState), so a probe
 *   hook answers a repeated call as it answered the first: once it has succeeded it keeps succeeding;
 * - no workload ends at the very instant a runner timer fires (run_for is off the round seconds of the
 *   delays): a tie at one instant of the simulated clock is decided by timer order, which a restore changes
 *   by setting its timers again, so either order is right and the outcomes could differ for no fault.
 */
function restorable(plan: WorldPlan): WorldPlan {
  // Distinct odd offsets, so that no two of the durations (or their small sums) meet at one instant.
  const off = (ms: number | undefined, by: number) => (ms ? ms + by : ms);
  const offTheSecond = (spec: TaskSpec): TaskSpec => {
    const runFor = spec.config['run_for'];
    return {
      ...spec,
      ...(typeof runFor === 'string' && { config: { ...spec.config, run_for: `${parseDuration(runFor) + 7}ms` } }),
      ...(spec.killTimeout !== undefined && { killTimeout: spec.killTimeout + 13 }),
      ...(spec.shutdownDelay !== undefined && { shutdownDelay: off(spec.shutdownDelay, 29) }),
      ...(spec.restart && { restart: { ...spec.restart, delay: spec.restart.delay + 37 } }),
    };
  };
  return {
    ...plan,
    alloc: { ...plan.alloc, shutdownDelay: off(plan.alloc.shutdownDelay, 3), tasks: plan.alloc.tasks.map(offTheSecond) },
    tasks: plan.tasks.map((t) => {
      const first = t.prestart.findIndex((o) => o === 'ok' || o === 'done');
      const prestart = first < 0 ? t.prestart : t.prestart.map((o, i) => (i <= first ? o : o === 'done' ? 'done' : 'ok'));
      return { ...t, spec: offTheSecond(t.spec), prestart };
    }),
  };
}
