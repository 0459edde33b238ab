// The walker's fold of a transition that goes around an empty hook phase (machines/hook-phase.ts's
// `skipEmptyPhase`): drawn as the entry into the phase it skips, so the picture is the one without it, and
// taking it lights the arrow into the phase and the phase's arrow out.
import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { machineDefinitionOf } from '../../src/inspect/definition.ts';
import { chartOf, edgeKeyOf, transitionsOf, type Chart, type ChartOptions } from '../../src/inspect/statechart.ts';
import type { MachineDef, StateNodeDef } from '../../src/inspect/protocol.ts';
import { skipEmptyPhase, hookPhase } from '../../machines/hook-phase.ts';
import { taskRunnerMachine } from '../../machines/task-runner.ts';
import { allocRunnerMachine } from '../../machines/alloc-runner.ts';

/** The definition without its phase skips, phase-ending dones and straight hook calls: what the machine was before them. */
function withoutSkips(def: MachineDef): MachineDef {
  const strip = (s: StateNodeDef): StateNodeDef => ({
    ...s,
    transitions: s.transitions.filter((t) => t.skipsPhase === undefined && t.endsPhase === undefined && t.callsHook === undefined && t.passes === undefined),
    states: s.states.map(strip),
  });
  return { ...def, root: strip(def.root) };
}

/** What a reader sees: every box and every arrow with its label (not which transitions each stands for). */
function picture(c: Chart) {
  return { boxes: [...c.boxes.values()], arrows: c.edges.map((e) => e.id).sort() };
}

const arrowsLitBy = (c: Chart, key: string) => c.edges.filter((e) => e.transitions.includes(key)).map((e) => e.id).sort();

// A transition that also passes a state (`passes`) is drawn by that state's way on: its own rows, below.
const skipsOf = (def: MachineDef) => transitionsOf(def).filter((t) => t.skipsPhase !== undefined && t.passes === undefined);

describe('a transition around an empty hook phase, in the picture', () => {
  const loop = hookPhase('prestart', '#m.running', { call: 'callHook', onError: { actions: [] } });
  const into = skipEmptyPhase('prestart', '#m.prestart', '#m.running');
  const m = createMachine({
    id: 'm',
    initial: 'gate',
    states: {
      gate: { on: { GO: into({ target: '#m.prestart' }) } },
      prestart: loop,
      running: {},
    },
  });
  const def = machineDefinitionOf(m);

  it('carries its marker into the definition, with the phase it skips', () => {
    expect(skipsOf(def).map((t) => [t.source, t.targets, t.skipsPhase])).toEqual([['m.gate', ['m.running'], 'm.prestart']]);
  });

  it('is drawn as the arrow into the phase, not as an arrow of its own', () => {
    const c = chartOf(def);
    expect(c.edges.map((e) => e.id).sort()).toEqual(['m.gate|m.prestart|GO', 'm.prestart|m.running|always [phaseComplete(prestart)]']);
    expect(picture(c)).toEqual(picture(chartOf(withoutSkips(def))));
  });

  it('lights the arrow into the phase and the arrow out of it when taken, folded or not', () => {
    const key = edgeKeyOf(skipsOf(def)[0]!);
    expect(arrowsLitBy(chartOf(def), key)).toEqual(['m.gate|m.prestart|GO', 'm.prestart|m.running|always [phaseComplete(prestart)]']);
    expect(arrowsLitBy(chartOf(def, { folded: () => false }), key)).toEqual(['m.gate|m.prestart|GO', 'm.prestart.next|m.running|always [phaseComplete(prestart)]']);
  });

  it('has a key apart from a transition of the same source, event and target', () => {
    const [skip] = skipsOf(def);
    const { skipsPhase: _, ...plain } = skip!;
    expect(edgeKeyOf(skip!)).not.toBe(edgeKeyOf(plain));
  });

  it('is drawn into the phase by its event when no transition beside it enters the phase', () => {
    const lone = createMachine({
      id: 'm',
      initial: 'gate',
      states: { gate: { on: { GO: into({ target: '#m.prestart' })[0]! } }, prestart: loop, running: {} },
    });
    const c = chartOf(machineDefinitionOf(lone));
    expect(c.edges.map((e) => e.id)).toContain('m.gate|m.prestart|GO');
    expect(c.edges.map((e) => e.id)).not.toContain('m.gate|m.running|GO');
  });
});

const endsOf = (def: MachineDef) => transitionsOf(def).filter((t) => t.endsPhase !== undefined);

// A phase's last hook ends the phase with its done (hook-phase.ts): drawn as the done into `next` and `next`'s
// way out, so the loop's picture is as it was, and taking it lights the way out (and the done, unfolded).
describe("a hook's done that ends its phase, in the picture", () => {
  const m = createMachine({
    id: 'm',
    initial: 'gate',
    states: { gate: { on: { GO: '#m.prestart' } }, prestart: hookPhase('prestart', '#m.running', { call: 'callHook', onError: { actions: [] } }), running: {} },
  });
  const def = machineDefinitionOf(m);
  const views: [string, ChartOptions][] = [['folded', {}], ['unfolded', { folded: () => false }]];

  it('carries its marker into the definition, with its phase', () => {
    expect(endsOf(def).map((t) => [t.source, t.event, t.targets, t.endsPhase])).toEqual([['m.prestart.calling', 'xstate.done.actor.*', ['m.running'], 'm.prestart']]);
  });

  it.each(views)('is the picture without it (%s)', (_v, opts) => {
    expect(picture(chartOf(def, opts))).toEqual(picture(chartOf(withoutSkips(def), opts)));
  });

  it('lights the way out when folded, and the done into `next` too when not', () => {
    const key = edgeKeyOf(endsOf(def)[0]!);
    expect(arrowsLitBy(chartOf(def), key)).toEqual(['m.prestart|m.running|always [phaseComplete(prestart)]']);
    expect(arrowsLitBy(chartOf(def, { folded: () => false }), key)).toEqual([
      'm.prestart.calling|m.prestart.next|actor done [isCurrentHook(prestart)]',
      'm.prestart.next|m.running|always [phaseComplete(prestart)]',
    ]);
  });
});

const callsOf = (def: MachineDef) => transitionsOf(def).filter((t) => t.callsHook !== undefined && t.passes === undefined);
const passingOf = (def: MachineDef) => transitionsOf(def).filter((t) => t.passes !== undefined);

// A transition into a phase whose first hook is one to call lands on its `calling` at once, and so does a hook's
// done whose following hook is one (hook-phase.ts): each drawn as the transition beside it (into the phase, or
// the done into `next`) and `next`'s way to `calling`, so the picture is the loop's as it was.
describe("a transition straight to a hook's call, in the picture", () => {
  const into = skipEmptyPhase('prestart', '#m.prestart', '#m.running');
  const m = createMachine({
    id: 'm',
    initial: 'gate',
    states: { gate: { on: { GO: into({ target: '#m.prestart' }) } }, prestart: hookPhase('prestart', '#m.running', { call: 'callHook', onError: { actions: [] } }), running: {} },
  });
  const def = machineDefinitionOf(m);
  const views: [string, ChartOptions][] = [['folded', {}], ['unfolded', { folded: () => false }]];
  const [enter, following] = callsOf(def);

  it('carries its marker into the definition, with its phase', () => {
    expect(callsOf(def).map((t) => [t.source, t.event, t.targets, t.callsHook])).toEqual([
      ['m.gate', 'GO', ['m.prestart.calling'], 'm.prestart'],
      ['m.prestart.calling', 'xstate.done.actor.*', ['m.prestart.calling'], 'm.prestart'],
    ]);
  });

  it.each(views)('is the picture without it (%s)', (_v, opts) => {
    expect(picture(chartOf(def, opts))).toEqual(picture(chartOf(withoutSkips(def), opts)));
  });

  it("lights the arrow into the phase, and `next`'s way to `calling` too when not folded", () => {
    expect(arrowsLitBy(chartOf(def), edgeKeyOf(enter!))).toEqual(['m.gate|m.prestart|GO']);
    expect(arrowsLitBy(chartOf(def, { folded: () => false }), edgeKeyOf(enter!))).toEqual(['m.gate|m.prestart|GO', 'm.prestart.next|m.prestart.calling|always']);
  });

  it("lights the done into `next` and `next`'s way to `calling` when not folded, and nothing folded (both inside the box)", () => {
    expect(arrowsLitBy(chartOf(def), edgeKeyOf(following!))).toEqual([]);
    expect(arrowsLitBy(chartOf(def, { folded: () => false }), edgeKeyOf(following!))).toEqual([
      'm.prestart.calling|m.prestart.next|actor done [isCurrentHook(prestart)]',
      'm.prestart.next|m.prestart.calling|always',
    ]);
  });
});

describe.each([
  ['task', taskRunnerMachine],
  ['alloc', allocRunnerMachine],
])('the %s runner drawn with its phase skips', (_name, machine) => {
  const def = machineDefinitionOf(machine);
  const views: [string, ChartOptions][] = [['folded', {}], ['unfolded', { folded: () => false }]];

  it.each(views)("lights for each transition that passes a state the arrow into that state and what the state's own way on lights (%s)", (_v, opts) => {
    const c = chartOf(def, opts);
    const nodes = new Map<string, StateNodeDef>();
    const walk = (s: StateNodeDef) => (nodes.set(s.id, s), s.states.forEach(walk));
    walk(def.root);
    for (const t of passingOf(def)) {
      const on = nodes.get(t.passes!)!.transitions.find((u) => u.event === '' && u.passes === undefined && u.skipsPhase === t.skipsPhase && u.callsHook === t.callsHook && u.targets.join() === t.targets.join());
      expect(on, edgeKeyOf(t)).toBeDefined();
      const lit = c.edges.filter((e) => e.transitions.includes(edgeKeyOf(t)));
      const onLit = c.edges.filter((e) => e.transitions.includes(edgeKeyOf(on!)));
      expect(onLit.length, edgeKeyOf(t)).toBeGreaterThan(0);
      for (const e of onLit) expect(lit, edgeKeyOf(t)).toContain(e);
      const into = lit.filter((e) => !onLit.includes(e));
      expect(into.length, edgeKeyOf(t)).toBeGreaterThan(0);
      for (const e of into) expect(e.from === c.shownAs(t.source) && (t.passes === e.to || t.passes!.startsWith(`${e.to}.`)), `${edgeKeyOf(t)}: ${e.id}`).toBe(true);
    }
  });

  it('has skips, phase-ending dones and straight hook calls to fold', () => {
    expect(skipsOf(def).length).toBeGreaterThan(0);
    expect(endsOf(def).length).toBeGreaterThan(0);
    expect(callsOf(def).length).toBeGreaterThan(0);
  });

  it("lights two arrows for each straight hook call taken, unfolded: the one beside it and `next`'s way to `calling`", () => {
    const c = chartOf(def, { folded: () => false });
    for (const t of callsOf(def)) {
      const lit = c.edges.filter((e) => e.transitions.includes(edgeKeyOf(t)));
      expect(lit.map((e) => e.from).sort(), edgeKeyOf(t)).toEqual([t.source, `${t.callsHook}.next`].sort());
      expect(lit.some((e) => e.from === `${t.callsHook}.next` && e.to === `${t.callsHook}.calling`), edgeKeyOf(t)).toBe(true);
    }
  });

  it.each(views)("lights each phase-ending done's way out, and nothing outside its phase (%s)", (_v, opts) => {
    const c = chartOf(def, opts);
    for (const t of endsOf(def)) {
      const lit = c.edges.filter((e) => e.transitions.includes(edgeKeyOf(t)));
      expect(lit.length, edgeKeyOf(t)).toBeGreaterThan(0);
      expect(lit.some((e) => e.to === c.shownAs(t.targets[0]!)), edgeKeyOf(t)).toBe(true);
      for (const e of lit) expect(e.from === c.shownAs(t.endsPhase!) || e.from.startsWith(`${t.endsPhase}.`), edgeKeyOf(t)).toBe(true);
    }
  });

  it.each(views)('is the picture without them (%s)', (_v, opts) => {
    expect(picture(chartOf(def, opts))).toEqual(picture(chartOf(withoutSkips(def), opts)));
  });

  it.each(views)('lights two arrows for each skip taken: into its phase and out of it (%s)', (_v, opts) => {
    const c = chartOf(def, opts);
    for (const t of skipsOf(def)) {
      const lit = c.edges.filter((e) => e.transitions.includes(edgeKeyOf(t)));
      expect(lit, edgeKeyOf(t)).toHaveLength(2);
      const phase = t.skipsPhase!;
      const [into, out] = lit[0]!.from === c.shownAs(t.source) ? lit : [lit[1]!, lit[0]!];
      expect(into!.from, edgeKeyOf(t)).toBe(c.shownAs(t.source));
      // Into the phase's box, or a box whose initial path enters it (the task's `running` for poststart).
      expect(phase === into!.to || phase.startsWith(`${into!.to}.`), edgeKeyOf(t)).toBe(true);
      expect(out!.from === c.shownAs(phase) || out!.from.startsWith(`${phase}.`), edgeKeyOf(t)).toBe(true);
      expect(out!.to, edgeKeyOf(t)).toBe(c.shownAs(t.targets[0]!));
    }
  });
});
