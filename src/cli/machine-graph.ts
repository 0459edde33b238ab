/**
 * A machine's statechart as data, read from its StateNodes (not `toJSON()`, which leaves out eventless
 * `always` transitions), and drawn as a mermaid `stateDiagram-v2`. Pure: no I/O.
 */
import type { AnyStateMachine, StateNode } from 'xstate';

type AnyNode = StateNode<any, any>;
type AnyTransition = NonNullable<AnyNode['always']>[number];

/** One transition: the event (or `always`), its guard and the states it enters; no targets = actions only. */
export interface GraphTransition {
  event: string;
  /** A short human label: `KILL`, `driver:start done`, `always [gateOpen]`. */
  label: string;
  guard?: string;
  targets: string[];
  actions: string[];
  reenter: boolean;
}

/** One state node with its children, by key. */
export interface GraphState {
  id: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  initial?: string;
  description?: string;
  entry: string[];
  exit: string[];
  invoke: { id: string; src: string }[];
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
  return { machine: machine.id, root: stateOf(machine.root as AnyNode) };
}

function stateOf(node: AnyNode): GraphState {
  const transitions: GraphTransition[] = [];
  for (const [, defs] of node.transitions) for (const t of defs) transitions.push(transitionOf(t, t.eventType));
  for (const t of node.always ?? []) transitions.push(transitionOf(t, 'always'));
  const states: Record<string, GraphState> = {};
  for (const [key, child] of Object.entries(node.states)) states[key] = stateOf(child as AnyNode);
  const initialTarget = node.type === 'compound' ? node.initial.target[0] : undefined;
  return {
    id: node.id,
    key: node.key,
    type: node.type,
    ...(initialTarget ? { initial: initialTarget.id } : {}),
    ...(node.description ? { description: node.description } : {}),
    entry: node.entry.map(actionName),
    exit: node.exit.map(actionName),
    invoke: node.invoke.map((i) => ({ id: i.id, src: typeof i.src === 'string' ? i.src : (i.src as { id?: string }).id ?? 'inline' })),
    tags: [...node.tags],
    transitions,
    states,
  };
}

function transitionOf(t: AnyTransition, event: string): GraphTransition {
  const guard = t.guard === undefined ? undefined : guardName(t.guard);
  const label = `${eventLabel(event)}${guard ? ` [${guard}]` : ''}`;
  return {
    event,
    label,
    ...(guard ? { guard } : {}),
    targets: (t.target ?? []).map((s) => s.id),
    actions: t.actions.map(actionName),
    reenter: t.reenter,
  };
}

/** XState's internal event names, said the way a reader of the lifecycle thinks of them. */
export function eventLabel(event: string): string {
  let m: RegExpExecArray | null;
  if ((m = /^xstate\.done\.actor\.(.*)$/.exec(event))) return m[1] === '*' ? 'actor done' : `${m[1]} done`;
  if ((m = /^xstate\.error\.actor\.(.*)$/.exec(event))) return m[1] === '*' ? 'actor error' : `${m[1]} error`;
  if ((m = /^xstate\.snapshot\.(.*)$/.exec(event))) return m[1] === '*' ? 'child snapshot' : `${m[1]} snapshot`;
  if ((m = /^xstate\.after\.([^.]+)\./.exec(event))) return /^\d+$/.test(m[1]!) ? `after ${m[1]}ms` : `after ${m[1]}`;
  if (/^xstate\.done\.state\./.test(event)) return 'done';
  if (event === '*') return 'any event';
  return event;
}

function guardName(g: unknown): string {
  if (typeof g === 'string') return g;
  if (typeof g === 'function') return g.name && g.name !== 'guard' ? g.name : 'inline';
  const obj = g as { type?: string; params?: unknown };
  if (obj && typeof obj.type === 'string') {
    const params = obj.params && typeof obj.params === 'object' ? Object.values(obj.params as Record<string, unknown>) : [];
    return params.length > 0 ? `${obj.type}(${params.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join(', ')})` : obj.type;
  }
  return 'inline';
}

function actionName(a: unknown): string {
  if (typeof a === 'string') return a;
  if (typeof a === 'function') return (a as { type?: string }).type ?? (a.name || 'inline');
  const obj = a as { type?: string };
  return obj && typeof obj.type === 'string' ? obj.type : 'inline';
}

/**
 * Draws the graph as mermaid `stateDiagram-v2`: the root and every compound or parallel state as a
 * composite (parallel regions split by `--`), initial states from `[*]`, final states to `[*]`, and one
 * arrow per targeted transition, written inside the innermost composite holding both ends. Transitions
 * without a target only run actions, so they are left out.
 */
export function toMermaid(graph: MachineGraph): string {
  const byId = new Map<string, { state: GraphState; parent?: string }>();
  const index = (s: GraphState, parent?: string) => {
    byId.set(s.id, { state: s, parent });
    for (const c of Object.values(s.states)) index(c, s.id);
  };
  index(graph.root);

  const alias = aliasesOf([...byId.keys()]);
  const edges = new Map<string, string[]>(); // host state id → arrow lines
  const ancestors = (id: string): string[] => {
    const out: string[] = [];
    for (let cur: string | undefined = id; cur !== undefined; cur = byId.get(cur)?.parent) out.push(cur);
    return out;
  };
  // Arrows go in the innermost composite holding both ends without being one of them (a state's arrow to
  // its own child is drawn from outside it); parallel states hold only their regions, so one level up.
  // '' is the top level, outside the root.
  const hostOf = (source: string, target: string): string => {
    const targetChain = ancestors(target);
    let host: string | undefined = ancestors(source).find((a) => targetChain.includes(a));
    if (host === source || host === target) host = byId.get(host!)?.parent;
    while (host !== undefined && byId.get(host)!.state.type === 'parallel') host = byId.get(host)!.parent;
    return host ?? '';
  };
  for (const { state } of byId.values()) {
    for (const t of state.transitions) {
      for (const target of t.targets) {
        const host = hostOf(state.id, target);
        const list = edges.get(host) ?? [];
        list.push(`${alias.get(state.id)} --> ${alias.get(target)} : ${escapeLabel(t.label)}`);
        edges.set(host, list);
      }
    }
  }

  const lines = ['stateDiagram-v2'];
  const emit = (s: GraphState, depth: number) => {
    const pad = '  '.repeat(depth);
    const a = alias.get(s.id)!;
    const children = Object.values(s.states);
    if (children.length === 0) {
      lines.push(`${pad}state "${escapeName(s.key)}" as ${a}`);
      return;
    }
    lines.push(`${pad}state "${escapeName(s.key)}" as ${a} {`);
    if (s.type === 'parallel') {
      children.forEach((c, i) => {
        if (i > 0) lines.push(`${pad}  --`);
        emit(c, depth + 1);
      });
    } else {
      if (s.initial) lines.push(`${pad}  [*] --> ${alias.get(s.initial)}`);
      for (const c of children) emit(c, depth + 1);
      for (const c of children) if (c.type === 'final') lines.push(`${pad}  ${alias.get(c.id)} --> [*]`);
    }
    for (const e of edges.get(s.id) ?? []) lines.push(`${pad}  ${e}`);
    lines.push(`${pad}}`);
  };
  lines.push('  [*] --> ' + alias.get(graph.root.id));
  emit(graph.root, 1);
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
