/**
 * restored-kill.ts as a table: which kill markers a restore takes for a KILL the dead agent never saved (sent
 * again), and which it leaves to what the restored runner already knows. Each row is a restored runner's
 * snapshot (the alloc's context and its task runners') and what the driver's stop marker says per task.
 * Then its other side: which Killing saves may wait for the kill's exit (killSaveMayWait), each row a live
 * runner's snapshot against the state its last save wrote.
 */
import { describe, expect, it } from 'vitest';
import type { Driver } from '../../src/drivers/controller.ts';
import type { AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { killSaveMayWait, unsavedKill } from '../../src/runtime/restored-kill.ts';
import type { AllocState } from '../../machines/model.ts';

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

/** A task of the kill-save rows: what the last save held of it, and where its runner is now. */
interface KillRow {
  /** The task's state and event types in the record on disk. */
  saved?: { state?: 'pending' | 'running' | 'dead'; events?: string[] };
  /** Its state and the event types added since that save. */
  now?: { state?: 'pending' | 'running' | 'dead'; events?: string[] };
  /** Its runner's kill state (task-runner.ts `running.killing.*`), or another state. */
  at?: 'preKill' | 'waitingShutdownDelay' | 'signalling' | 'forceKilling' | 'awaitingExit' | 'exited';
  stopReason?: 'kill' | 'restart';
  /** A kill or restart already under way at the last save. */
  stoppingAtSave?: boolean;
  noHandle?: boolean;
  /** Whether its driver marks the stop before the signal (raw_exec's supervised workloads). */
  marks?: boolean;
  driver?: string;
}

function killingRunner(tasks: Record<string, KillRow>, alloc: { killing?: boolean; step?: string; status?: string } = {}) {
  const ev = (types: string[]) => types.map((type) => ({ type, time: 1 }));
  const savedTs = (t: KillRow) => ({ state: t.saved?.state ?? 'running', events: ev(t.saved?.events ?? ['Received', 'Started']) });
  const nowTs = (t: KillRow) => {
    const s = savedTs(t);
    return { state: t.now?.state ?? s.state, events: [...s.events, ...ev(t.now?.events ?? [])] };
  };
  const children = Object.fromEntries(
    Object.entries(tasks).map(([name, t]) => {
      const value = t.at === 'exited' ? { exited: 'hooks' } : t.at ? { running: { killing: t.at } } : { running: { active: { poststart: 'done', updates: 'idle' } } };
      const snap = {
        status: 'active',
        value,
        matches: (v: { running?: { killing?: string } }) => t.at !== undefined && t.at !== 'exited' && v.running?.killing === t.at,
        context: {
          killRequested: t.stopReason === 'kill',
          run: { attempt: 1, ...(!t.noHandle && { handle: { driver: 'fake', taskName: name, pid: 100 } }), ...(t.stopReason && { stopReason: t.stopReason }) },
        },
      };
      return [name, { getSnapshot: () => snap }];
    }),
  );
  const snapshot = {
    status: alloc.status ?? 'active',
    value: { running: { busy: { kill: alloc.step ?? 'mains', restarts: 'idle', updates: 'idle' } } },
    context: {
      killing: alloc.killing ?? true,
      alloc: { tasks: Object.entries(tasks).map(([name, t]) => ({ name, driver: t.driver ?? 'fake' })) },
      taskStates: Object.fromEntries(Object.entries(tasks).map(([name, t]) => [name, nowTs(t)])),
    },
    children,
  };
  const runner = { actor: { getSnapshot: () => snapshot } } as unknown as AllocRunner;
  const saved = { clientStatus: 'running', taskStates: Object.fromEntries(Object.entries(tasks).map(([name, t]) => [name, savedTs(t)])) } as unknown as AllocState;
  const stopping = new Set(Object.entries(tasks).filter(([, t]) => t.stoppingAtSave).map(([name]) => name));
  const driver: Driver = { name: 'fake', controller: () => { throw new Error('not called'); }, marksStop: (h) => tasks[h.taskName]!.marks !== false };
  const plain: Driver = { name: 'plain', controller: () => { throw new Error('not called'); } };
  return { runner, drivers: { fake: driver, plain }, saved, stopping };
}

/** A task whose kill began since the last save and whose stop signal is going out. */
const signalled: KillRow = { now: { events: ['Killing'] }, at: 'signalling', stopReason: 'kill' };

describe('a Killing save that may wait for the exit (a restore takes the KILL again from the marker)', () => {
  it.each<[string, Record<string, KillRow>, Parameters<typeof killingRunner>[1], boolean]>([
    // The rule: nothing but the kill since the last save, every signal preceded by its marker.
    ['a KILL at its stop signal, the marker first: waits', { a: signalled }, {}, true],
    ['two tasks at their signals: waits', { a: signalled, b: signalled }, {}, true],
    ['the force kill, or the wait for the exit after it: waits', { a: { ...signalled, at: 'forceKilling' }, b: { ...signalled, at: 'awaitingExit' } }, {}, true],
    ['a sidecar not killed yet beside a main task at its signal (its kill follows that death, saved first): waits', { a: signalled, side: {} }, { step: 'mains' }, true],
    ['the leader first: waits', { a: signalled, b: {} }, { step: 'leader' }, true],
    // Anything before the first signal would go unrecorded: the KILL has no marker yet.
    ['the task\'s preKill hooks', { a: { ...signalled, at: 'preKill' } }, {}, false],
    ['the task\'s shutdown delay', { a: { ...signalled, at: 'waitingShutdownDelay' } }, {}, false],
    ['the alloc\'s preKill hooks (a task\'s own kill under way beside them)', { a: signalled }, { step: 'preKill' }, false],
    ['the group\'s shutdown delay (likewise)', { a: signalled }, { step: 'waitingShutdownDelay' }, false],
    ['one task at its signal, another in its shutdown delay', { a: signalled, b: { ...signalled, at: 'waitingShutdownDelay' } }, {}, false],
    // A restore would not take it for a KILL.
    ['a driver that marks nothing (no supervisor)', { a: { ...signalled, marks: false } }, {}, false],
    ['a driver with no markers at all', { a: { ...signalled, driver: 'plain' } }, {}, false],
    ['a restart under way at the last save (its marker says restart)', { a: { ...signalled, stoppingAtSave: true } }, {}, false],
    ['a restart since the last save, then the KILL', { a: { ...signalled, now: { events: ['Restart Signaled', 'Killing'] } } }, {}, false],
    ['a task with no handle', { a: { ...signalled, noHandle: true } }, {}, false],
    ['not a kill', { a: { ...signalled, stopReason: 'restart' } }, {}, false],
    // Something else to save.
    ['a death since the last save', { a: signalled, b: { now: { state: 'dead', events: ['Terminated'] }, at: 'exited' } }, {}, false],
    ['a start since the last save', { a: { ...signalled, saved: { state: 'pending', events: ['Received'] }, now: { state: 'running', events: ['Started', 'Killing'] } } }, {}, false],
    ['the allocation not killing', { a: signalled }, { killing: false }, false],
    ['no task stopped since the last save (a save of something else)', { a: {} }, {}, false],
    ['a runner that is done', { a: signalled }, { status: 'done' }, false],
  ])('%s', (_name, tasks, alloc, expected) => {
    const { runner, drivers, saved, stopping } = killingRunner(tasks, alloc);
    expect(killSaveMayWait(runner, drivers, saved, stopping)).toBe(expected);
  });
});
