/**
 * The one statechart walker: a machine definition (protocol.ts's `MachineDef`, read from XState by
 * definition.ts) → the boxes and edges to draw. The CLI's `graph`, the inspection stream and the page all
 * draw through it, so they agree on labels and on what is folded. Pure and DOM-free: the page bundles it.
 *
 * Folding: a compound state drawn folded shows as one box and hides its children; transitions into or out
 * of the children are drawn from or to the box, and transitions inside it disappear. Hook loops (a
 * state whose `meta.hookPhase` is set, or, for machines written before that, the generated `next`/`calling`
 * pair) are folded by default: they are an implementation of "run this phase's hooks", not lifecycle.
 * A transition that goes around an empty hook phase (`skipsPhase`, machines/hook-phase.ts) is drawn as the
 * runner wrote the phase's entry: it joins the arrow of the transition after it into the phase, and the
 * phase's arrows out to where it lands, so the picture is the one without it and taking it lights both.
 * A hook's done that ends its phase at once (`endsPhase`) is drawn the same way: as the done into the phase's
 * `next` and `next`'s way out, so the picture is the loop's. So is a transition that lands on a phase's
 * `calling` at once (`callsHook`: a hook's done that calls the following hook, or an entry into the phase at
 * its first hook's call): as the transition beside it into the phase or its `next`, and `next`'s way to `calling`.
 * A transition that goes on through a state it would have stopped in for a microstep (`passes`: the task's
 * decision straight to its stop hooks, past `terminal.parked`) is drawn as the transition after it into that
 * state, and what that state's own eventless transition to the same target (with the same marks) lights.
 */
import type { MachineDef, StateNodeDef, StateValue, TransitionDef } from './protocol.ts';

/** XState's internal event names, said the way a reader of the lifecycle thinks of them. */
export function eventLabel(event: string): string {
  let m: RegExpExecArray | null;
  if (event === '' || event === 'always') return 'always';
  if ((m = /^xstate\.done\.actor\.(.*)$/.exec(event))) return m[1] === '*' ? 'actor done' : `${m[1]} done`;
  if ((m = /^xstate\.error\.actor\.(.*)$/.exec(event))) return m[1] === '*' ? 'actor error' : `${m[1]} error`;
  if ((m = /^xstate\.snapshot\.(.*)$/.exec(event))) return m[1] === '*' ? 'child snapshot' : `${m[1]} snapshot`;
  if ((m = /^xstate\.after\.([^.]+)\./.exec(event))) return /^\d+$/.test(m[1]!) ? `after ${m[1]}ms` : `after ${m[1]}`;
  if (/^xstate\.done\.state\./.test(event)) return 'done';
  if (event === 'xstate.init') return 'init';
  if (event === 'xstate.stop') return 'stop';
  if (event === '*') return 'any event';
  return event;
}

/** A transition's label: its event in words, then its guard: `always [gateOpen]`. */
export function transitionLabel(t: Pick<TransitionDef, 'event' | 'guard'>): string {
  return t.guard ? `${eventLabel(t.event)} [${t.guard}]` : eventLabel(t.event);
}

/** Events XState sends on its own (start, child snapshots, promise settling, done/error of invoked actors). */
export function isInternalEvent(type: string): boolean {
  return type.startsWith('xstate.');
}

/** The hook phase a compound state runs, if it is a hook loop: `meta.hookPhase`, else the `next`/`calling` shape. */
export function hookPhaseOf(node: StateNodeDef): string | undefined {
  if (node.hookPhase) return node.hookPhase;
  if (node.type !== 'compound' || node.states.length !== 2) return undefined;
  const keys = node.states.map((s) => s.key).sort();
  if (keys[0] !== 'calling' || keys[1] !== 'next') return undefined;
  // The generated loop's `next` asks `phaseComplete(<phase>)`: that names the phase better than the key.
  const next = node.states.find((s) => s.key === 'next')!;
  for (const t of next.transitions) {
    const m = t.guard ? /\(([\w-]+)\)$/.exec(t.guard) : null;
    if (m) return m[1];
  }
  return node.key;
}

/** One drawn state. */
export interface ChartBox {
  id: string;
  key: string;
  /** The box's title: its key, or `poststart hooks` / `updating · update hooks` for a folded hook loop. */
  label: string;
  type: StateNodeDef['type'];
  depth: number;
  parent?: string;
  /** Visible children, in document order (empty when folded or atomic). */
  children: string[];
  /** Has children that can be shown or hidden. */
  collapsible: boolean;
  folded: boolean;
  /** The hook phase, for hook loops. */
  hookPhase?: string;
  /** The initial state of its parent. */
  initial: boolean;
  /** Invoked actors and targetless events, listed inside the box. */
  lines: string[];
}

/** One drawn arrow between visible boxes (several transitions may share one). */
export interface ChartEdge {
  /** `from|to|label`: unique per drawn arrow. */
  id: string;
  from: string;
  to: string;
  label: string;
  /** The transitions it stands for, as `edgeKeyOf` keys, so a taken transition lights its arrow. */
  transitions: string[];
}

/** The walk's result: boxes in document order (parents before children) and arrows. */
export interface Chart {
  machine: string;
  root: string;
  boxes: Map<string, ChartBox>;
  edges: ChartEdge[];
  /** Any state id (drawn or hidden) → the id of the box that shows it. */
  shownAs(stateId: string): string | undefined;
}

/** Which compound states to fold; default: hook loops only. */
export interface ChartOptions {
  folded?: (node: StateNodeDef, hookPhase: string | undefined) => boolean;
}

/**
 * One key per transition and target set, `source|event|target,target`: how a taken edge finds its arrow. A
 * phase skip adds `|skips <phase>`, apart from a transition of the same source, event and target.
 */
export function edgeKeyOf(e: { source: string; event: string; targets: readonly string[]; skipsPhase?: string }): string {
  const key = `${e.source}|${e.event}|${e.targets.join(',')}`;
  return e.skipsPhase === undefined ? key : `${key}|skips ${e.skipsPhase}`;
}

/** Walks `def` into boxes and arrows, folding what `opts.folded` says (hook loops by default). */
export function chartOf(def: MachineDef, opts: ChartOptions = {}): Chart {
  const folded = opts.folded ?? ((_n, phase) => phase !== undefined);
  const boxes = new Map<string, ChartBox>();
  const shown = new Map<string, string>();
  const initials = new Set<string>();
  const nodes: StateNodeDef[] = [];

  const visit = (s: StateNodeDef, depth: number, parent: string | undefined, hiddenUnder: string | undefined) => {
    nodes.push(s);
    if (s.initial) initials.add(s.initial);
    if (hiddenUnder !== undefined) {
      shown.set(s.id, hiddenUnder);
      for (const c of s.states) visit(c, depth + 1, undefined, hiddenUnder);
      return;
    }
    const phase = hookPhaseOf(s);
    const isFolded = s.states.length > 0 && folded(s, phase);
    const box: ChartBox = {
      id: s.id,
      key: s.key,
      label: isFolded && phase !== undefined ? (s.key === phase || s.key === 'hooks' ? `${phase} hooks` : `${s.key} · ${phase} hooks`) : s.key,
      type: isFolded ? 'atomic' : s.type,
      depth,
      parent,
      children: [],
      collapsible: s.states.length > 0 && depth > 0,
      folded: isFolded,
      ...(phase !== undefined ? { hookPhase: phase } : {}),
      initial: false,
      lines: linesOf(s),
    };
    boxes.set(s.id, box);
    shown.set(s.id, s.id);
    if (parent !== undefined) boxes.get(parent)!.children.push(s.id);
    for (const c of s.states) visit(c, depth + 1, isFolded ? undefined : s.id, isFolded ? s.id : undefined);
  };
  visit(def.root, 0, undefined, undefined);
  for (const id of initials) {
    const b = boxes.get(id);
    if (b) b.initial = true;
  }

  const edges = new Map<string, ChartEdge>();
  const drawnAs = new Map<TransitionDef, ChartEdge[]>();
  const skips: { t: TransitionDef; twin: TransitionDef | undefined }[] = [];
  const passing: { t: TransitionDef; twin: TransitionDef | undefined }[] = [];
  const marked = (u: TransitionDef) => standsForTwo(u) || u.passes !== undefined;
  for (const s of nodes) {
    for (const [i, t] of s.transitions.entries()) {
      if (t.passes !== undefined) {
        passing.push({ t, twin: s.transitions.slice(i + 1).find((u) => u.event === t.event && !marked(u)) });
        continue;
      }
      if (standsForTwo(t)) {
        // Its twin: the transition after it on the same event, the one that enters the phase (a skip, or an
        // entry at the first hook's call) or goes to the phase's `next` (a hook's done that ends the phase or
        // calls the following hook).
        skips.push({ t, twin: s.transitions.slice(i + 1).find((u) => u.event === t.event && !marked(u)) });
        continue;
      }
      const from = shown.get(t.source);
      if (from === undefined) continue;
      for (const target of t.targets) {
        const to = shown.get(target);
        if (to === undefined) continue;
        // Inside a folded box both ends are the box: that loop is what folding hides.
        if (from === to && (from !== t.source || to !== target)) continue;
        const label = transitionLabel(t);
        const id = `${from}|${to}|${label}`;
        const key = edgeKeyOf(t);
        let e = edges.get(id);
        if (e) {
          if (!e.transitions.includes(key)) e.transitions.push(key);
        } else edges.set(id, (e = { id, from, to, label, transitions: [key] }));
        drawnAs.set(t, [...(drawnAs.get(t) ?? []), e]);
      }
    }
  }
  for (const { t, twin } of skips) {
    const key = edgeKeyOf(t);
    const phase = (t.skipsPhase ?? t.endsPhase ?? t.callsHook)!;
    const inside = (id: string) => id === phase || id.startsWith(`${phase}.`);
    // A phase-ending done's twin, inside the phase, is hidden when the phase is folded: then only the way out shows.
    const ways = [...(twin ? (drawnAs.get(twin) ?? []) : [])];
    const from = shown.get(t.source);
    const to = shown.get(phase);
    if (ways.length === 0 && t.skipsPhase !== undefined && from !== undefined && to !== undefined) {
      // No transition into the phase beside it: drawn on its own into the phase's box, by its event.
      const label = eventLabel(t.event);
      const id = `${from}|${to}|${label}`;
      let e = edges.get(id);
      if (!e) edges.set(id, (e = { id, from, to, label, transitions: [] }));
      ways.push(e);
    }
    // The phase's way out to where the skip lands: its `always` when complete (not a failing hook's error); for
    // a `callsHook`, `next`'s `always` to `calling`.
    for (const [u, arrows] of drawnAs) if (u.event === '' && inside(u.source) && u.targets.some((x) => t.targets.includes(x))) ways.push(...arrows);
    for (const e of ways) if (!e.transitions.includes(key)) e.transitions.push(key);
  }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const sameMarks = (t: TransitionDef, u: TransitionDef) => t.skipsPhase === u.skipsPhase && t.callsHook === u.callsHook && t.endsPhase === u.endsPhase;
  for (const { t, twin } of passing) {
    const key = edgeKeyOf(t);
    const ways = [...(twin ? (drawnAs.get(twin) ?? []) : [])];
    // The passed state's way on: its eventless transition to the same target, with what that one lights.
    const on = byId.get(t.passes!)?.transitions.find((u) => u.event === '' && u.passes === undefined && sameMarks(t, u) && u.targets.join() === t.targets.join());
    if (on) {
      const onKey = edgeKeyOf(on);
      for (const e of edges.values()) if (e.transitions.includes(onKey) && !ways.includes(e)) ways.push(e);
    }
    for (const e of ways) if (!e.transitions.includes(key)) e.transitions.push(key);
  }
  return { machine: def.id, root: def.root.id, boxes, edges: [...edges.values()], shownAs: (id) => shown.get(id) };
}

/** A transition drawn as two others (its twin, then the phase's eventless way on): see the header. */
function standsForTwo(t: TransitionDef): boolean {
  return t.skipsPhase !== undefined || t.endsPhase !== undefined || t.callsHook !== undefined;
}

/** What a box lists: what it invokes, then the events it handles without leaving. */
function linesOf(s: StateNodeDef): string[] {
  const lines = s.invoke.map((id) => `invoke ${id}`);
  const internal = new Set(s.transitions.filter((t) => t.targets.length === 0).map((t) => transitionLabel({ event: t.event })));
  for (const e of internal) lines.push(e);
  return lines;
}

const transitionLists = new WeakMap<MachineDef, TransitionDef[]>();

/** Every transition of `def` in document order (a node's own, then its children's): what edge indices point into. */
export function transitionsOf(def: MachineDef): TransitionDef[] {
  const cached = transitionLists.get(def);
  if (cached) return cached;
  const out: TransitionDef[] = [];
  transitionLists.set(def, out);
  const walk = (s: StateNodeDef) => {
    out.push(...s.transitions);
    for (const c of s.states) walk(c);
  };
  walk(def.root);
  return out;
}

/** The ids of every active state node for a state value (ancestors included, each once), as XState's would be. */
export function activeNodeIdsOf(def: MachineDef, value: StateValue): string[] {
  const out: string[] = [];
  const walk = (node: StateNodeDef, v: StateValue | undefined) => {
    out.push(node.id);
    if (node.type === 'parallel') {
      for (const c of node.states) walk(c, typeof v === 'object' ? v[c.key] : undefined);
      return;
    }
    if (v === undefined) return;
    const key = typeof v === 'string' ? v : Object.keys(v)[0];
    const child = node.states.find((c) => c.key === key);
    if (child) walk(child, typeof v === 'string' ? undefined : v[key!]);
  };
  walk(def.root, value);
  return out;
}
