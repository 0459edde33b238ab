/**
 * The event timeline: events delivered (source → target) and state changes, newest at the bottom,
 * optionally only for the selected actor and its descendants.
 */
import { esc } from './html.ts';
import { eventLabel } from './labels.ts';
import type { Model, TimelineEntry } from './model.ts';

// The DOM shows the tail; the model keeps more.
const SHOWN = 400;

function stamp(at: number, origin: number | undefined): string {
  return `+${((at - (origin ?? at)) / 1000).toFixed(3)}s`;
}

/** Renders the timeline into `el`. */
export function createTimelineView(el: HTMLElement) {
  let onlySelected = false;
  let lastKey = '';

  const subtree = (m: Model, root: string): Set<string> => {
    const out = new Set<string>();
    const walk = (sid: string) => {
      out.add(sid);
      for (const c of m.actors.get(sid)?.children ?? []) walk(c);
    };
    walk(root);
    return out;
  };

  const rowOf = (m: Model, e: TimelineEntry): string => {
    const t = `<span class="tl-time">${stamp(e.at, m.origin)}</span>`;
    if (e.kind === 'event') {
      const from = e.source ? `${esc(m.nameOf(e.source))} → ` : '';
      const payload = e.payload === undefined ? '' : `<span class="tl-payload">${esc(JSON.stringify(e.payload).slice(0, 160))}</span>`;
      // XState's own events (init, snapshot relays, done/error) are dimmed so commands and driver events stand out.
      const internal = e.type.startsWith('xstate.') ? ' tl-internal' : '';
      return `<div class="tl-row tl-event${internal}" data-type="${esc(e.type)}">${t}<span class="tl-who">${from}${esc(m.nameOf(e.target))}</span><span class="tl-what">${esc(eventLabel(e.type))}</span>${payload}</div>`;
    }
    return (
      `<div class="tl-row tl-state" data-session="${esc(e.sessionId)}">${t}<span class="tl-who">${esc(m.nameOf(e.sessionId))}</span>` +
      `<span class="tl-what">${e.from ? `${esc(e.from)} ⟶ ` : ''}<b>${esc(e.to)}</b></span><span class="tl-payload">on ${esc(eventLabel(e.event))}</span></div>`
    );
  };

  return {
    setOnlySelected(on: boolean): void {
      onlySelected = on;
      lastKey = '';
    },
    render(m: Model, selected: string | undefined): void {
      let entries = m.timeline;
      if (onlySelected && selected) {
        const mine = subtree(m, selected);
        entries = entries.filter((e) => (e.kind === 'event' ? mine.has(e.target) || (e.source !== undefined && mine.has(e.source)) : mine.has(e.sessionId)));
      }
      const tail = entries.slice(-SHOWN);
      // Skip the DOM work when nothing new arrived for this view.
      const key = `${onlySelected ? selected : ''}|${entries.length}|${tail[tail.length - 1]?.at ?? ''}|${m.timeline.length}`;
      if (key === lastKey) return;
      lastKey = key;
      const stick = el.scrollTop + el.clientHeight >= el.scrollHeight - 20;
      el.innerHTML = tail.map((e) => rowOf(m, e)).join('') || '<div class="empty">no events yet</div>';
      if (stick) el.scrollTop = el.scrollHeight;
    },
  };
}
