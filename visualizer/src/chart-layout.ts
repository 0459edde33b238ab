/**
 * Turns a machine definition into an ELK graph (states as nested nodes, transitions as labelled edges)
 * and back into absolute boxes and paths for drawing. No DOM here: text is measured by the caller.
 */
import type { ELK, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js';
import type { MachineDef, StateNodeDef, TransitionDef } from '../../src/inspect/protocol.ts';
import { edgeKey } from './edge-key.ts';
import { eventLabel } from './labels.ts';

/** A state's box, in absolute coordinates. */
export interface StateBox {
  id: string;
  key: string;
  type: StateNodeDef['type'];
  depth: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** Invoked actors and targetless events, listed inside the box. */
  lines: string[];
  initial: boolean;
}

/** A drawn transition: the path's points and its label's box. */
export interface EdgePath {
  key: string;
  label: string;
  points: { x: number; y: number }[];
  labelBox?: { x: number; y: number; width: number; height: number };
}

/** The laid-out chart. */
export interface ChartLayout {
  width: number;
  height: number;
  states: StateBox[];
  edges: EdgePath[];
}

/** Measures a label in the chart's font; the page uses a canvas, tests an estimate. */
export type MeasureText = (text: string) => number;

const LINE = 14;
const HEADER = 24;
const PAD = 10;

function transitionLabel(t: TransitionDef): string {
  const base = eventLabel(t.event);
  return t.guard ? `${base} [${t.guard}]` : base;
}

/** What a box lists: what it invokes, then the events it handles without leaving. */
function linesOf(s: StateNodeDef): string[] {
  const lines = s.invoke.map((id) => `invoke ${id}`);
  const internal = new Set(s.transitions.filter((t) => t.targets.length === 0).map((t) => eventLabel(t.event)));
  for (const e of internal) lines.push(e);
  return lines;
}

/** The ELK graph for `def`, with the edges to lay out keyed by `edgeKey`. */
export function elkGraphOf(def: MachineDef, measure: MeasureText): ElkNode {
  const parentOf = new Map<string, string | undefined>();
  const index = (s: StateNodeDef, parent?: string) => {
    parentOf.set(s.id, parent);
    for (const c of s.states) index(c, s.id);
  };
  index(def.root);
  const ancestors = (id: string): string[] => {
    const out: string[] = [];
    for (let p: string | undefined = id; p !== undefined; p = parentOf.get(p)) out.push(p);
    return out;
  };

  const containers = new Map<string, ElkNode>();
  const toNode = (s: StateNodeDef): ElkNode => {
    const lines = linesOf(s);
    const textWidth = Math.max(measure(s.key) + 16, ...lines.map((l) => measure(l) + 2 * PAD));
    const node: ElkNode = { id: s.id, labels: [{ text: s.key }] };
    if (s.states.length === 0) {
      node.width = Math.max(80, Math.ceil(textWidth));
      node.height = HEADER + lines.length * LINE + (lines.length > 0 ? 6 : 0);
    } else {
      node.children = s.states.map(toNode);
      node.edges = [];
      node.layoutOptions = {
        'elk.padding': `[top=${HEADER + lines.length * LINE + 8},left=${PAD},bottom=${PAD},right=${PAD}]`,
        'elk.nodeSize.minimum': `(${Math.ceil(textWidth)}, 40)`,
        'elk.nodeSize.constraints': 'MINIMUM_SIZE',
      };
    }
    containers.set(s.id, node);
    return node;
  };
  const machineNode = toNode(def.root);
  const root: ElkNode = {
    id: '__graph',
    layoutOptions: {
      'elk.algorithm': 'layered',
      // Top-down suits nested lifecycles: the task chart is about 2000×3200 this way, 6700×900 sideways.
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      // Absolute coordinates for every shape and edge, so drawing needs no offsets.
      'elk.json.shapeCoords': 'ROOT',
      'elk.json.edgeCoords': 'ROOT',
      'elk.layered.spacing.nodeNodeBetweenLayers': '36',
      'elk.spacing.nodeNode': '18',
      'elk.spacing.edgeLabel': '2',
      'elk.edgeLabels.placement': 'CENTER',
      'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
    },
    children: [machineNode],
    edges: [],
  };

  const walk = (s: StateNodeDef) => {
    for (const t of s.transitions) {
      if (t.targets.length === 0) continue;
      const label = transitionLabel(t);
      const key = edgeKey({ source: t.source, event: t.event, targets: t.targets });
      t.targets.forEach((target, i) => {
        // The edge lives in the deepest state that strictly contains both ends; a transition from a state
        // into its own descendant (or to itself) lives one level up so ELK sees it enter from outside.
        const up = ancestors(t.source);
        const down = new Set(ancestors(target));
        const lca = up.find((a) => down.has(a) && a !== t.source && a !== target);
        const container = lca ? containers.get(lca)! : root;
        const edge: ElkExtendedEdge = {
          id: `${key}#${i}`,
          sources: [t.source],
          targets: [target],
          labels: [{ text: label, width: Math.ceil(measure(label)) + 6, height: LINE }],
        };
        (container.edges ??= []).push(edge);
      });
    }
    for (const c of s.states) walk(c);
  };
  walk(def.root);
  return root;
}

/** Lays `def` out with ELK and flattens the result for drawing. */
export async function layoutChart(def: MachineDef, elk: ELK, measure: MeasureText): Promise<ChartLayout> {
  const graph = await elk.layout(elkGraphOf(def, measure));
  const byId = new Map<string, StateNodeDef>();
  const initials = new Set<string>();
  const index = (s: StateNodeDef) => {
    byId.set(s.id, s);
    if (s.initial) initials.add(s.initial);
    for (const c of s.states) index(c);
  };
  index(def.root);

  const states: StateBox[] = [];
  const edges: EdgePath[] = [];
  const visit = (n: ElkNode, depth: number) => {
    const s = byId.get(n.id);
    if (s) {
      states.push({
        id: s.id, key: s.key, type: s.type, depth,
        x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0,
        lines: linesOf(s), initial: initials.has(s.id),
      });
    }
    for (const e of n.edges ?? []) {
      const section = e.sections?.[0];
      if (!section) continue;
      const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
      const l = e.labels?.[0];
      edges.push({
        key: e.id.slice(0, e.id.lastIndexOf('#')),
        label: l?.text ?? '',
        points,
        labelBox: l && l.x !== undefined ? { x: l.x, y: l.y ?? 0, width: l.width ?? 0, height: l.height ?? 0 } : undefined,
      });
    }
    for (const c of n.children ?? []) visit(c, s ? depth + 1 : depth);
  };
  visit(graph, 0);
  return { width: graph.width ?? 0, height: graph.height ?? 0, states, edges };
}
