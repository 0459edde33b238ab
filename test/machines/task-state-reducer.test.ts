/** Table tests of the pure alloc-level functions: Nomad's client status and its task-state reducer. */
import { describe, expect, it } from 'vitest';
import { clientStatusOf, reduceTaskStates, type ReducerInput } from '../../machines/task-state-reducer.ts';
import type { ClientStatus, TaskSpec, TaskState, TaskStatus } from '../../machines/model.ts';

const ts = (state: TaskStatus, failed = false): TaskState => ({ state, failed, restarts: 0, events: [] });

describe('clientStatusOf', () => {
  const rows: { name: string; states: TaskState[]; forced?: ClientStatus; expected: ClientStatus }[] = [
    { name: 'pending while every task is pending', states: [ts('pending'), ts('pending')], expected: 'pending' },
    { name: 'running once any task runs', states: [ts('pending'), ts('running')], expected: 'running' },
    { name: 'running while a task runs beside a dead one', states: [ts('dead'), ts('running')], expected: 'running' },
    { name: 'pending when a dead task waits on a pending one', states: [ts('dead'), ts('pending')], expected: 'pending' },
    { name: 'complete when every task is dead and none failed', states: [ts('dead'), ts('dead')], expected: 'complete' },
    { name: 'failed when any dead task failed, even beside a running one', states: [ts('dead', true), ts('running')], expected: 'failed' },
    { name: 'not failed by a failed flag on a task that still runs', states: [ts('running', true)], expected: 'running' },
    { name: 'the forced status over the task states', states: [ts('running')], forced: 'failed', expected: 'failed' },
    { name: 'complete for an alloc with no task states', states: [], expected: 'complete' },
  ];
  for (const r of rows) {
    it(`is ${r.name}`, () => {
      const taskStates = Object.fromEntries(r.states.map((s, i) => [`t${i}`, s]));
      expect(clientStatusOf(taskStates, r.forced)).toBe(r.expected);
    });
  }
});

const main: TaskSpec = { name: 'main', driver: 'mock', config: {} };
const leader: TaskSpec = { name: 'leader', driver: 'mock', config: {}, leader: true };
const side: TaskSpec = { name: 'side', driver: 'mock', config: {}, lifecycle: { hook: 'prestart', sidecar: true } };
const post: TaskSpec = { name: 'post', driver: 'mock', config: {}, lifecycle: { hook: 'poststop' } };

function input(tasks: TaskSpec[], states: Record<string, TaskState>, extra: Partial<ReducerInput> = {}): ReducerInput {
  return {
    tasks,
    taskStates: states,
    runComplete: {},
    restartPending: {},
    killEventSent: false,
    killing: false,
    coordinator: 'main',
    open: ['preSide', 'main'],
    now: 5,
    ...extra,
  };
}

describe('reduceTaskStates', () => {
  const rows: {
    name: string;
    in: ReducerInput;
    killEvent?: string;
    emitTo?: string[];
    startKill?: boolean;
    release?: string[];
  }[] = [
    {
      name: 'does nothing while every task runs',
      in: input([side, main], { side: ts('running'), main: ts('running') }),
      startKill: false,
    },
    {
      name: 'kills the live siblings of a failed task with Sibling Task Failed',
      in: input([main, { ...main, name: 'other' }], { main: ts('dead', true), other: ts('running') }),
      killEvent: 'Sibling Task Failed',
      emitTo: ['other'],
      startKill: true,
    },
    {
      name: 'kills the rest when the leader dies, over a failed sibling',
      in: input([leader, main, { ...main, name: 'bad' }], { leader: ts('dead'), main: ts('running'), bad: ts('dead', true) }),
      killEvent: 'Leader Task Dead',
      emitTo: ['main'],
      startKill: true,
    },
    {
      name: 'kills sidecars once only sidecars are left, with Main Tasks Dead',
      in: input([side, main], { side: ts('running'), main: ts('dead') }),
      killEvent: 'Main Tasks Dead',
      emitTo: ['side'],
      startKill: true,
    },
    {
      name: 'sends the kill event once: not again after it was sent',
      in: input([main, { ...main, name: 'other' }], { main: ts('dead', true), other: ts('running') }, { killEventSent: true }),
      startKill: false,
    },
    {
      name: 'stays quiet while the ordered kill runs',
      in: input([side, main], { side: ts('running'), main: ts('dead') }, { killing: true }),
      startKill: false,
    },
    {
      name: 'counts a dead task whose restart is pending as live',
      in: input([side, main], { side: ts('running'), main: ts('dead') }, { restartPending: { main: true } }),
      startKill: false,
    },
    {
      name: 'releases parked tasks once nothing is live, but never poststop or finished ones',
      in: input([main, { ...main, name: 'done' }, post], { main: ts('dead'), done: ts('dead'), post: ts('pending') }, { runComplete: { done: true } }),
      release: ['main'],
    },
  ];
  for (const r of rows) {
    it(r.name, () => {
      const fx = reduceTaskStates(r.in);
      expect(fx.killEvent?.type).toBe(r.killEvent);
      expect(fx.emitTo).toEqual(r.emitTo ?? []);
      if (r.startKill !== undefined) expect(fx.startKill).toBe(r.startKill);
      expect(fx.release).toEqual(r.release ?? []);
    });
  }

  it('stamps the kill event with the reducer time and names the failed sibling', () => {
    const fx = reduceTaskStates(input([main, { ...main, name: 'other' }], { main: ts('dead', true), other: ts('running') }));
    expect(fx.killEvent).toMatchObject({ time: 5, details: { failed_sibling: 'main' } });
  });

  it('opens the poststop gate once every other task is dead, and says which gates changed', () => {
    const fx = reduceTaskStates(input([main, post], { main: ts('dead'), post: ts('pending') }));
    expect(fx.coordinator).toBe('poststop');
    expect(fx.open).toEqual(['poststop']);
    expect(fx.gates).toEqual([
      { task: 'main', open: false },
      { task: 'post', open: true },
    ]);
  });
});
