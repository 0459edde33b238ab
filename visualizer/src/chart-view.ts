/**
 * The selected actor's statechart, walked by src/inspect/statechart.ts (hook loops folded) and laid out
 * by ELK once per machine and fold set. Compound states fold and unfold from their ⊞/⊟ toggle; drag pans,
 * the wheel zooms around the pointer. Each transition only moves the `active` classes and replays the
 * animation of the arrows it took. The default zoom keeps labels readable and the active state in view.
 */
import type { ELK } from 'elkjs/lib/elk-api.js';
import type { MachineDef } from '../../src/inspect/protocol.ts';
import { chartOf, type Chart } from '../../src/inspect/statechart.ts';
import { layoutChart, type ChartLayout, type MeasureText } from './chart-layout.ts';
import { chartSvg } from './chart-svg.ts';
import { esc } from './html.ts';
import type { ActorView, Model } from './model.ts';

/** `fit` shrinks the whole chart into the pane; `auto` fits its width but stays readable; a number is a scale. */
export type Zoom = 'fit' | 'auto' | number;

// Below this labels stop being readable; `auto` scrolls instead.
const MIN_AUTO_SCALE = 0.8;

/** Draws the selected actor into `el`. */
export function createChartView(el: HTMLElement, elk: ELK, measure: MeasureText) {
  const layouts = new Map<string, Promise<{ chart: Chart; layout: ChartLayout }>>();
  /** Per machine: compound states the user toggled away from their default. */
  const toggled = new Map<string, Set<string>>();
  let shownKey: string | undefined;
  let shown: { chart: Chart; layout: ChartLayout } | undefined;
  let shownMachine: string | undefined;
  let shownSession: string | undefined;
  let shownVersion = -1;
  let generation = 0;
  let zoom: Zoom = 'auto';
  let scale = 1;
  let follow = true;
  let stateEls = new Map<string, SVGGElement>();
  let edgeEls = new Map<string, SVGGElement>();
  let active = new Set<string>();
  let lastModel: Model | undefined;

  const foldKey = (machineId: string) => [...(toggled.get(machineId) ?? [])].sort().join(',');

  const layoutOf = (machineId: string, def: MachineDef) => {
    const flipped = toggled.get(machineId) ?? new Set<string>();
    const key = `${machineId}#${foldKey(machineId)}`;
    let p = layouts.get(key);
    if (!p) {
      // Default: hook loops folded, everything else open; a toggle flips a state's default.
      const chart = chartOf(def, { folded: (n, phase) => (phase !== undefined) !== flipped.has(n.id) });
      p = layoutChart(chart, elk, measure).then((layout) => ({ chart, layout }));
      layouts.set(key, p);
    }
    return { key, promise: p };
  };

  const applyZoom = () => {
    const svg = el.querySelector('svg');
    if (!svg || !shown) return;
    const { width, height } = shown.layout;
    const fitWidth = (el.clientWidth - 8) / width;
    scale =
      zoom === 'fit' ? Math.min(1, fitWidth, (el.clientHeight - 8) / height)
      : zoom === 'auto' ? Math.min(1, Math.max(MIN_AUTO_SCALE, fitWidth))
      : zoom;
    svg.setAttribute('width', String(Math.ceil(width * scale)));
    svg.setAttribute('height', String(Math.ceil(height * scale)));
    el.dataset.scale = scale.toFixed(2);
  };

  // Keeps the deepest active state in view when the chart is larger than the pane.
  const scrollToActive = () => {
    if (!follow || !shown) return;
    let deepest: SVGGElement | undefined;
    let depth = -1;
    for (const id of active) {
      const g = stateEls.get(id);
      const d = id.split('.').length;
      if (g && d > depth) {
        deepest = g;
        depth = d;
      }
    }
    if (!deepest) return;
    const box = deepest.getBoundingClientRect();
    const pane = el.getBoundingClientRect();
    if (box.left < pane.left || box.right > pane.right || box.top < pane.top || box.bottom > pane.bottom) {
      el.scrollLeft += box.left + box.width / 2 - (pane.left + pane.width / 2);
      el.scrollTop += box.top + box.height / 2 - (pane.top + pane.height / 2);
    }
  };

  const highlight = (a: ActorView, animate: boolean) => {
    if (!shown) return;
    const now = new Set<string>();
    for (const id of a.activeNodeIds) {
      const box = shown.chart.shownAs(id);
      if (box) now.add(box);
    }
    const moved = now.size !== active.size || [...now].some((id) => !active.has(id));
    el.querySelector('svg')?.setAttribute('data-status', a.status);
    // A context-only change (most of an alloc's) leaves the chart as it is: no DOM work, no layout.
    if (!moved && a.lastEdges.length === 0) return;
    for (const id of active) if (!now.has(id)) stateEls.get(id)?.classList.remove('active');
    for (const id of now) {
      const g = stateEls.get(id);
      if (!g) continue;
      g.classList.add('active');
      // Web Animations replay without forcing a layout (re-adding a CSS class would need one).
      if (!active.has(id) && animate) g.querySelector('.box')?.animate([{ stroke: '#e37400', strokeWidth: '5px' }, {}], { duration: 1_000, easing: 'ease-out' });
    }
    active = now;
    for (const g of edgeEls.values()) g.classList.remove('taken');
    if (animate && a.lastEdges.length > 0) {
      const taken = new Set(a.lastEdges);
      for (const e of shown.chart.edges) {
        if (!e.transitions.some((t) => taken.has(t))) continue;
        const g = edgeEls.get(e.id);
        if (!g) continue;
        g.classList.add('taken');
        g.querySelector('path')?.animate([{ strokeDashoffset: '0' }, { strokeDashoffset: '-22' }], { duration: 500, iterations: 4 });
      }
    }
    if (moved) scrollToActive();
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
    lastModel = m;
    const a = sessionId ? m.actors.get(sessionId) : undefined;
    const def = a?.machineId ? m.definitions.get(a.machineId) : undefined;
    if (!a || !a.machineId || !def) {
      generation++; // cancels a layout still running for the previous selection
      shownKey = shown = shownMachine = undefined;
      const key = a ? `${a.sessionId}@${a.version}` : '';
      if (el.dataset.info !== key || !key) el.innerHTML = a ? (a.machineId ? '<div class="empty">waiting for the machine definition…</div>' : infoCard(a)) : '<div class="empty">select an actor</div>';
      el.dataset.info = key;
      shownSession = a?.sessionId;
      return;
    }
    el.dataset.info = '';
    const { key, promise } = layoutOf(a.machineId, def);
    if (shownKey !== key) {
      const my = ++generation;
      const first = shownMachine !== a.machineId;
      shownKey = key;
      if (first) el.innerHTML = '<div class="empty">laying out…</div>';
      const result = await promise;
      if (my !== generation) return;
      const keep = first ? undefined : { left: el.scrollLeft, top: el.scrollTop };
      el.innerHTML = chartSvg(result.layout, def.id);
      shown = result;
      shownMachine = a.machineId;
      stateEls = new Map();
      edgeEls = new Map();
      active = new Set();
      el.querySelectorAll<SVGGElement>('g[data-state]').forEach((g) => stateEls.set(g.dataset.state!, g));
      el.querySelectorAll<SVGGElement>('g[data-edge]').forEach((g) => edgeEls.set(g.dataset.edge!, g));
      applyZoom();
      if (keep) {
        el.scrollLeft = keep.left;
        el.scrollTop = keep.top;
      }
      shownVersion = -1;
    }
    // Re-read: the actor may have moved on while the layout ran.
    const latest = lastModel.actors.get(a.sessionId) ?? a;
    if (shownSession !== latest.sessionId) shownVersion = -1;
    if (shownVersion !== latest.version) {
      highlight(latest, shownVersion >= 0);
      shownSession = latest.sessionId;
      shownVersion = latest.version;
    }
    el.dataset.session = latest.sessionId;
  };

  // Folding: the toggle in a compound state's title.
  el.addEventListener('click', (e) => {
    const t = (e.target as Element).closest('[data-fold]');
    if (!t || !shownMachine || dragged) return;
    const id = t.getAttribute('data-fold')!;
    const set = toggled.get(shownMachine) ?? new Set<string>();
    if (set.has(id)) set.delete(id);
    else set.add(id);
    toggled.set(shownMachine, set);
    if (lastModel && shownSession) void show(lastModel, shownSession);
  });

  // Drag to pan.
  let drag: { x: number; y: number; left: number; top: number } | undefined;
  let dragged = false;
  el.addEventListener('mousedown', (e) => {
    if (e.button !== 0 || (e.target as Element).closest('[data-fold]')) return;
    drag = { x: e.clientX, y: e.clientY, left: el.scrollLeft, top: el.scrollTop };
    dragged = false;
  });
  window.addEventListener('mousemove', (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x;
    const dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) {
      dragged = true;
      follow = false;
      el.classList.add('panning');
    }
    el.scrollLeft = drag.left - dx;
    el.scrollTop = drag.top - dy;
  });
  window.addEventListener('mouseup', () => {
    drag = undefined;
    el.classList.remove('panning');
    setTimeout(() => (dragged = false), 0);
  });

  // Wheel to zoom, around the pointer.
  el.addEventListener(
    'wheel',
    (e) => {
      if (!shown) return;
      e.preventDefault();
      const rect = el.getBoundingClientRect();
      const px = e.clientX - rect.left + el.scrollLeft;
      const py = e.clientY - rect.top + el.scrollTop;
      const before = scale;
      zoom = Math.max(0.15, Math.min(3, before * Math.exp(-e.deltaY * 0.0015)));
      follow = false;
      applyZoom();
      const k = scale / before;
      el.scrollLeft = px * k - (e.clientX - rect.left);
      el.scrollTop = py * k - (e.clientY - rect.top);
    },
    { passive: false },
  );

  return {
    show,
    /** Starts laying out a machine before anyone selects it. */
    prepare(machineId: string, def: MachineDef): void {
      void layoutOf(machineId, def).promise;
    },
    setZoom(z: Zoom): void {
      zoom = z;
      applyZoom();
      scrollToActive();
    },
    zoomBy(factor: number): void {
      zoom = Math.max(0.15, Math.min(3, scale * factor));
      applyZoom();
    },
    setFollow(on: boolean): void {
      follow = on;
      scrollToActive();
    },
    relayout: applyZoom,
    /** Whether the view still follows the active state (panning or zooming by hand stops it). */
    following: () => follow,
  };
}
