/**
 * How the runtime binds the machines: hook plans (which hooks implement each phase, shared between tasks),
 * hook names checked as actor ids, runners found through their actor system, and the machine definitions
 * the CLI draws by name.
 */
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { allocHookPlanOf } from '../../src/runtime/alloc-bindings.ts';
import { checkHookNames, hookPlanOf, providedTaskRunnerMachine } from '../../src/runtime/task-bindings.ts';
import { machineDefinition } from '../../src/runtime/machine-definitions.ts';
import { createTaskRunner } from '../../src/runtime/create-task-runner.ts';
import { allocRunnerMachine } from '../../machines/alloc-runner.ts';
import { taskManagerMachine } from '../../machines/task-manager.ts';
import { taskRunnerMachine } from '../../machines/task-runner.ts';
import { recordingAllocHook, recordingTaskHook, type HookCall } from '../../src/testing/hook-recorder.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

describe("hook plans (Nomad's task runner builds its hook list once)", () => {
  const log: HookCall[] = [];

  it('names, for each phase, the hooks that implement it, in registration order; a phase no hook implements is absent', () => {
    const plan = hookPlanOf([
      recordingTaskHook('dir', log, {}, ['prestart', 'stop']),
      recordingTaskHook('stats', log, {}, ['poststart', 'exited']),
      recordingTaskHook('env', log, {}, ['prestart', 'update', 'preKilling', 'shutdown']),
    ]);
    expect(plan).toEqual({
      prestart: ['dir', 'env'],
      poststart: ['stats'],
      preKilling: ['env'],
      exited: ['stats'],
      update: ['env'],
      stop: ['dir'],
      shutdown: ['env'],
    });
  });

  it('is an empty plan for no hooks', () => {
    expect(hookPlanOf([])).toEqual({});
  });

  it('gives tasks with the same hooks one shared, frozen plan', () => {
    const a = hookPlanOf([recordingTaskHook('x', log, {}, ['prestart'])]);
    const b = hookPlanOf([recordingTaskHook('x', log, {}, ['prestart'])]);
    expect(b).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.prestart)).toBe(true);
    expect(hookPlanOf([recordingTaskHook('y', log, {}, ['prestart'])])).not.toBe(a);
  });

  it('shares one plan between hook lists that plan alike, and never between lists whose names would run together', () => {
    const ab = hookPlanOf([recordingTaskHook('a', log, {}, ['prestart']), recordingTaskHook('b', log, {}, ['poststart'])]);
    // Another order, and a hook that implements no phase: the same plan, so the same object.
    const ba = hookPlanOf([recordingTaskHook('b', log, {}, ['poststart']), { name: 'idle' }, recordingTaskHook('a', log, {}, ['prestart'])]);
    expect(ba).toBe(ab);
    expect(hookPlanOf([recordingTaskHook('a', log, {}, ['prestart']), recordingTaskHook('b', log, {}, ['poststart'])])).toBe(ab);
    const two = hookPlanOf([recordingTaskHook('p', log, {}, ['prestart']), recordingTaskHook('q', log, {}, ['prestart'])]);
    const one = hookPlanOf([recordingTaskHook('p:1;1:q', log, {}, ['prestart'])]);
    expect(two).toEqual({ prestart: ['p', 'q'] });
    expect(one).toEqual({ prestart: ['p:1;1:q'] });
  });

  it("plans an alloc's hooks by Nomad's alloc runner phases", () => {
    const plan = allocHookPlanOf([
      recordingAllocHook('alloc_dir', log, {}, ['prerun', 'destroy']),
      recordingAllocHook('health', log, {}, ['prerun', 'preKill', 'postrun', 'update', 'preTaskRestart', 'shutdown']),
    ]);
    expect(plan).toEqual({
      prerun: ['alloc_dir', 'health'],
      preKill: ['health'],
      postrun: ['health'],
      destroy: ['alloc_dir'],
      update: ['health'],
      preTaskRestart: ['health'],
      shutdown: ['health'],
    });
  });
});

describe('hook names: actor ids and keys of persisted hook state', () => {
  it('accepts distinct non-empty names', () => {
    expect(() => checkHookNames([{ name: 'a' }, { name: 'b' }], 'task "web"')).not.toThrow();
  });

  it('refuses an empty or missing name, saying where', () => {
    expect(() => checkHookNames([{ name: '' }], 'task "web"')).toThrow(new TypeError('task "web": every hook needs a non-empty string name'));
    expect(() => checkHookNames([{ name: 3 as unknown as string }], 'task "web"')).toThrow(TypeError);
  });

  it('refuses two hooks of one name, naming it', () => {
    expect(() => checkHookNames([{ name: 'a' }, { name: 'b' }, { name: 'a' }], 'allocation a1')).toThrow(
      new TypeError('allocation a1: two hooks are named "a"; hook names must be unique'),
    );
  });

  it('a task runner is refused hooks with duplicate names before it is built', () => {
    const log: HookCall[] = [];
    expect(() => createTaskRunner({ name: 'web', driver: 'mock', config: {} }, { hooks: [recordingTaskHook('h', log), recordingTaskHook('h', log)] })).toThrow(
      'task "web": two hooks are named "h"',
    );
  });
});

describe('runners found through their actor system', () => {
  it('a provided task runner started without createTaskRunner fails its first hook call with a clear error', async () => {
    const clock = new SimulatedClock(0);
    const actor = createActor(providedTaskRunnerMachine, {
      clock,
      input: { allocId: 'a', task: { name: 'web', driver: 'mock', config: {} }, jobType: 'batch', hooks: { prestart: ['h'] }, parkWhenDead: false },
    }).start();
    await clock.advance(1);
    const failure = actor.getSnapshot().context.taskState.events.find((e) => e.type === 'Task hook failed');
    expect(failure?.displayMessage).toContain(
      'this actor has no runtime bindings: create runners with createAllocRunner() or createTaskRunner(), which register them',
    );
    actor.stop();
  });
});

describe('machine definitions by the names `allocrun graph` takes', () => {
  it('task, alloc and controller are the task runner, the alloc runner and SwarmKit’s task manager', () => {
    expect(machineDefinition('task')).toBe(taskRunnerMachine);
    expect(machineDefinition('alloc')).toBe(allocRunnerMachine);
    expect(machineDefinition('controller')).toBe(taskManagerMachine);
  });
});
