/**
 * Real runs recorded for the replay tests: raw_exec processes on the wall clock, recorded the way
 * `run --record` records them (recordInspection, its machineClock handed to the runner).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { firstValueFrom, filter, timeout } from 'rxjs';
import { assign, type AnyEventObject, type AnyStateMachine, type EventObject } from 'xstate';
import { clockNow } from '../../machines/clock.ts';
import { decideRestart, mulberry32, type RestartTrigger } from '../../machines/restart-tracker.ts';
import { taskRunnerMachine } from '../../machines/task-runner.ts';
import type { TaskRunnerContext } from '../../machines/task-runner-types.ts';
import type { TaskHook } from '../../src/hooks/types.ts';
import { recordInspection } from '../../src/inspect/record.ts';
import { reviveReplayValue } from '../../src/inspect/replay-format.ts';
import type { AllocSpec, AllocState, TaskSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';

/** Generous: real processes on a loaded machine. */
const WAIT_MS = 60_000;

export const sh = (name: string, script: string, extra: Partial<TaskSpec> = {}): TaskSpec => ({
  name,
  driver: 'raw_exec',
  config: { command: '/bin/sh', args: ['-c', script] },
  killSignal: 'SIGTERM',
  killTimeout: 5_000,
  ...extra,
});

/** Resolves once the runner's state satisfies `cond`. */
export function until(runner: AllocRunner, cond: (s: AllocState) => boolean): Promise<AllocState> {
  return firstValueFrom(runner.state$.pipe(filter(cond), timeout(WAIT_MS)));
}

/** Runs `spec` for real, recorded to `<dir>/<name>.jsonl`, driven by `drive` until it resolves; returns the file. */
export async function recordRun(
  dir: string,
  name: string,
  spec: AllocSpec,
  drive: (runner: AllocRunner) => Promise<unknown>,
  taskHooks: TaskHook[] = [],
): Promise<string> {
  const file = join(dir, `${name}.jsonl`);
  const rec = recordInspection(file);
  const runner = createAllocRunner(spec, { dataDir: join(dir, 'data'), seed: 7, taskHooks, inspect: rec.inspect, machineClock: rec.machineClock });
  try {
    runner.start();
    await drive(runner);
  } finally {
    runner.stop();
    await rec.close();
  }
  return file;
}

/** A recording's lines, parsed as `replay --check` parses them. */
export async function linesOf(file: string): Promise<unknown[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l, reviveReplayValue) as unknown);
}

/** A prestart hook that fails its first call (a recoverable error: the restart policy decides) and then succeeds. */
export function flakyHook(): TaskHook {
  let calls = 0;
  return {
    name: 'flaky',
    async prestart() {
      if (++calls === 1) throw Object.assign(new Error('the config service is not up yet'), { recoverable: true });
    },
  };
}

/** A batch task failing every run, restarted `attempts` times (a short delay) before the alloc fails; its prestart hook fails once. */
export function failingSpec(id: string): AllocSpec {
  return {
    id, job: 'flaky-job', group: 'work', type: 'batch',
    tasks: [sh('main', 'echo trying; exit 3', { restart: { attempts: 3, interval: 3_600_000, delay: 50, mode: 'fail' } })],
  };
}

/** Records a run of `failingSpec`: a failed hook, restarts and a failed alloc. */
export function recordFailingRun(dir: string, name = 'failing', id = 'fail1'): Promise<string> {
  return recordRun(dir, name, failingSpec(id), (r) => until(r, (s) => s.clientStatus === 'failed'), [flakyHook()]);
}

/** Records a long-running task updated in place (new meta) and then killed. */
export function recordUpdatedAndKilledRun(dir: string, name = 'killed', id = 'kill1'): Promise<string> {
  const spec: AllocSpec = { id, job: 'svc', group: 'web', type: 'service', modifyIndex: 1, meta: { version: 'v1' }, tasks: [sh('api', 'trap "exit 0" TERM; echo up; while :; do sleep 0.05; done')] };
  return recordRun(dir, name, spec, async (r) => {
    await until(r, (s) => s.taskStates.api?.state === 'running');
    r.send({ type: 'UPDATE', alloc: { ...spec, modifyIndex: 2, meta: { version: 'v2' } } });
    await firstValueFrom(r.state$.pipe(filter(() => r.actor.getSnapshot().context.alloc.modifyIndex === 2), timeout(WAIT_MS)));
    r.send({ type: 'KILL' });
    await until(r, (s) => s.clientStatus === 'complete' && s.taskStates.api?.state === 'dead');
  });
}

/**
 * The deliberate change the tests inject: a restart decision that allows one restart fewer than the policy
 * says (a copy of the task runner's `decide`, not an edit of machines/).
 */
export const oneRestartFewer: AnyStateMachine = taskRunnerMachine.provide({
  actions: {
    decide: assign<TaskRunnerContext, AnyEventObject, undefined, EventObject, never>(({ context, system }) => {
      const rng = mulberry32(context.restarts.seed);
      const policy = context.settings.restartPolicy;
      // The same trigger as the machine's own (task-runner-actions.ts's triggerOf).
      const run = context.run;
      const trigger: RestartTrigger =
        run.stopReason === 'kill' || (context.killRequested && run.stopReason !== 'restart') ? { kind: 'killed' }
        : run.restartRequest && !run.restartRequest.failure ? { kind: 'restartRequested', failure: false }
        : run.startError ? { kind: 'startError', ...run.startError }
        : run.lastExit ? { kind: 'exit', exit: run.lastExit }
        : run.restartRequest ? { kind: 'restartRequested', failure: run.restartRequest.failure }
        : { kind: 'none' };
      const d = decideRestart({
        policy: { ...policy, attempts: policy.attempts - 1 },
        jobType: context.settings.jobType,
        lifecycle: context.task.lifecycle,
        tracker: context.restarts.tracker,
        trigger,
        now: clockNow(system),
        random: () => rng.next(),
      });
      return {
        restarts: { tracker: d.tracker, seed: rng.seed, decision: { kind: d.decision, delay: d.delay, reason: d.reason } },
        run: { ...context.run, restartRequest: undefined, startError: undefined, stopReason: undefined },
      };
    }) as never,
  },
}) as AnyStateMachine;
