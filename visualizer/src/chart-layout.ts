/**
 * Turns a walked chart (src/inspect/statechart.ts: boxes and arrows, hook loops folded) into an ELK graph
 * and back into absolute boxes and paths for drawing. No DOM here: text is measured by the caller.
 */
import type { ELK, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js';
import type { Chart, ChartBox } from '../../src/inspect/statechart.ts';

/** A state's box, in absolute coordinates. */
export interface StateBox {
  id: string;
  label: string;
  type: ChartBox['type'];
  depth: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** Invoked actors and targetless events, listed inside the box. */
  lines: string[];
  initial: boolean;
  collapsible: boolean;
  folded: boolean;
}

/** A drawn arrow: the path's points and its label's box. */
export interface EdgePath {
  id: string;
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

/** The ELK graph for a walked chart (statechart.ts): boxes as nested nodes, arrows as labelled edges. */
export function elkGraphOf(chart: Chart, measure: MeasureText): ElkNode {
  const box = (id: string) => chart.boxes.get(id)!;
  const ancestors = (id: string): string[] => {
    const out: string[] = [];
    for (let p: string | undefined = id; p !== undefined; p = box(p).parent) out.push(p);
    return out;
  };
  const containers = new Map<string, ElkNode>();
  const toNode = (b: ChartBox): ElkNode => {
    // Room for the fold toggle in front of collapsible titles.
    const title = measure(b.label) + 16 + (b.collapsible ? 14 : 0);
    const textWidth = Math.max(title, ...b.lines.map((l) => measure(l) + 2 * PAD));
    const node: ElkNode = { id: b.id, labels: [{ text: b.label }] };
    if (b.children.length === 0) {
      node.width = Math.max(80, Math.ceil(textWidth));
      node.height = HEADER + b.lines.length * LINE + (b.lines.length > 0 ? 6 : 0);
    } else {
      node.children = b.children.map((c) => toNode(box(c)));
      node.edges = [];
      node.layoutOptions = {
        'elk.padding': `[top=${HEADER + b.lines.length * LINE + 8},left=${PAD},bottom=${PAD},right=${PAD}]`,
        'elk.nodeSize.minimum': `(${Math.ceil(textWidth)}, 40)`,
        'elk.nodeSize.constraints': 'MINIMUM_SIZE',
      };
    }
    containers.set(b.id, node);
    return node;
  };
  const machineNode = toNode(box(chart.root));
  const root: ElkNode = {
    id: '__graph',
    layoutOptions: {
      'elk.algorithm': 'layered',
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
  for (const e of chart.edges) {
    // The edge lives in the deepest box that strictly contains both ends; an arrow from a box into its own
    // descendant (or to itself) lives one level up so ELK sees it enter from outside.
    const up = ancestors(e.from);
    const down = new Set(ancestors(e.to));
    const lca = up.find((a) => down.has(a) && a !== e.from && a !== e.to);
    const container = lca ? containers.get(lca)! : root;
    const edge: ElkExtendedEdge = {
      id: e.id,
      sources: [e.from],
      targets: [e.to],
      labels: [{ text: e.label, width: Math.ceil(measure(e.label)) + 6, height: LINE }],
    };
    (container.edges ??= []).push(edge);
  }
  return root;
}

/** Lays a walked chart out with ELK and flattens the result for drawing. */
export async function layoutChart(chart: Chart, elk: ELK, measure: MeasureText): Promise<ChartLayout> {
  const graph = await elk.layout(elkGraphOf(chart, measure));
  const states: StateBox[] = [];
  const edges: EdgePath[] = [];
  const visit = (n: ElkNode) => {
    const b = chart.boxes.get(n.id);
    if (b) {
      states.push({
        id: b.id, label: b.label, type: b.type, depth: b.depth,
        x: n.x ?? 0, y: n.y ?? 0, width: n.width ?? 0, height: n.height ?? 0,
        lines: b.lines, initial: b.initial, collapsible: b.collapsible, folded: b.folded,
      });
    }
    for (const e of n.edges ?? []) {
      const section = e.sections?.[0];
      if (!section) continue;
      const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
      const l = e.labels?.[0];
      edges.push({
        id: e.id,
        label: l?.text ?? '',
        points,
        labelBox: l && l.x !== undefined ? { x: l.x, y: l.y ?? 0, width: l.width ?? 0, height: l.height ?? 0 } : undefined,
      });
    }
    for (const c of n.children ?? []) visit(c);
  };
  visit(graph);
  return { width: graph.width ?? 0, height: graph.height ?? 0, states, edges };
}
