import { afterAll, describe, expect, it } from 'vitest';
import { createTaskRunner, HookError, type TaskHook } from '../../src/index.ts';
import type { TaskSpec } from '../../machines/model.ts';
import { SimulatedClock, settle, untilAborted } from '../../src/testing/index.ts';
import { switchableMockDriver } from './exit-switch.ts';
import { allTransitions, coveredTransitions, replayPath, shortestPaths, simplePaths, transitionPaths, type ModelPath, type PathOptions } from './paths.ts';
import { topState } from './state-map.ts';
import { TASK_MODEL_EVENTS, taskExpectationOf, taskModel, type TaskModelEvent } from './task-model.ts';

const TICK = 10_000;

const task: TaskSpec = {
  name: 'web',
  driver: 'mock',
  config: { run_for: '1000h', kill_after: '0s' },
  restart: { attempts: 1, interval: 3_600_000, delay: 5_000, mode: 'fail' },
  killTimeout: 5_000,
};

/** A prestart hook that waits for the test's answer, and a stop hook that counts. */
function answeringHook() {
  let pending: { ok: () => void; fail: (e: Error) => void } | undefined;
  const calls = { prestart: 0, stop: 0, aborted: 0 };
  let n = 0;
  const hook: TaskHook = {
    name: 'answering',
    prestart: (_req, res, abort) => {
      calls.prestart++;
      abort.addEventListener('abort', () => calls.aborted++, { once: true });
      return new Promise<void>((resolve, reject) => {
        pending = {
          ok: () => {
            res.state = { n: ++n };
            resolve();
          },
          fail: reject,
        };
        void untilAborted(abort).then(() => resolve());
      });
    },
    stop: async () => void calls.stop++,
  };
  const answer = (kind: 'ok' | 'fail' | 'hang') => {
    if (!pending) throw new Error('the path expects a prestart call in flight, but there is none');
    const p = pending;
    pending = undefined;
    if (kind === 'ok') p.ok();
    if (kind === 'fail') p.fail(new HookError('scripted prestart failure', true));
  };
  return { hook, answer, calls };
}

/** The real task runner the path drives: mock driver with an exit switch, answering hook, simulated clock. */
async function taskWorld() {
  const clock = new SimulatedClock(0);
  const driver = switchableMockDriver();
  const { hook, answer, calls } = answeringHook();
  const runner = createTaskRunner(task, { clock, drivers: { mock: driver }, hooks: [hook], jobType: 'batch', seed: 5 }).start();
  await settle();
  let updates = 0;
  const apply = async (ev: TaskModelEvent) => {
    switch (ev.type) {
      case 'HOOK_OK':
        answer('ok');
        break;
      case 'HOOK_FAIL':
        answer('fail');
        break;
      case 'HOOK_HANG':
        answer('hang');
        break;
      case 'EXIT_OK':
        driver.exit(task.name, 0);
        break;
      case 'EXIT_FAIL':
        driver.exit(task.name, 1);
        break;
      case 'TICK':
        await clock.advance(TICK);
        break;
      case 'UPDATE':
        runner.send({ type: 'UPDATE', alloc: { id: 'standalone-web', job: 'j', group: 'g', type: 'batch', tasks: [task], modifyIndex: ++updates + 1 } });
        break;
      case 'SIGNAL':
        runner.send({ type: 'SIGNAL', signal: 'SIGHUP' });
        break;
      default:
        runner.send({ type: ev.type });
    }
    // Timers due now (a kill signal the mock obeys at once) fire; no time passes.
    await clock.advance(0);
  };
  const observe = () => {
    const ts = runner.getState();
    return { top: topState(runner.actor.getSnapshot().value), state: ts.state, failed: ts.failed, restarts: ts.restarts };
  };
  return { apply, observe, calls, runner, driver };
}

/** Replays a model path on a fresh runner, asserting the state and TaskState after every step. */
const replay = async (path: ModelPath<TaskModelEvent>) =>
  replayPath(taskModel, path, await taskWorld(), (s) => taskExpectationOf(s as never), (actual, expected, trail) => expect(actual, trail).toEqual(expected));

const opts: PathOptions<TaskModelEvent> = {
  events: TASK_MODEL_EVENTS,
  serializeState: (s) => JSON.stringify([s.value, s.context.attemptsUsed, s.context.failed]),
};
const figures: string[] = [];
afterAll(() => console.log(`task runner model: ${figures.join('; ')}`));

describe('task runner: every path of the model, replayed on the real runner', () => {
  const all = allTransitions(taskModel, opts);

  it('reaches every model state by its shortest path, with the state and TaskState the model predicts', async () => {
    const paths = shortestPaths(taskModel, opts);
    for (const p of paths) await replay(p);
    figures.push(`${paths.length} shortest paths`);
  });

  it('takes every transition of the model once, stop hooks running exactly once when the task ends for good', async () => {
    const paths = transitionPaths(taskModel, opts);
    for (const p of paths) {
      const w = await replay(p);
      const dead = w.runner.getState().state === 'dead';
      expect(w.calls.stop, p.steps.map((s) => s.event.type).join(' → ')).toBe(dead ? 1 : 0);
    }
    const covered = coveredTransitions(paths, opts);
    expect([...all].filter((t) => !covered.has(t))).toEqual([]);
    figures.push(`${paths.length} transition paths covering ${covered.size}/${all.size} transitions`);
  });

  it('follows every simple path of the model', async () => {
    const paths = simplePaths(taskModel, opts);
    for (const p of paths) await replay(p);
    const covered = coveredTransitions(paths, opts);
    figures.push(`${paths.length} simple paths covering ${covered.size}/${all.size} transitions`);
    expect(paths.length).toBeGreaterThan(0);
  });
});
