import { expect } from 'vitest';
import { createTaskRunner, HookError, type TaskHook } from '../../src/index.ts';
import type { TaskSpec } from '../../machines/model.ts';
import { SimulatedClock, settle, untilAborted } from '../../src/testing/index.ts';
import { switchableMockDriver } from './exit-switch.ts';
import { applyCommand, type PathOptions } from './paths.ts';
import { describePathSuite } from './path-suite.ts';
import { topState } from './state-map.ts';
import { TASK_MODEL_EVENTS, taskExpectationOf, taskModel, type TaskModelEvent } from './task-model.ts';


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
      default:
        await applyCommand(runner, clock, ev, () => ({ id: 'standalone-web', job: 'j', group: 'g', type: 'batch', tasks: [task], modifyIndex: ++updates + 1 }));
        return;
    }
    await clock.advance(0);
  };
  const observe = () => {
    const ts = runner.getState();
    return { top: topState(runner.actor.getSnapshot().value), state: ts.state, failed: ts.failed, restarts: ts.restarts };
  };
  return { apply, observe, calls, runner, driver };
}

describePathSuite({
  name: 'task runner',
  machine: taskModel,
  opts: {
    events: TASK_MODEL_EVENTS,
    serializeState: (s) => JSON.stringify([s.value, s.context.attemptsUsed, s.context.failed]),
  } satisfies PathOptions<TaskModelEvent>,
  world: taskWorld,
  expectationOf: (s) => taskExpectationOf(s as never),
  afterTransitionPath: {
    title: 'stop hooks run exactly once when the task ends for good, never before',
    check: (w, trail) => expect(w.calls.stop, trail).toBe(w.runner.getState().state === 'dead' ? 1 : 0),
  },
});
