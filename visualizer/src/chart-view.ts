/**
 * The selected actor's statechart: laid out once per machine (ELK is slow enough to cache), redrawn only
 * when the machine changes; each transition just moves the `active` classes and replays the edge animation.
 */
import type { ELK } from 'elkjs/lib/elk-api.js';
import type { MachineDef } from '../../src/inspect/protocol.ts';
import { layoutChart, type ChartLayout, type MeasureText } from './chart-layout.ts';
import { chartSvg } from './chart-svg.ts';
import { edgeKey } from './edge-key.ts';
import { esc } from './html.ts';
import type { ActorView, Model } from './model.ts';

/** `fit` shrinks the whole chart into the pane; `auto` fits its width but stays readable; a number is a scale. */
export type Zoom = 'fit' | 'auto' | number;

// Below this, labels stop being readable; `auto` scrolls instead.
const MIN_AUTO_SCALE = 0.75;

/** Draws the selected actor into `el`. */
export function createChartView(el: HTMLElement, elk: ELK, measure: MeasureText) {
  const layouts = new Map<string, Promise<ChartLayout>>();
  let shownMachine: string | undefined;
  let shownLayout: ChartLayout | undefined;
  let shownSession: string | undefined;
  let shownVersion = -1;
  let generation = 0;
  let zoom: Zoom = 'auto';
  let follow = true;
  let stateEls = new Map<string, SVGGElement>();
  let edgeEls = new Map<string, SVGGElement[]>();
  let active = new Set<string>();

  const layoutOf = (machineId: string, def: MachineDef): Promise<ChartLayout> => {
    let p = layouts.get(machineId);
    if (!p) {
      p = layoutChart(def, elk, measure);
      layouts.set(machineId, p);
    }
    return p;
  };

  const applyZoom = () => {
    const svg = el.querySelector('svg');
    if (!svg || !shownLayout) return;
    const fitWidth = (el.clientWidth - 8) / shownLayout.width;
    const scale =
      zoom === 'fit' ? Math.min(1, fitWidth, (el.clientHeight - 8) / shownLayout.height)
      : zoom === 'auto' ? Math.min(1, Math.max(MIN_AUTO_SCALE, fitWidth))
      : zoom;
    svg.setAttribute('width', String(Math.ceil(shownLayout.width * scale)));
    svg.setAttribute('height', String(Math.ceil(shownLayout.height * scale)));
    el.dataset.scale = scale.toFixed(2);
    scrollToActive();
  };

  // Keeps the deepest active state in view when the chart is larger than the pane.
  const scrollToActive = () => {
    if (!follow) return;
    const deepest = [...active].filter((id) => stateEls.has(id)).sort((x, y) => y.split('.').length - x.split('.').length)[0];
    if (deepest) stateEls.get(deepest)!.scrollIntoView({ block: 'center', inline: 'center' });
  };

  const highlight = (a: ActorView) => {
    const now = new Set(a.activeNodeIds);
    for (const id of active) if (!now.has(id)) stateEls.get(id)?.classList.remove('active', 'entered');
    for (const id of now) {
      const g = stateEls.get(id);
      if (!g) continue;
      g.classList.add('active');
      if (!active.has(id) && shownVersion >= 0) {
        // Restart the entry animation: drop the class, force a style flush, add it back.
        g.classList.remove('entered');
        void g.getBoundingClientRect();
        g.classList.add('entered');
      }
    }
    active = now;
    for (const list of edgeEls.values()) for (const g of list) g.classList.remove('taken');
    if (shownVersion >= 0) {
      for (const e of a.lastEdges) {
        for (const g of edgeEls.get(edgeKey(e)) ?? []) {
          void g.getBoundingClientRect();
          g.classList.add('taken');
        }
      }
    }
    el.querySelector('svg')?.setAttribute('data-status', a.status);
    scrollToActive();
  };

  const infoCard = (a: ActorView): string => {
    const rows: [string, string][] = [['actor', a.id], ['kind', a.src ?? 'actor'], ['status', a.status]];
    const json = (v: unknown) => `<pre>${esc(JSON.stringify(v, null, 2))}</pre>`;
    return (
      `<div class="info-card" data-session="${esc(a.sessionId)}"><table>${rows.map(([k, v]) => `<tr><th>${k}</th><td>${esc(v)}</td></tr>`).join('')}</table>` +
      (a.output !== undefined ? `<h4>output</h4>${json(a.output)}` : '') +
      (a.error !== undefined ? `<h4>error</h4>${json(a.error)}` : '') +
      '</div>'
    );
  };

  const show = async (m: Model, sessionId: string | undefined): Promise<void> => {
    const a = sessionId ? m.actors.get(sessionId) : undefined;
    const def = a?.machineId ? m.definitions.get(a.machineId) : undefined;
    if (!a || !a.machineId || !def) {
      generation++; // cancels a layout still running for the previous selection
      shownMachine = shownLayout = undefined;
      shownSession = a?.sessionId;
      el.innerHTML = a ? (a.machineId ? '<div class="empty">waiting for the machine definition…</div>' : infoCard(a)) : '<div class="empty">select an actor</div>';
      return;
    }
    if (shownMachine !== a.machineId) {
      const my = ++generation;
      shownMachine = a.machineId;
      el.innerHTML = '<div class="empty">laying out…</div>';
      const layout = await layoutOf(a.machineId, def);
      if (my !== generation) return;
      el.innerHTML = chartSvg(layout, def.id);
      shownLayout = layout;
      stateEls = new Map();
      edgeEls = new Map();
      active = new Set();
      el.querySelectorAll<SVGGElement>('g[data-state]').forEach((g) => stateEls.set(g.dataset.state!, g));
      el.querySelectorAll<SVGGElement>('g[data-edge]').forEach((g) => {
        const k = g.dataset.edge!;
        edgeEls.set(k, [...(edgeEls.get(k) ?? []), g]);
      });
      applyZoom();
      shownVersion = -1;
    }
    // Re-read: the actor may have moved on while the layout ran.
    const latest = m.actors.get(a.sessionId)!;
    if (shownSession !== latest.sessionId) shownVersion = -1;
    if (shownVersion !== latest.version) {
      highlight(latest);
      shownSession = latest.sessionId;
      shownVersion = latest.version;
    }
    el.dataset.session = latest.sessionId;
  };

  return {
    show,
    /** Starts laying out a machine before anyone selects it. */
    prepare(machineId: string, def: MachineDef): void {
      void layoutOf(machineId, def);
    },
    setZoom(z: Zoom): void {
      zoom = z;
      applyZoom();
    },
    zoomBy(factor: number): void {
      const current = Number(el.dataset.scale ?? '1');
      zoom = Math.max(0.2, Math.min(3, current * factor));
      applyZoom();
    },
    setFollow(on: boolean): void {
      follow = on;
      scrollToActive();
    },
    relayout: applyZoom,
  };
}
