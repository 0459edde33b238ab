import { afterAll, describe, expect, it } from 'vitest';
import { createAllocRunner, type AllocRunnerHook } from '../../src/index.ts';
import type { AllocSpec } from '../../machines/model.ts';
import { SimulatedClock, settle, untilAborted } from '../../src/testing/index.ts';
import { ALLOC_MODEL_EVENTS, allocExpectationOf, allocModel, type AllocModelEvent } from './alloc-model.ts';
import { switchableMockDriver } from './exit-switch.ts';
import { allTransitions, coveredTransitions, replayPath, shortestPaths, simplePaths, transitionPaths, type ModelPath, type PathOptions } from './paths.ts';
import { topState } from './state-map.ts';

const TICK = 10_000;
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
      case 'TICK':
        await clock.advance(TICK);
        break;
      case 'UPDATE':
        runner.send({ type: 'UPDATE', alloc: { ...spec, modifyIndex: ++index, meta: { v: String(index) } } });
        break;
      case 'SIGNAL':
        runner.send({ type: 'SIGNAL', signal: 'SIGHUP' });
        break;
      default:
        runner.send({ type: ev.type });
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

const replay = async (path: ModelPath<AllocModelEvent>) =>
  replayPath(allocModel, path, await allocWorld(), (s) => allocExpectationOf(s as never), (actual, expected, trail) => expect(actual, trail).toEqual(expected));

const opts: PathOptions<AllocModelEvent> = { events: ALLOC_MODEL_EVENTS, serializeState: (s) => JSON.stringify(s.value) };
const figures: string[] = [];
afterAll(() => console.log(`alloc runner model: ${figures.join('; ')}`));

describe('alloc runner: every path of the model, replayed on the real runner', () => {
  const all = allTransitions(allocModel, opts);

  it('reaches every model state by its shortest path, with the client status and task states the model predicts', async () => {
    const paths = shortestPaths(allocModel, opts);
    for (const p of paths) await replay(p);
    figures.push(`${paths.length} shortest paths`);
  });

  it('takes every transition of the model once; postrun and destroy hooks run once, and only when the alloc got there', async () => {
    const paths = transitionPaths(allocModel, opts);
    for (const p of paths) {
      const w = await replay(p);
      const top = w.observe().top;
      const trail = p.steps.map((s) => s.event.type).join(' → ');
      expect(w.calls.destroy ?? 0, trail).toBe(top === 'destroyed' ? 1 : 0);
      expect(w.calls.postrun ?? 0, trail).toBeLessThanOrEqual(1);
      if (top === 'terminal' || top === 'destroyed') expect(w.calls.postrun, trail).toBe(1);
    }
    const covered = coveredTransitions(paths, opts);
    expect([...all].filter((t) => !covered.has(t))).toEqual([]);
    figures.push(`${paths.length} transition paths covering ${covered.size}/${all.size} transitions`);
  });

  it('follows every simple path of the model', async () => {
    const paths = simplePaths(allocModel, opts);
    for (const p of paths) await replay(p);
    figures.push(`${paths.length} simple paths covering ${coveredTransitions(paths, opts).size}/${all.size} transitions`);
    expect(paths.length).toBeGreaterThan(0);
  });
});
