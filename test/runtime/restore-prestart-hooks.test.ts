/**
 * Which built-in prestart hooks a restored alloc runner runs again, by where the dead agent's last save left the
 * task (Nomad's task runner: a hook whose persisted state says PrestartDone is skipped with its env re-applied;
 * every other one runs again, from the first, before a task without a handle starts):
 *
 * | hook      | Nomad          | restored mid-prestart / before its start was saved | restored running         |
 * |-----------|----------------|----------------------------------------------------|--------------------------|
 * | validate  | Done: skipped  | skipped                                            | skipped                  |
 * | task_dir  | runs again     | runs again (the dir is not rebuilt: its state)     | runs again               |
 * | artifacts | Done: skipped  | skipped: nothing is fetched again                  | skipped                  |
 * | template  | runs again     | renders again: the task starts with the new file   | renders again: restarted |
 *
 * A real alloc runner with its built-in hooks and the mock driver; the variable a template reads changes while
 * no agent runs. The task starts with what the template renders now, and is restarted only when it ran already.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import type { Controller, Driver, DriverContext } from '../../src/drivers/controller.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { recordingTaskHook, type HookCall } from '../../src/testing/hook-recorder.ts';
import { removeTempDirs, startArtifactServer, tempDir, type ArtifactServer } from '../artifacts/artifact-server.ts';
import { until } from '../drivers/until.ts';
import { TEST_NODE } from '../properties/world.ts';

let server: ArtifactServer;
beforeAll(async () => {
  server = await startArtifactServer({ '/tool.txt': Buffer.from('tool') });
});
afterAll(() => server.close());
const runners: AllocRunner[] = [];
afterEach(async () => {
  for (const r of runners.splice(0)) r.stop();
  await removeTempDirs();
});

const PATH = 'nomad/jobs/j';

/** The variable the template reads, `v` as given, with no changes after. */
function variables(v: string) {
  const variable = { Namespace: 'default', Path: PATH, Items: { v }, CreateIndex: 1, ModifyIndex: 2, CreateTime: 1, ModifyTime: 1 };
  const source = {
    get: (path: string) => (path === PATH ? variable : undefined),
    list: () => [variable],
    allowed: () => true,
    changes$: new Subject<never>().asObservable(),
  };
  return { forTask: () => source };
}

function specOf(id: string): AllocSpec {
  const task: TaskSpec = {
    name: 'web', driver: 'mock', config: { run_for: '1h' },
    artifacts: [{ source: server.url('/tool.txt'), destination: 'local/', mode: 'any' }],
    templates: [{
      destination: 'local/v', data: `{{ with nomadVar "${PATH}" }}v={{ .v }}{{ end }}`, changeMode: 'restart', splay: 0,
      perms: '0644', leftDelim: '{{', rightDelim: '}}', env: false, errMissingKey: false, wait: { min: 0, max: 0 },
    }],
  };
  return { id, job: 'j', group: 'g', type: 'service', tasks: [task] };
}

/** The mock driver, its starts first waiting on `before` and recording the template's file as the task would read it. */
function fileReadingDriver(seen: string[], before: () => Promise<void> = async () => undefined): Driver {
  const mock = createMockDriver();
  const wrap = (c: Controller, ctx: DriverContext): Controller => {
    const start = c.start.bind(c);
    c.start = async (signal) => {
      await before();
      signal.throwIfAborted();
      seen.push(readFileSync(join(ctx.taskDir, 'local', 'v'), 'utf8'));
      return start(signal);
    };
    return c;
  };
  return { name: 'mock', controller: (task, ctx) => wrap(mock.controller(task, ctx), ctx), recover: (h, task, ctx) => mock.recover!(h, task, ctx) };
}

/**
 * As fileReadingDriver, and the dead agent's start of attempt 1 had spawned the task (with the file as it was
 * then): the driver finds that workload, as raw_exec's intent files let it.
 */
function adoptingDriver(seen: string[]): Driver {
  const base = fileReadingDriver(seen);
  const spawnedEarlier = createMockDriver();
  return {
    ...base,
    findStarted: async (task, ctx) => {
      if (ctx.attempt !== 1) return undefined;
      const c = spawnedEarlier.controller(task, ctx);
      const start = c.start.bind(c);
      c.start = async (signal) => {
        signal.throwIfAborted();
        seen.push('found v=1');
        return start(signal);
      };
      return c;
    },
  };
}

/** A user hook after the built-in ones; its prestart blocks until aborted when `block` says so. */
function gateHook(log: HookCall[], block: boolean) {
  return recordingTaskHook('gate', log, {
    prestart: (_req, _res, abort) => (block ? new Promise<void>((resolve) => abort.addEventListener('abort', () => resolve(), { once: true })) : Promise.resolve()),
  }, ['prestart']);
}

type Point = 'mid-prestart' | 'starting' | 'running';

/** Runs the task in a first runner until `point`, saves it there, and drops that runner (the agent dies). */
async function savedAt(point: Point, dataDir: string, id: string) {
  const log: HookCall[] = [];
  const starts: string[] = [];
  const never = () => new Promise<void>(() => undefined);
  const first = createAllocRunner(specOf(id), {
    dataDir, node: TEST_NODE, hostEnv: {}, variables: variables('1'), templateWait: { min: 0, max: 0 },
    drivers: { mock: fileReadingDriver(starts, point === 'starting' ? never : undefined) },
    taskHooks: [gateHook(log, point === 'mid-prestart')],
  }).start();
  runners.push(first);
  const web = () => first.actor.getSnapshot().children['web']?.getSnapshot() as { matches(v: unknown): boolean } | undefined;
  if (point === 'mid-prestart') await until(() => log.some((c) => c.method === 'prestart'), 'the gate hook to be called');
  if (point === 'starting') await until(() => web()?.matches({ pending: 'starting' }) === true, 'the driver start');
  if (point === 'running') await until(() => first.getState().taskStates['web']?.state === 'running', 'the task to run');
  const saved = first.persist();
  first.stop();
  return saved;
}

describe('a restored alloc runner runs again the prestart hooks Nomad would', () => {
  it.each([
    { point: 'mid-prestart', prestarts: ['task_dir', 'template', 'gate'], starts: ['v=2'], restarted: false },
    { point: 'starting', prestarts: ['task_dir', 'template', 'gate'], starts: ['v=2'], restarted: false },
    // The restore's prestart hooks beside the running workload, then the template's restart's.
    { point: 'running', prestarts: ['task_dir', 'template', 'gate', 'task_dir', 'template', 'gate'], starts: ['v=2'], restarted: true },
  ] as const)('saved $point: prestart hooks answer $prestarts, the task starts with $starts', async ({ point, prestarts, starts, restarted }) => {
    const dataDir = tempDir();
    const id = `restore-hooks-${point}`;
    const saved = await savedAt(point, dataDir, id);
    const fetched = server.count('/tool.txt');

    const calls: string[] = [];
    // The prestart calls that answered: a call the snapshot held is made again on restore and stopped at once.
    const answered = 'xstate.done.actor.prestart:';
    const inspect = (ev: InspectionEvent) => {
      if (ev.type === '@xstate.event' && ev.event.type.startsWith(answered)) calls.push(ev.event.type.slice(answered.length));
    };
    const seen: string[] = [];
    const second = createAllocRunner(specOf(id), {
      dataDir, node: TEST_NODE, hostEnv: {}, variables: variables('2'), templateWait: { min: 0, max: 0 },
      drivers: { mock: fileReadingDriver(seen) }, taskHooks: [gateHook([], false)], snapshot: saved, inspect,
    }).start();
    runners.push(second);
    const events = () => second.getState().taskStates['web']!.events.map((e) => e.type);
    if (restarted) await until(() => events().filter((e) => e === 'Started').length === 2, 'the restart');
    else await until(() => second.getState().taskStates['web']?.state === 'running', 'the task to run');
    // A restart the template's watch would ask for comes within a few ms of its render: give it the chance.
    await new Promise((r) => setTimeout(r, 50));

    expect(calls).toEqual(prestarts);
    expect(server.count('/tool.txt')).toBe(fetched);
    expect(seen).toEqual(starts);
    expect(readFileSync(join(dataDir, 'allocs', id, 'web', 'local', 'v'), 'utf8')).toBe('v=2');
    expect(events().includes('Restart Signaled')).toBe(restarted);
    const hookStates = (second.actor.getSnapshot().children['web']!.getSnapshot() as { context: { hookStates: Record<string, { done: boolean }> } }).context.hookStates;
    expect(Object.fromEntries(Object.entries(hookStates).map(([k, s]) => [k, s.done]))).toEqual({ validate: true, task_dir: false, artifacts: true, template: false, gate: false });
  });
});

describe('a task restored before its start was saved, that start having spawned it', () => {
  it('is found, not spawned again, and restarted for the file its workload never saw', async () => {
    const dataDir = tempDir();
    const id = 'restore-hooks-adopted';
    const saved = await savedAt('starting', dataDir, id);
    const seen: string[] = [];
    const second = createAllocRunner(specOf(id), {
      dataDir, node: TEST_NODE, hostEnv: {}, variables: variables('2'), templateWait: { min: 0, max: 0 },
      drivers: { mock: adoptingDriver(seen) }, taskHooks: [gateHook([], false)], snapshot: saved,
    }).start();
    runners.push(second);
    const events = () => second.getState().taskStates['web']!.events.map((e) => e.type);
    await until(() => events().filter((e) => e === 'Started').length === 2, 'the restart');
    expect(seen).toEqual(['found v=1', 'v=2']);
    expect(events().filter((e) => e === 'Restart Signaled')).toHaveLength(1);
  });
});
