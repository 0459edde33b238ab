import { expect } from 'vitest';
import { createAllocRunner, type AllocRunnerHook } from '../../src/index.ts';
import type { AllocSpec } from '../../machines/model.ts';
import { SimulatedClock, settle, untilAborted } from '../../src/testing/index.ts';
import { ALLOC_MODEL_EVENTS, allocExpectationOf, allocModel, type AllocModelEvent } from './alloc-model.ts';
import { switchableMockDriver } from './exit-switch.ts';
import { applyCommand, type PathOptions } from './paths.ts';
import { describePathSuite } from './path-suite.ts';
import { topState } from './state-map.ts';

const noRestart = { attempts: 0, interval: 3_600_000, delay: 5_000, mode: 'fail' as const };

const spec: AllocSpec = {
  id: 'model-alloc',
  job: 'model',
  group: 'g',
  type: 'batch',
  modifyIndex: 1,
  tasks: [
    { name: 'init', driver: 'mock', config: { run_for: '1000h', kill_after: '0s' }, lifecycle: { hook: 'prestart' }, restart: noRestart },
    { name: 'main', driver: 'mock', config: { run_for: '1000h', kill_after: '0s' }, restart: noRestart },
  ],
};

/** An alloc hook whose prerun waits for the test's answer; every other call is counted. */
function answeringAllocHook() {
  let pending: { ok: () => void; fail: () => void } | undefined;
  const calls: Record<string, number> = {};
  const count = (m: string) => (calls[m] = (calls[m] ?? 0) + 1);
  const hook: AllocRunnerHook = {
    name: 'answering',
    prerun: (_env, abort) => {
      count('prerun');
      return new Promise<void>((resolve, reject) => {
        pending = { ok: resolve, fail: () => reject(new Error('scripted prerun failure')) };
        void untilAborted(abort).then(() => resolve());
      });
    },
    postrun: async () => void count('postrun'),
    destroy: async () => void count('destroy'),
    shutdown: async () => void count('shutdown'),
  };
  const answer = (kind: 'ok' | 'fail' | 'hang') => {
    if (!pending) throw new Error('the path expects a prerun call in flight, but there is none');
    const p = pending;
    pending = undefined;
    if (kind === 'ok') p.ok();
    if (kind === 'fail') p.fail();
  };
  return { hook, answer, calls };
}

async function allocWorld() {
  const clock = new SimulatedClock(0);
  const driver = switchableMockDriver();
  const { hook, answer, calls } = answeringAllocHook();
  const runner = createAllocRunner(spec, { clock, drivers: { mock: driver }, allocHooks: [hook], builtinHooks: false, seed: 5 }).start();
  await settle();
  let index = 1;
  const apply = async (ev: AllocModelEvent) => {
    switch (ev.type) {
      case 'PRERUN_OK':
        answer('ok');
        break;
      case 'PRERUN_FAIL':
        answer('fail');
        break;
      case 'PRERUN_HANG':
        answer('hang');
        break;
      case 'INIT_EXIT_OK':
      case 'INIT_EXIT_FAIL':
        driver.exit('init', ev.type === 'INIT_EXIT_OK' ? 0 : 1);
        break;
      case 'MAIN_EXIT_OK':
      case 'MAIN_EXIT_FAIL':
        driver.exit('main', ev.type === 'MAIN_EXIT_OK' ? 0 : 1);
        break;
      default:
        await applyCommand(runner, clock, ev, () => ({ ...spec, modifyIndex: ++index, meta: { v: String(index) } }));
        return;
    }
    await clock.advance(0);
  };
  const observe = () => {
    const s = runner.getState();
    const view = (name: string) => {
      const ts = s.taskStates[name]!;
      return { state: ts.state, failed: ts.failed, restarts: ts.restarts };
    };
    return { top: topState(runner.actor.getSnapshot().value), clientStatus: s.clientStatus, init: view('init'), main: view('main') };
  };
  return { apply, observe, calls, runner };
}

describePathSuite({
  name: 'alloc runner',
  machine: allocModel,
  opts: { events: ALLOC_MODEL_EVENTS, serializeState: (s) => JSON.stringify(s.value) } satisfies PathOptions<AllocModelEvent>,
  world: allocWorld,
  expectationOf: (s) => allocExpectationOf(s as never),
  afterTransitionPath: {
    title: 'postrun and destroy hooks run once, and only when the alloc got there',
    check: (w, trail) => {
      const top = w.observe().top;
      expect(w.calls.destroy ?? 0, trail).toBe(top === 'destroyed' ? 1 : 0);
      expect(w.calls.postrun ?? 0, trail).toBeLessThanOrEqual(1);
      if (top === 'terminal' || top === 'destroyed') expect(w.calls.postrun, trail).toBe(1);
    },
  },
});
