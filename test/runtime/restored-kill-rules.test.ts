/**
 * restored-kill.ts as a table: which kill markers a restore takes for a KILL the dead agent never saved (sent
 * again), and which it leaves to what the restored runner already knows. Each row is a restored runner's
 * snapshot (the alloc's context and its task runners') and what the driver's stop marker says per task.
 */
import { describe, expect, it } from 'vitest';
import type { Driver } from '../../src/drivers/controller.ts';
import type { AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { unsavedKill } from '../../src/runtime/restored-kill.ts';

interface TaskRow {
  marker?: 'kill' | 'restart';
  killRequested?: boolean;
  stopReason?: 'kill' | 'restart';
  dead?: boolean;
  noHandle?: boolean;
  driver?: string;
}

function restored(tasks: Record<string, TaskRow>, alloc: { killing?: boolean; released?: string[]; status?: string } = {}) {
  const children = Object.fromEntries(
    Object.entries(tasks).map(([name, t]) => [
      name,
      {
        getSnapshot: () => ({
          status: 'active',
          context: {
            killRequested: t.killRequested === true,
            run: { attempt: 1, ...(!t.noHandle && { handle: { driver: 'fake', taskName: name, pid: 100 } }), ...(t.stopReason && { stopReason: t.stopReason }) },
            taskState: { state: t.dead ? 'dead' : 'running' },
          },
        }),
      },
    ]),
  );
  const snapshot = {
    status: alloc.status ?? 'active',
    context: {
      killing: alloc.killing === true,
      alloc: { tasks: Object.entries(tasks).map(([name, t]) => ({ name, driver: t.driver ?? 'fake' })) },
      taskFlags: { released: Object.fromEntries((alloc.released ?? []).map((n) => [n, true])) },
    },
    children,
  };
  const runner = { actor: { getSnapshot: () => snapshot } } as unknown as AllocRunner;
  const driver: Driver = { name: 'fake', controller: () => { throw new Error('not called'); }, stopBegun: (h) => tasks[h.taskName]!.marker };
  const plain: Driver = { name: 'plain', controller: () => { throw new Error('not called'); } };
  return { runner, drivers: { fake: driver, plain } };
}

describe('a kill marker at restore', () => {
  it.each<[string, Record<string, TaskRow>, Parameters<typeof restored>[1], string | undefined]>([
    // The rule: the dead agent's KILL, its signals out, its Killing save not on disk.
    ['a kill marker nothing saved explains: the KILL is sent again', { a: { marker: 'kill' }, b: {} }, {}, 'a'],
    ['the same on the second task', { a: {}, b: { marker: 'kill' } }, {}, 'b'],
    // Every other cause keeps its own way.
    ['no marker: the tasks run on', { a: {}, b: {} }, {}, undefined],
    ['a restart marker: the restart goes on', { a: { marker: 'restart' }, b: {} }, {}, undefined],
    ['the allocation already killing (a saved KILL or API stop, a failed or leader task\'s reducer kill)', { a: { marker: 'kill' }, b: {} }, { killing: true }, undefined],
    ['a sidecar released by its main tasks\' deaths (on disk before the signal: kill gate)', { a: { marker: 'kill' }, b: {} }, { released: ['a'] }, undefined],
    ['the task\'s own kill saved', { a: { marker: 'kill', killRequested: true, stopReason: 'kill' }, b: {} }, {}, undefined],
    ['a saved restart whose force kill marked "kill"', { a: { marker: 'kill', stopReason: 'restart' }, b: {} }, {}, undefined],
    ['a task dead on disk', { a: { marker: 'kill', dead: true }, b: {} }, {}, undefined],
    ['a task with no handle (its start not saved)', { a: { marker: 'kill', noHandle: true }, b: {} }, {}, undefined],
    ['a driver that keeps no stop record', { a: { marker: 'kill', driver: 'plain' }, b: {} }, {}, undefined],
    ['a runner that did not come up', { a: { marker: 'kill' }, b: {} }, { status: 'error' }, undefined],
  ])('%s', (_name, tasks, alloc, expected) => {
    const { runner, drivers } = restored(tasks, alloc);
    expect(unsavedKill(runner, drivers)).toBe(expected);
  });
});
