import { describe, expect, it } from 'vitest';
import {
  coordinate,
  isTaskAllowed,
  openStages,
  restoredCoordinatorState,
  stageOf,
  type CoordinatedTask,
  type CoordinatorState,
  type Stage,
} from '../../machines/coordinator.ts';
import type { TaskLifecycle, TaskStatus } from '../../machines/model.ts';

/** The lifecycle of each task name used below, as in Nomad's mock.LifecycleAlloc and TestCoordinator_Restore. */
const LIFECYCLE: Record<string, TaskLifecycle | undefined> = {
  main: undefined,
  web: undefined,
  init: { hook: 'prestart' },
  init2: { hook: 'prestart', sidecar: false },
  side: { hook: 'prestart', sidecar: true },
  postEph: { hook: 'poststart' },
  postSide: { hook: 'poststart', sidecar: true },
  poststop: { hook: 'poststop' },
};

/** `'dead!'` is a dead, failed task. */
type Status = TaskStatus | 'dead!';

function tasks(states: Record<string, Status>): CoordinatedTask[] {
  return Object.entries(states).map(([name, s]) => ({
    name,
    lifecycle: LIFECYCLE[name],
    state: s === 'dead!' ? 'dead' : s,
    failed: s === 'dead!',
  }));
}

function expectGates(open: readonly Stage[], allowed: string[], blocked: string[]): void {
  for (const name of allowed) expect(isTaskAllowed(open, LIFECYCLE[name]), `${name} allowed`).toBe(true);
  for (const name of blocked) expect(isTaskAllowed(open, LIFECYCLE[name]), `${name} blocked`).toBe(false);
}

describe('coordinator: stages and gates', () => {
  const stages: { name: string; lifecycle?: TaskLifecycle; stage: Stage }[] = [
    { name: 'puts a task with no lifecycle in main', lifecycle: undefined, stage: 'main' },
    { name: 'puts a prestart task in preEph', lifecycle: { hook: 'prestart' }, stage: 'preEph' },
    { name: 'puts a prestart task with sidecar false in preEph', lifecycle: { hook: 'prestart', sidecar: false }, stage: 'preEph' },
    { name: 'puts a prestart sidecar in preSide', lifecycle: { hook: 'prestart', sidecar: true }, stage: 'preSide' },
    { name: 'puts a poststart task in postEph', lifecycle: { hook: 'poststart' }, stage: 'postEph' },
    { name: 'puts a poststart sidecar in postSide', lifecycle: { hook: 'poststart', sidecar: true }, stage: 'postSide' },
    { name: 'puts a poststop task in poststop', lifecycle: { hook: 'poststop' }, stage: 'poststop' },
    { name: 'puts a poststop sidecar in poststop too', lifecycle: { hook: 'poststop', sidecar: true }, stage: 'poststop' },
  ];
  for (const row of stages) it(row.name, () => expect(stageOf(row.lifecycle)).toBe(row.stage));

  const gates: { state: CoordinatorState; open: Stage[] }[] = [
    { state: 'init', open: [] },
    { state: 'prestart', open: ['preEph', 'preSide'] },
    { state: 'main', open: ['preSide', 'main'] },
    { state: 'poststart', open: ['preSide', 'main', 'postEph', 'postSide'] },
    { state: 'wait_alloc', open: ['preSide', 'main', 'postSide'] },
    { state: 'poststop', open: ['poststop'] },
  ];
  for (const row of gates) {
    it(`opens ${row.open.length ? row.open.join(', ') : 'no gate'} in ${row.state}`, () => {
      expect([...openStages(row.state)].sort()).toEqual([...row.open].sort());
    });
  }

  it('allows a task exactly when its stage is open', () => {
    expect(isTaskAllowed(['preSide', 'main'], undefined)).toBe(true);
    expect(isTaskAllowed(['preSide', 'main'], { hook: 'prestart' })).toBe(false);
  });
});

describe('coordinator: transitions (spec §2.4)', () => {
  const rows: { name: string; from: CoordinatorState; states: Record<string, Status>; to: CoordinatorState }[] = [
    { name: 'stays in init until every task is pending', from: 'init', states: { init: 'pending', main: 'running' }, to: 'init' },
    { name: 'leaves init once every task is pending', from: 'init', states: { init: 'pending', side: 'pending', main: 'pending' }, to: 'prestart' },
    { name: 'needs poststop tasks pending too before leaving init', from: 'init', states: { init: 'pending', main: 'pending', poststop: 'running' }, to: 'init' },
    { name: 'stays in prestart while an ephemeral prestart task runs', from: 'prestart', states: { init: 'running', side: 'running', main: 'pending' }, to: 'prestart' },
    { name: 'stays in prestart while a prestart sidecar is pending', from: 'prestart', states: { init: 'dead', side: 'pending', main: 'pending' }, to: 'prestart' },
    { name: 'stays in prestart while a prestart sidecar is dead', from: 'prestart', states: { init: 'dead', side: 'dead', main: 'pending' }, to: 'prestart' },
    { name: 'stays in prestart when an ephemeral prestart task failed', from: 'prestart', states: { init: 'dead!', side: 'running', main: 'pending' }, to: 'prestart' },
    { name: 'moves to main once inits are dead and OK and sidecars run', from: 'prestart', states: { init: 'dead', side: 'running', main: 'pending' }, to: 'main' },
    { name: 'passes straight through prestart when there is no prestart task', from: 'prestart', states: { main: 'pending' }, to: 'main' },
    { name: 'stays in main while a main task is pending', from: 'main', states: { main: 'running', web: 'pending', postEph: 'pending' }, to: 'main' },
    { name: 'moves to poststart once no main task is pending', from: 'main', states: { main: 'running', postEph: 'pending' }, to: 'poststart' },
    { name: 'stays in poststart while an ephemeral poststart task is not dead', from: 'poststart', states: { main: 'running', postEph: 'running' }, to: 'poststart' },
    { name: 'moves to wait_alloc once every ephemeral poststart task is dead', from: 'poststart', states: { main: 'running', postEph: 'dead', postSide: 'running' }, to: 'wait_alloc' },
    { name: 'does not wait on poststart sidecars', from: 'poststart', states: { main: 'running', postSide: 'pending' }, to: 'wait_alloc' },
    { name: 'stays in wait_alloc while a non-poststop task is alive', from: 'wait_alloc', states: { main: 'running', poststop: 'pending' }, to: 'wait_alloc' },
    { name: 'moves from wait_alloc to poststop once every non-poststop task is dead', from: 'wait_alloc', states: { main: 'dead', side: 'dead', poststop: 'pending' }, to: 'poststop' },
    { name: 'moves from init to poststop when every non-poststop task is dead', from: 'init', states: { main: 'dead', poststop: 'pending' }, to: 'poststop' },
    { name: 'moves from prestart to poststop when a failed init leaves nothing alive', from: 'prestart', states: { init: 'dead!', main: 'dead' }, to: 'poststop' },
    { name: 'moves from main to poststop when every non-poststop task is dead', from: 'main', states: { main: 'dead', web: 'dead' }, to: 'poststop' },
    { name: 'moves from poststart to poststop when every non-poststop task is dead', from: 'poststart', states: { main: 'dead', postEph: 'dead', postSide: 'dead' }, to: 'poststop' },
    { name: 'stays in poststop even if tasks become pending again', from: 'poststop', states: { main: 'pending', poststop: 'pending' }, to: 'poststop' },
    { name: 'runs a fresh alloc with only main tasks straight from init to main', from: 'init', states: { main: 'pending', web: 'pending' }, to: 'main' },
    { name: 'runs a fresh alloc with only poststop tasks straight to poststop', from: 'init', states: { poststop: 'pending' }, to: 'poststop' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const result = coordinate(row.from, tasks(row.states));
      expect(result.state).toBe(row.to);
      expect(result.open).toEqual([...openStages(row.to)]);
    });
  }

  it('returns open gates the caller may keep without aliasing the table', () => {
    const { open } = coordinate('init', tasks({ main: 'pending' }));
    open.push('poststop');
    expect(openStages('main')).toEqual(['preSide', 'main']);
  });
});

/** A Nomad coordinator test: task states fed in order, with the gates expected after each update. */
interface Scenario {
  name: string;
  steps: { name: string; states: Record<string, Status>; allowed: string[]; blocked: string[] }[];
}

const scenarios: Scenario[] = [
  {
    name: 'TestCoordinator_OnlyMainApp',
    steps: [
      { name: 'allows main once it is pending', states: { main: 'pending' }, allowed: ['main'], blocked: [] },
      { name: 'still allows main once it is running', states: { main: 'running' }, allowed: ['main'], blocked: [] },
    ],
  },
  {
    name: 'TestCoordinator_PrestartRunsBeforeMain',
    steps: [
      { name: 'allows init and sidecar but blocks main while all are pending', states: { init: 'pending', side: 'pending', main: 'pending' }, allowed: ['init', 'side'], blocked: ['main'] },
      { name: 'keeps main blocked while only the sidecar runs', states: { init: 'pending', side: 'running', main: 'pending' }, allowed: ['init', 'side'], blocked: ['main'] },
      { name: 'keeps main blocked while init runs', states: { init: 'running', side: 'running', main: 'pending' }, allowed: ['init', 'side'], blocked: ['main'] },
      { name: 'blocks init and allows sidecar and main once init is dead and OK', states: { init: 'dead', side: 'running', main: 'pending' }, allowed: ['side', 'main'], blocked: ['init'] },
    ],
  },
  {
    name: 'TestCoordinator_MainRunsAfterManyInitTasks',
    steps: [
      { name: 'allows both inits and blocks main while all are pending', states: { init: 'pending', init2: 'pending', main: 'pending' }, allowed: ['init', 'init2'], blocked: ['main'] },
      { name: 'allows main and blocks both inits once both are dead and OK', states: { init: 'dead', init2: 'dead', main: 'pending' }, allowed: ['main'], blocked: ['init', 'init2'] },
    ],
  },
  {
    name: 'TestCoordinator_FailedInitTask',
    steps: [
      { name: 'allows both inits and blocks main while all are pending', states: { init: 'pending', init2: 'pending', main: 'pending' }, allowed: ['init', 'init2'], blocked: ['main'] },
      { name: 'keeps main blocked when one init failed', states: { init: 'dead', init2: 'dead!', main: 'pending' }, allowed: ['init', 'init2'], blocked: ['main'] },
    ],
  },
  {
    name: 'TestCoordinator_SidecarNeverStarts',
    steps: [
      { name: 'allows init and sidecar and blocks main while all are pending', states: { init: 'pending', side: 'pending', main: 'pending' }, allowed: ['init', 'side'], blocked: ['main'] },
      { name: 'keeps main blocked when init is done but the sidecar is still pending', states: { init: 'dead', side: 'pending', main: 'pending' }, allowed: ['init', 'side'], blocked: ['main'] },
    ],
  },
  {
    name: 'TestCoordinator_PoststartStartsAfterMain',
    steps: [
      { name: 'allows the sidecar and blocks main and poststart while all are pending', states: { side: 'pending', main: 'pending', postEph: 'pending' }, allowed: ['side'], blocked: ['main', 'postEph'] },
      { name: 'allows poststart once the sidecar and main run', states: { side: 'running', main: 'running', postEph: 'pending' }, allowed: ['side', 'main', 'postEph'], blocked: [] },
    ],
  },
];

describe('coordinator: Nomad scenarios (coordinator_test.go)', () => {
  for (const scenario of scenarios) {
    describe(scenario.name, () => {
      it('blocks every task before any state is reported', () => {
        const names = Object.keys(scenario.steps[0]!.states);
        expectGates(openStages('init'), [], names);
      });

      scenario.steps.forEach((step, i) => {
        it(step.name, () => {
          // Gates are level-triggered on the coordinator state, so replay the updates that came before.
          let state: CoordinatorState = 'init';
          let open: readonly Stage[] = openStages('init');
          for (const s of scenario.steps.slice(0, i + 1)) ({ state, open } = coordinate(state, tasks(s.states)));
          expectGates(open, step.allowed, step.blocked);
        });
      });
    });
  }
});

describe('coordinator: TestCoordinator_Restore', () => {
  const rows: { name: string; states: Record<string, Status>; state: CoordinatorState; allowed: string[]; blocked: string[] }[] = [
    { name: 'keeps main blocked when a prestart ephemeral task was running', states: { init: 'running', side: 'running', main: 'pending' }, state: 'prestart', allowed: ['init', 'side'], blocked: ['main'] },
    { name: 'blocks the completed prestart ephemeral task and allows main', states: { init: 'dead', side: 'running', main: 'pending' }, state: 'main', allowed: ['side', 'main'], blocked: ['init'] },
    { name: 'allows a running main task', states: { main: 'running' }, state: 'wait_alloc', allowed: ['main'], blocked: [] },
    { name: 'blocks the completed poststart ephemeral task and allows the poststart sidecar', states: { main: 'running', postEph: 'dead', postSide: 'running' }, state: 'wait_alloc', allowed: ['main', 'postSide'], blocked: ['postEph'] },
    { name: 'allows only poststop when main is dead and poststop runs', states: { main: 'dead', poststop: 'running' }, state: 'poststop', allowed: ['poststop'], blocked: ['main'] },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const state = restoredCoordinatorState(tasks(row.states));
      expect(state).toBe(row.state);
      expectGates(openStages(state), row.allowed, row.blocked);
    });
  }

  it('skips init so tasks that were already running are not waited on forever', () => {
    const states = tasks({ side: 'running', main: 'running' });
    expect(coordinate('init', states).state).toBe('init');
    expect(restoredCoordinatorState(states)).toBe('wait_alloc');
  });
});
