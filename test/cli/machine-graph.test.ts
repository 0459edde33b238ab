import { createMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { eventLabel, machineGraph, toMermaid } from '../../src/cli/machine-graph.ts';

const light = createMachine({
  id: 'light',
  initial: 'green',
  on: { POWER_OFF: '.off' },
  states: {
    green: { on: { TIMER: 'yellow' } },
    yellow: { after: { 500: 'red' } },
    red: {
      initial: 'walk',
      states: {
        walk: { on: { COUNTDOWN: 'wait' } },
        wait: { always: { guard: 'timeUp', target: 'stop' } },
        stop: { type: 'final' },
      },
      onDone: 'green',
    },
    off: { type: 'final' },
    busy: { type: 'parallel', states: { a: {}, b: {} } },
  },
});

describe('machine graph', () => {
  it('reads eventless transitions, which toJSON leaves out', () => {
    const g = machineGraph(light);
    expect(g.root.states.red!.states.wait!.transitions).toEqual([expect.objectContaining({ event: 'always', guard: 'timeUp', targets: ['light.red.stop'] })]);
  });

  it('labels internal events in words', () => {
    expect(eventLabel('xstate.done.actor.driver:start')).toBe('driver:start done');
    expect(eventLabel('xstate.error.actor.*')).toBe('actor error');
    expect(eventLabel('xstate.after.500.light.yellow')).toBe('after 500ms');
    expect(eventLabel('xstate.done.state.light.red')).toBe('done');
    expect(eventLabel('KILL')).toBe('KILL');
  });

  it('draws nested states as composites, with arrows inside the innermost one holding both ends', () => {
    const m = toMermaid(machineGraph(light));
    expect(m).toBe(
      [
        'stateDiagram-v2',
        '  [*] --> light',
        '  state "light" as light {',
        '    [*] --> light_green',
        '    state "green" as light_green',
        '    state "yellow" as light_yellow',
        '    state "red" as light_red {',
        '      [*] --> light_red_walk',
        '      state "walk" as light_red_walk',
        '      state "wait" as light_red_wait',
        '      state "stop" as light_red_stop',
        '      light_red_stop --> [*]',
        '      light_red_walk --> light_red_wait : COUNTDOWN',
        '      light_red_wait --> light_red_stop : always [timeUp]',
        '    }',
        '    state "off" as light_off',
        '    state "busy" as light_busy {',
        '      state "a" as light_busy_a',
        '      --',
        '      state "b" as light_busy_b',
        '    }',
        '    light_off --> [*]',
        '    light_green --> light_yellow : TIMER',
        '    light_yellow --> light_red : after 500ms',
        '    light_red --> light_green : done',
        '  }',
        '  light --> light_off : POWER_OFF',
        '',
      ].join('\n'),
    );
  });

  it("escapes ':' in labels as mermaid entity codes", () => {
    const m = createMachine({ id: 'm', initial: 'a', states: { a: { invoke: { id: 'driver:start', src: 'x', onDone: 'b' } }, b: {} } });
    expect(toMermaid(machineGraph(m))).toContain('m_a --> m_b : driver#58;start done');
  });
});

describe('hook loops in the graph', () => {
  // The generated shape of a hook phase: `next` decides, `calling` runs one hook, back to `next`.
  const loop = (done: string) => ({
    initial: 'next' as const,
    states: {
      next: { always: [{ guard: { type: 'phaseComplete' as const, params: { phase: 'x' } }, target: done }, { target: 'calling' }] },
      calling: { on: { 'xstate.done.actor.*': { target: 'next' }, 'xstate.error.actor.*': { target: '#task.failed' } } },
    },
  });
  const task = createMachine({
    types: {} as { guards: { type: 'phaseComplete'; params: { phase: string } } },
    id: 'task',
    initial: 'prestart',
    states: {
      prestart: loop('#task.running'),
      running: { on: { KILL: 'poststop' } },
      poststop: { ...loop('#task.dead'), meta: { hookPhase: 'poststop' } },
      failed: {},
      dead: { type: 'final' },
    },
  });

  it('folds each hook loop into one box labelled with its phase, keeping the arrows that leave it', () => {
    const m = toMermaid(machineGraph(task));
    // The phase comes from meta.hookPhase, else from the loop's `phaseComplete(<phase>)` guard.
    expect(m).toContain('state "prestart · x hooks" as task_prestart');
    expect(m).toContain('state "poststop hooks" as task_poststop');
    expect(m).not.toContain('task_prestart_next');
    expect(m).not.toContain('task_prestart_calling');
    expect(m).toContain('task_prestart --> task_running : always [phaseComplete(x)]');
    expect(m).toContain('task_prestart --> task_failed : actor error');
    expect(m).toContain('task_poststop --> task_dead : always [phaseComplete(x)]');
    // The loop's own arrows (next → calling → next) are what folding hides.
    expect(m).not.toMatch(/task_prestart --> task_prestart/);
  });

  it('draws the loops unfolded when asked', () => {
    const m = toMermaid(machineGraph(task), { fold: false });
    expect(m).toContain('task_prestart_next --> task_prestart_calling : always');
    expect(m).toContain('state "poststop" as task_poststop {');
  });
});
