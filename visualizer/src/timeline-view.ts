/**
 * The event timeline: events delivered (source → target) and state changes, newest at the bottom. By
 * default XState's own events (init, done/error of invoked actors) and hook actors are left out; a filter
 * matches actor paths and event types. Click a row to travel to that moment. Virtualised like the
 * allocation list, so a long run costs what the visible rows cost.
 */
import type { DivergenceLine } from '../../src/inspect/replay-format.ts';
import { eventLabel } from '../../src/inspect/statechart.ts';
import { esc } from './html.ts';
import type { Model, TimelineEntry } from './model.ts';
import { timeText } from './nomad.ts';
import { createVirtualList } from './virtual-list.ts';

const ROW_H = 19;

/** The timeline's filters. */
export interface TimelineOptions {
  showInternal: boolean;
  query: string;
  /** Only this actor and its descendants. */
  within?: string;
  /** A checked replay's divergence (`replay --check --open`): marked where it happened once the replay gets there. */
  divergence?: DivergenceLine;
}

/** The divergence's row: after the last entry at or before its time. */
type DivergenceRow = { kind: 'divergence'; seq: -1; at: number; d: DivergenceLine };
type Row = TimelineEntry | DivergenceRow;

/** The timeline in `el`; `onPick` gets a clicked row's entry. */
export function createTimelineView(el: HTMLElement, onPick: (e: TimelineEntry) => void, onScroll: () => void) {
  const list = createVirtualList(el, ROW_H, onScroll);
  let shown: Row[] = [];
  let builtFor = '';

  // Picked on pointer-down: a row redrawn before pointer-up would otherwise swallow the click.
  el.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    const row = (e.target as HTMLElement).closest<HTMLElement>('[data-seq]');
    const seq = Number(row?.dataset.seq);
    const entry = shown.find((x) => x.seq === seq);
    if (entry && entry.kind !== 'divergence') onPick(entry);
  });

  const subtree = (m: Model, root: string): Set<string> => {
    const out = new Set<string>();
    const walk = (sid: string) => {
      out.add(sid);
      for (const c of m.actors.get(sid)?.children ?? []) walk(c);
    };
    walk(root);
    return out;
  };

  const rowHtml = (m: Model, e: Row): string => {
    const t = `<span class="tl-time">${esc(timeText(e.at, m.origin))}</span>`;
    if (e.kind === 'divergence') {
      const sides = [e.d.recorded !== undefined && `recorded: ${e.d.recorded}`, e.d.now !== undefined && `now: ${e.d.now}`].filter(Boolean).join(' · ');
      return `${t}<span class="tl-who">${esc(e.d.actor)}</span><span class="tl-what">⚠ replay diverged: ${esc(e.d.message)}</span><span class="tl-payload">${esc(sides)}</span>`;
    }
    if (e.kind === 'event') {
      const from = e.source ? `${esc(m.nameOf(e.source))} → ` : '';
      const payload = e.payload === undefined ? '' : `<span class="tl-payload">${esc(JSON.stringify(e.payload).slice(0, 160))}</span>`;
      return `${t}<span class="tl-who">${from}${esc(m.nameOf(e.target))}</span><span class="tl-what">${esc(eventLabel(e.type))}</span>${payload}`;
    }
    return (
      `${t}<span class="tl-who">${esc(m.nameOf(e.sessionId))}</span>` +
      `<span class="tl-what">${e.from ? `${esc(e.from)} ⟶ ` : ''}<b>${esc(e.to)}</b></span><span class="tl-payload">on ${esc(eventLabel(e.event))}</span>`
    );
  };

  return {
    /** Redraws; `picked` is the entry being travelled to, if any. */
    render(m: Model, opts: TimelineOptions, picked: number | undefined): void {
      const key = `${m.timeline.length}|${m.timeline[0]?.seq}|${m.structure}|${opts.showInternal}|${opts.query}|${opts.within}|${opts.divergence?.at}`;
      if (key !== builtFor) {
        builtFor = key;
        const q = opts.query.trim().toLowerCase();
        const mine = opts.within ? subtree(m, opts.within) : undefined;
        shown = m.timeline.filter((e) => {
          if (!opts.showInternal && e.internal) return false;
          if (mine && !(e.kind === 'event' ? mine.has(e.target) || (e.source !== undefined && mine.has(e.source)) : mine.has(e.sessionId))) return false;
          if (!q) return true;
          const who = e.kind === 'event' ? `${m.nameOf(e.source)} ${m.nameOf(e.target)}` : m.nameOf(e.sessionId);
          const what = e.kind === 'event' ? `${e.type} ${eventLabel(e.type)}` : `${e.to} ${e.event}`;
          return `${who} ${what}`.toLowerCase().includes(q);
        });
        const d = opts.divergence;
        // Shown once the replay has reached its moment: after the actor's first state change at that time
        // (the step that differs), else after the last row at or before it.
        if (d && (m.timeline.at(-1)?.at ?? -Infinity) >= d.at) {
          let i = shown.findIndex((e) => e.kind === 'state' && e.at === d.at && m.pathOf(e.sessionId).join('/') === d.actor) + 1;
          if (i === 0) {
            i = shown.length;
            while (i > 0 && shown[i - 1]!.at > d.at) i--;
          }
          shown.splice(i, 0, { kind: 'divergence', seq: -1, at: d.at, d });
        }
      }
      // New rows arrive at the bottom: follow them while the user is there.
      if (picked === undefined && list.atBottom()) list.toBottom(shown.length);
      list.render(
        {
          count: shown.length,
          key: (i) => String(shown[i]!.seq),
          signature: (i) => `${shown[i]!.seq === picked}|${m.origin}`,
          draw: (el, i) => {
            const e = shown[i]!;
            el.className = `tl-row tl-${e.kind}${e.kind !== 'divergence' && e.internal ? ' tl-internal' : ''}${e.seq === picked ? ' picked' : ''}`;
            el.dataset.seq = String(e.seq);
            el.dataset.type = e.kind === 'event' ? e.type : e.kind === 'state' ? e.event : 'divergence';
            // A row's text changes only with the origin (relative times); picking it changes its class alone.
            const origin = String(m.origin);
            if (el.dataset.origin !== origin) {
              el.innerHTML = rowHtml(m, e);
              el.dataset.origin = origin;
            }
          },
        },
        'no events yet',
      );
    },
  };
}
