/**
 * Reads an XState machine into its definition (protocol.ts's `MachineDef`): the input of the one walker
 * (statechart.ts) behind the CLI's graph, the inspection stream and the page. A machine's structure for drawing. `machine.definition` leaves out `always` transitions and holds live
 * state nodes until stringified, so the tree is walked here into plain, compact JSON.
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import type { MachineDef, StateNodeDef, TransitionDef } from './protocol.ts';

function nameOf(x: unknown): string {
  if (typeof x === 'string') return x;
  if (typeof x === 'function') {
    // Built-in action creators (assign, raise, sendTo…) carry their kind in `type`; others are known by name.
    const type = (x as { type?: unknown }).type;
    return typeof type === 'string' ? type : x.name || 'inline';
  }
  if (typeof x === 'object' && x !== null && typeof (x as { type?: unknown }).type === 'string') return (x as { type: string }).type;
  return 'inline';
}

/** A guard's name, with its params when it has some (`phaseComplete(prestart)`), so guarded arrows read apart. */
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

function transitionOf(t: AnyTransitionDefinition, event: string): TransitionDef {
  const def: TransitionDef = {
    event,
    source: t.source.id,
    targets: (t.target ?? []).map((n) => n.id),
    actions: t.actions.map(nameOf),
    reenter: t.reenter,
  };
  if (t.guard !== undefined) def.guard = guardName(t.guard);
  const skips = (t.meta as { skipsPhase?: unknown } | undefined)?.skipsPhase;
  if (typeof skips === 'string') def.skipsPhase = skips;
  // A hook's done that ends its phase (machines/hook-phase.ts) stands in `<phase>.calling`: the phase is its parent.
  if ((t.meta as { endsPhase?: unknown } | undefined)?.endsPhase === true && t.source.parent) def.endsPhase = t.source.parent.id;
  // A transition straight to a phase's `calling` (machines/hook-phase.ts): the phase is its target's parent.
  const called = t.target?.[0]?.parent;
  if ((t.meta as { callsHook?: unknown } | undefined)?.callsHook === true && called) def.callsHook = called.id;
  const passes = (t.meta as { passes?: unknown } | undefined)?.passes;
  if (typeof passes === 'string') def.passes = passes;
  return def;
}

function nodeOf(node: AnyStateNode): StateNodeDef {
  const transitions: TransitionDef[] = [];
  for (const [event, list] of node.transitions) for (const t of list) transitions.push(transitionOf(t, event));
  for (const t of node.always ?? []) transitions.push(transitionOf(t, ''));
  const def: StateNodeDef = {
    id: node.id,
    key: node.key,
    type: node.type,
    states: Object.values(node.states).map(nodeOf),
    transitions,
    invoke: node.invoke.map((i) => i.id),
    entry: node.entry.map(nameOf),
    exit: node.exit.map(nameOf),
    tags: [...node.tags],
  };
  if (node.type === 'compound') {
    const initial = node.initial.target[0];
    if (initial) def.initial = initial.id;
  }
  if (node.description) def.description = node.description;
  const phase = (node.meta as { hookPhase?: unknown } | undefined)?.hookPhase;
  if (typeof phase === 'string') def.hookPhase = phase;
  return def;
}

/** The drawable structure of `machine`, JSON-safe. */
export function machineDefinitionOf(machine: AnyStateMachine): MachineDef {
  return { id: machine.id, root: nodeOf(machine.root) };
}
