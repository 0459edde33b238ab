/**
 * createTaskRunner's public surface (CONTRACT.md): the defaults a standalone task runs with (its alloc id,
 * its directories, its job type), the rxjs views of its TaskState, when `done` settles and what `stop` does.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTaskRunner, type TaskRunnerOptions } from '../../src/runtime/create-task-runner.ts';
import type { Controller, Driver, DriverContext } from '../../src/drivers/controller.ts';
import type { AllocSpec, TaskEvent, TaskSpec, TaskState } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { StubController } from '../../src/testing/stub-controller.ts';
import { untilAborted } from '../../src/testing/hook-recorder.ts';

/** A driver of stub controllers that remembers the context each controller was built with. */
/** A workload that runs until its wait is aborted. */
const runsUntilStopped = () => new StubController({ wait: async (signal) => untilAborted(signal).then(() => ({ exitCode: 0, signal: 0 })) });

function capturingDriver(make: () => StubController = runsUntilStopped) {
  const contexts: DriverContext[] = [];
  const made: StubController[] = [];
  const driver: Driver = {
    name: 'stub',
    controller: (_task, ctx): Controller => {
      contexts.push(ctx);
      const c = make();
      made.push(c);
      return c;
    },
  };
  return { driver, contexts, made };
}

const task: TaskSpec = { name: 'web', driver: 'stub', config: {} };

function build(opts: TaskRunnerOptions = {}, make?: () => StubController) {
  const clock = new SimulatedClock(0);
  const d = capturingDriver(make);
  const runner = createTaskRunner(task, { clock, drivers: { stub: d.driver }, ...opts });
  return { clock, runner, ...d };
}

function run(opts: TaskRunnerOptions = {}, make?: () => StubController) {
  const built = build(opts, make);
  built.runner.start();
  return built;
}

/** How `done` has settled so far: without waiting on it, so a test fails instead of hanging. */
function outcomeOf(done: Promise<TaskState>) {
  const outcome: { resolved?: TaskState; rejected?: unknown } = {};
  done.then((s) => (outcome.resolved = s), (e) => (outcome.rejected = e));
  return outcome;
}

describe('createTaskRunner: a standalone task (no allocation around it)', () => {
  it('runs under the alloc id standalone-<task>, which its driver and its env see', async () => {
    const { clock, contexts } = run();
    await clock.advance(1);
    expect(contexts[0]!.allocId).toBe('standalone-web');
    expect(contexts[0]!.env.NOMAD_ALLOC_ID).toBe('standalone-web');
    expect(contexts[0]!.env.NOMAD_TASK_NAME).toBe('web');
  });

  it('runs under the alloc id it is given', async () => {
    const { clock, contexts } = run({ allocId: 'a-17' });
    await clock.advance(1);
    expect(contexts[0]!.allocId).toBe('a-17');
    expect(contexts[0]!.env.NOMAD_ALLOC_ID).toBe('a-17');
  });

  it('keeps its alloc dir under the OS temp dir, named after its alloc id, with the task dir inside it', async () => {
    const { clock, contexts } = run();
    await clock.advance(1);
    expect(contexts[0]!.allocDir).toBe(join(tmpdir(), 'allocrun-standalone-web'));
    expect(contexts[0]!.taskDir).toBe(join(tmpdir(), 'allocrun-standalone-web', 'web'));
  });

  it('puts its task dir inside the alloc dir it is given', async () => {
    const { clock, contexts } = run({ allocDir: '/srv/allocs/x1' });
    await clock.advance(1);
    expect(contexts[0]!.allocDir).toBe('/srv/allocs/x1');
    expect(contexts[0]!.taskDir).toBe(join('/srv/allocs/x1', 'web'));
  });

  it("is a service job unless told otherwise: a clean exit is restarted (Nomad's service restart policy)", async () => {
    let exits = 0;
    const { clock, runner, made } = run({}, () => new StubController({ wait: async (signal) => (++exits === 1 ? { exitCode: 0, signal: 0 } : untilAborted(signal).then(() => ({ exitCode: 0, signal: 0 }))) }));
    expect(runner.actor.getSnapshot().context.settings.jobType).toBe('service');
    await clock.advanceUntil(() => made.length === 2);
    expect(runner.getState().events.map((e) => e.type)).toEqual(['Received', 'Task Setup', 'Started', 'Terminated', 'Restarting', 'Started']);
  });
});

describe('createTaskRunner: views of the TaskState', () => {
  it('events$ emits every task event once, in the order they were appended', async () => {
    const { clock, runner } = build({ jobType: 'batch' }, () => new StubController());
    const seen: TaskEvent[] = [];
    runner.events$.subscribe((e) => seen.push(e));
    runner.start();
    await clock.advance(1);
    expect(seen.map((e) => e.type)).toEqual(['Received', 'Task Setup', 'Started', 'Terminated']);
    expect(seen).toEqual(runner.getState().events);
  });

  it('state$ gives the current TaskState first, then each new one, never the same one twice in a row', async () => {
    // A prestart hook's answer changes the runner's snapshot but not its TaskState: nothing to emit then.
    const { clock, runner } = run({ jobType: 'batch', hooks: [{ name: 'setup', prestart: async () => undefined }] }, () => new StubController());
    const seen: TaskState[] = [];
    runner.state$.subscribe((s) => seen.push(s));
    await clock.advance(1);
    expect(runner.getState().state).toBe('dead');
    expect(seen.length).toBeGreaterThan(2);
    expect(seen[0]!.events.map((e) => e.type)).toEqual(['Received', 'Task Setup']);
    expect(seen.at(-1)).toBe(runner.getState());
    for (let i = 1; i < seen.length; i++) expect(seen[i]).not.toBe(seen[i - 1]);
    expect(seen.map((s) => s.state)).toContain('running');
  });
});

describe('createTaskRunner: done and stop', () => {
  it('done resolves when the runner detaches on SHUTDOWN, the workload left running', async () => {
    const { clock, runner, made } = run();
    await clock.advance(1);
    const done = outcomeOf(runner.done);
    runner.send({ type: 'SHUTDOWN' });
    await clock.advance(1);
    expect(done.resolved?.state).toBe('running');
    expect(made[0]!.callCount('shutdown') + made[0]!.callCount('terminate')).toBe(0);
  });

  it("done rejects with the error that stopped the runner's actor", async () => {
    const { clock, runner } = run();
    await clock.advance(1);
    // An UPDATE without a task list is not an allocation: the actor fails on it.
    const done = outcomeOf(runner.done);
    runner.send({ type: 'UPDATE', alloc: {} as AllocSpec });
    await clock.advance(1);
    expect(done.rejected).toBeInstanceOf(Error);
    expect((done.rejected as Error).message).toContain("Unable to evaluate guard 'taskRemoved'");
  });

  it('stop stops the actor: a workload that exits afterwards is not restarted or recorded', async () => {
    let exit!: () => void;
    const { clock, runner, made } = run({}, () => new StubController({ wait: () => new Promise((r) => (exit = () => r({ exitCode: 1, signal: 0 }))) }));
    await clock.advance(1);
    runner.stop();
    expect(runner.actor.getSnapshot().status).toBe('stopped');
    exit();
    await clock.advance(60_000);
    expect(made).toHaveLength(1);
    expect(runner.getState().events.map((e) => e.type)).toEqual(['Received', 'Task Setup', 'Started']);
  });
});
