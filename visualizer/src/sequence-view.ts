/**
 * A sequence diagram of the messages between the actors of the selected allocation (alloc → task →
 * hook/driver call), built from the same timeline as the rest of the page: one lifeline per actor, one
 * arrow per event, newest at the bottom. A task's hook and driver calls share one "calls" lifeline beside
 * it; with "show internal" each call gets its own.
 */
import { eventLabel } from '../../src/inspect/statechart.ts';
import { esc } from './html.ts';
import type { Model, TimelineEntry } from './model.ts';

const LANE_W = 150;
const ROW_H = 22;
const HEAD_H = 30;
// The newest messages only: a sequence diagram of thousands of arrows is not read, it is scrolled past.
const MAX_ARROWS = 300;

/** The view in `el`; `onPick` gets a clicked arrow's timeline entry. */
export function createSequenceView(el: HTMLElement, onPick: (e: TimelineEntry) => void) {
  let lastKey = '';
  let arrows: TimelineEntry[] = [];
  el.addEventListener('click', (e) => {
    const g = (e.target as Element).closest('[data-seq]');
    const entry = g ? arrows.find((x) => x.seq === Number(g.getAttribute('data-seq'))) : undefined;
    if (entry) onPick(entry);
  });

  return {
    render(m: Model, selected: string | undefined, showInternal: boolean, picked: number | undefined): void {
      // The selected actor's root: the allocation.
      let root = selected ? m.actors.get(selected) : undefined;
      while (root?.parentSessionId && m.actors.has(root.parentSessionId)) root = m.actors.get(root.parentSessionId);
      const key = `${root?.sessionId}|${m.timeline.length}|${m.timeline[0]?.seq}|${showInternal}|${picked}|${m.structure}`;
      if (key === lastKey) return;
      lastKey = key;
      if (!root) {
        el.innerHTML = '<div class="empty">select an allocation</div>';
        return;
      }
      // Lifelines: the alloc, its machine children (tasks), and their calls when internal actors are shown.
      const laneOf = new Map<string, number>();
      const lanes: string[] = [];
      const laneFor = (name: string) => {
        let i = lanes.indexOf(name);
        if (i < 0) i = lanes.push(name) - 1;
        return i;
      };
      const place = (sid: string, depth: number) => {
        const a = m.actors.get(sid);
        if (!a) return;
        const path = m.pathOf(sid).slice(1);
        const parentPath = path.slice(0, -1).join('/') || root!.id;
        const name = depth === 0 ? a.id : a.machineId || showInternal ? path.join('/') : `${parentPath} · calls`;
        laneOf.set(sid, laneFor(name));
        // Machine children (tasks) first, so lifelines read alloc, task, its calls, next task…
        const kids = a.children.map((c) => m.actors.get(c)).filter((c) => c !== undefined);
        for (const c of kids) if (c.machineId) place(c.sessionId, depth + 1);
        for (const c of kids) if (!c.machineId) place(c.sessionId, depth + 1);
      };
      place(root.sessionId, 0);
      const outside = lanes.length;
      arrows = [];
      for (let i = m.timeline.length - 1; i >= 0 && arrows.length < MAX_ARROWS; i--) {
        const e = m.timeline[i]!;
        if (e.kind !== 'event') continue;
        const to = laneOf.get(e.target);
        if (to === undefined) continue;
        const from = e.source === undefined ? outside : laneOf.get(e.source);
        if (from === undefined) continue;
        arrows.push(e);
      }
      arrows.reverse();
      // Only lifelines that send or receive one of the arrows shown, in their order.
      const used = new Set<number>([0]);
      for (const e of arrows) {
        if (e.kind !== 'event') continue;
        used.add(laneOf.get(e.target)!);
        used.add(e.source === undefined ? outside : laneOf.get(e.source)!);
      }
      const order = [...used].sort((a, b) => a - b);
      const col = new Map(order.map((lane, i) => [lane, i]));
      const names = order.map((lane) => (lane === outside ? '(outside)' : lanes[lane]!));
      const width = names.length * LANE_W + 20;
      const height = HEAD_H + arrows.length * ROW_H + 20;
      const x = (lane: number) => 10 + lane * LANE_W + LANE_W / 2;
      const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" class="sequence" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`];
      out.push('<defs><marker id="seq-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>');
      names.forEach((n, i) => {
        out.push(`<g class="lane" data-lane="${esc(n)}"><rect class="lane-head" x="${x(i) - LANE_W / 2 + 6}" y="4" width="${LANE_W - 12}" height="20" rx="4"/>`);
        out.push(`<text class="lane-name" x="${x(i)}" y="18" text-anchor="middle">${esc(n.length > 22 ? `…${n.slice(-21)}` : n)}</text>`);
        out.push(`<line class="lifeline" x1="${x(i)}" y1="24" x2="${x(i)}" y2="${height}"/></g>`);
      });
      arrows.forEach((e, row) => {
        if (e.kind !== 'event') return;
        const to = col.get(laneOf.get(e.target)!)!;
        const from = col.get(e.source === undefined ? outside : laneOf.get(e.source)!)!;
        const y = HEAD_H + row * ROW_H + 12;
        const cls = `msg${e.internal ? ' internal' : ''}${e.seq === picked ? ' picked' : ''}`;
        const label = esc(eventLabel(e.type));
        if (from === to) {
          out.push(`<g class="${cls}" data-seq="${e.seq}"><path d="M${x(from)},${y - 6} h18 v10 h-16" marker-end="url(#seq-arrow)"/><text x="${x(from) + 22}" y="${y + 2}">${label}</text></g>`);
        } else {
          const mid = (x(from) + x(to)) / 2;
          out.push(
            `<g class="${cls}" data-seq="${e.seq}"><line x1="${x(from)}" y1="${y}" x2="${x(to)}" y2="${y}" marker-end="url(#seq-arrow)"/>` +
              `<text x="${mid}" y="${y - 3}" text-anchor="middle">${label}</text></g>`,
          );
        }
      });
      out.push('</svg>');
      const stick = el.scrollTop + el.clientHeight >= el.scrollHeight - 30;
      el.innerHTML = arrows.length === 0 ? '<div class="empty">no messages between these actors yet</div>' : out.join('');
      if (stick) el.scrollTop = el.scrollHeight;
    },
  };
}
