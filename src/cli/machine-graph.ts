/**
 * `allocrun graph`'s output: a machine's statechart as JSON, or drawn as a mermaid `stateDiagram-v2`.
 * Both come from the one walker (src/inspect/definition.ts reads the machine, src/inspect/statechart.ts
 * folds it into boxes and arrows), so the CLI draws what the visualizer draws. Pure: no I/O.
 */
import type { AnyStateMachine } from 'xstate';
import { machineDefinitionOf } from '../inspect/definition.ts';
import type { StateNodeDef } from '../inspect/protocol.ts';
import { chartOf, eventLabel, transitionLabel, type Chart, type ChartBox } from '../inspect/statechart.ts';

export { eventLabel };

/** One transition: the event (`always` when eventless), its guard and the states it enters; no targets = actions only. */
export interface GraphTransition {
  event: string;
  /** A short human label: `KILL`, `driver:start done`, `always [gateOpen]`. */
  label: string;
  guard?: string;
  targets: string[];
  actions: string[];
  reenter: boolean;
  /** Goes around this empty hook phase (its state id); drawn as entering it. */
  skipsPhase?: string;
  /** A hook's done that ends this hook phase (its state id) at once; drawn as the done and the phase's way out. */
  endsPhase?: string;
  /** Lands on this hook phase's (its state id) `calling` at once; drawn as the transition into its `next` and `next`'s way on. */
  callsHook?: string;
  /** Goes on through this state (its id) without stopping there; drawn as the transition into it and its way on. */
  passes?: string;
}

/** One state node with its children, by key. */
export interface GraphState {
  id: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  initial?: string;
  description?: string;
  /** Set on hook loops, which `toMermaid` folds into one box. */
  hookPhase?: string;
  entry: string[];
  exit: string[];
  invoke: string[];
  tags: string[];
  transitions: GraphTransition[];
  states: Record<string, GraphState>;
}

/** The graph of a whole machine: its root state node. */
export interface MachineGraph {
  machine: string;
  root: GraphState;
}

/** Reads the statechart of `machine` into a MachineGraph. */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  return { machine: machine.id, root: graphStateOf(machineDefinitionOf(machine).root) };
}

function graphStateOf(s: StateNodeDef): GraphState {
  const states: Record<string, GraphState> = {};
  for (const c of s.states) states[c.key] = graphStateOf(c);
  return {
    id: s.id,
    key: s.key,
    type: s.type,
    ...(s.initial ? { initial: s.initial } : {}),
    ...(s.description ? { description: s.description } : {}),
    ...(s.hookPhase ? { hookPhase: s.hookPhase } : {}),
    entry: s.entry,
    exit: s.exit,
    invoke: s.invoke,
    tags: s.tags,
    transitions: s.transitions.map((t) => ({
      event: t.event === '' ? 'always' : t.event,
      label: transitionLabel(t),
      ...(t.guard ? { guard: t.guard } : {}),
      targets: t.targets,
      actions: t.actions,
      reenter: t.reenter,
      ...(t.skipsPhase ? { skipsPhase: t.skipsPhase } : {}),
      ...(t.endsPhase ? { endsPhase: t.endsPhase } : {}),
      ...(t.callsHook ? { callsHook: t.callsHook } : {}),
      ...(t.passes ? { passes: t.passes } : {}),
    })),
    states,
  };
}

function defOf(s: GraphState): StateNodeDef {
  return {
    id: s.id, key: s.key, type: s.type, ...(s.initial ? { initial: s.initial } : {}), ...(s.hookPhase ? { hookPhase: s.hookPhase } : {}),
    states: Object.values(s.states).map(defOf),
    transitions: s.transitions.map((t) => ({ event: t.event === 'always' ? '' : t.event, source: s.id, targets: t.targets, actions: t.actions, reenter: t.reenter, ...(t.guard ? { guard: t.guard } : {}), ...(t.skipsPhase ? { skipsPhase: t.skipsPhase } : {}), ...(t.endsPhase ? { endsPhase: t.endsPhase } : {}), ...(t.callsHook ? { callsHook: t.callsHook } : {}), ...(t.passes ? { passes: t.passes } : {}) })),
    invoke: s.invoke, entry: s.entry, exit: s.exit, tags: s.tags,
  };
}

/** How to draw: `fold: false` draws every hook loop's inner `next`/`calling` states too. */
export interface MermaidOptions {
  fold?: boolean;
}

/**
 * Draws the graph as mermaid `stateDiagram-v2`: the root and every compound or parallel state as a
 * composite (parallel regions split by `--`), initial states from `[*]`, final states to `[*]`, and one
 * arrow per targeted transition, written inside the innermost composite holding both ends. Transitions
 * without a target only run actions, so they are left out.
 */
export function toMermaid(graph: MachineGraph, opts: MermaidOptions = {}): string {
  const chart: Chart = chartOf({ id: graph.machine, root: defOf(graph.root) }, opts.fold === false ? { folded: () => false } : {});
  const box = (id: string) => chart.boxes.get(id)!;
  const alias = aliasesOf([...chart.boxes.keys()]);
  const ancestors = (id: string): string[] => {
    const out: string[] = [];
    for (let cur: string | undefined = id; cur !== undefined; cur = box(cur).parent) out.push(cur);
    return out;
  };
  // Arrows go in the innermost composite holding both ends without being one of them (a state's arrow to
  // its own child is drawn from outside it); parallel states hold only their regions, so one level up.
  // '' is the top level, outside the root.
  const hostOf = (source: string, target: string): string => {
    const targetChain = ancestors(target);
    let host: string | undefined = ancestors(source).find((a) => targetChain.includes(a));
    if (host === source || host === target) host = box(host!).parent;
    while (host !== undefined && box(host).type === 'parallel') host = box(host).parent;
    return host ?? '';
  };
  const edges = new Map<string, string[]>(); // host box id → arrow lines
  for (const e of chart.edges) {
    const host = hostOf(e.from, e.to);
    const list = edges.get(host) ?? [];
    list.push(`${alias.get(e.from)} --> ${alias.get(e.to)} : ${escapeLabel(e.label)}`);
    edges.set(host, list);
  }
  // The chart lists arrows by source state in document order; mermaid wants each composite's own together.
  const lines = ['stateDiagram-v2'];
  const emit = (s: ChartBox, depth: number) => {
    const pad = '  '.repeat(depth);
    const a = alias.get(s.id)!;
    if (s.children.length === 0) {
      lines.push(`${pad}state "${escapeName(s.label)}" as ${a}`);
      return;
    }
    lines.push(`${pad}state "${escapeName(s.label)}" as ${a} {`);
    const children = s.children.map(box);
    if (s.type === 'parallel') {
      children.forEach((c, i) => {
        if (i > 0) lines.push(`${pad}  --`);
        emit(c, depth + 1);
      });
    } else {
      const initial = children.find((c) => c.initial);
      if (initial) lines.push(`${pad}  [*] --> ${alias.get(initial.id)}`);
      for (const c of children) emit(c, depth + 1);
      for (const c of children) if (c.type === 'final') lines.push(`${pad}  ${alias.get(c.id)} --> [*]`);
    }
    for (const e of edges.get(s.id) ?? []) lines.push(`${pad}  ${e}`);
    lines.push(`${pad}}`);
  };
  lines.push('  [*] --> ' + alias.get(chart.root));
  emit(box(chart.root), 1);
  // Arrows from the root itself (SHUTDOWN from any state) are drawn from the root composite.
  for (const e of edges.get('') ?? []) lines.push(`  ${e}`);
  return `${lines.join('\n')}\n`;
}

/** Mermaid ids may not hold `.`, `-`, `:` or spaces: map every state id to a unique identifier. */
function aliasesOf(ids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const used = new Set<string>();
  for (const id of ids) {
    let a = id.replace(/[^A-Za-z0-9_]/g, '_');
    if (/^\d/.test(a)) a = `s_${a}`;
    let unique = a;
    for (let n = 2; used.has(unique); n++) unique = `${a}_${n}`;
    used.add(unique);
    out.set(id, unique);
  }
  return out;
}

/** Mermaid ends a label at `:` or `;` and treats `#` as a comment: write them as its entity codes. */
function escapeLabel(label: string): string {
  return label.replace(/[#:;]/g, (c) => `#${c.charCodeAt(0)};`);
}

function escapeName(name: string): string {
  return name.replace(/"/g, '#quot;');
}
