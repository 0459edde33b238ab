/**
 * The actor tree: allocations → tasks → hook and driver calls, each with its live status and state.
 * Calls with the same id under one parent (a restarted task's `driver:start`) collapse into the newest,
 * with a count, so a long run stays readable.
 */
import { valueText, type ActorView, type Model } from './model.ts';
import { esc } from './html.ts';

/** Renders the tree into `el`; clicking a row calls `onSelect` with its sessionId. */
export function createTreeView(el: HTMLElement, onSelect: (sessionId: string) => void) {
  el.addEventListener('click', (e) => {
    const row = (e.target as HTMLElement).closest<HTMLElement>('[data-session]');
    if (row?.dataset.session) onSelect(row.dataset.session);
  });

  const rowOf = (m: Model, a: ActorView, depth: number, count: number, selected: string | undefined): string => {
    const path = m.pathOf(a.sessionId).join('/');
    const state = a.machineId ? valueText(a.value) : '';
    const kind = a.machineId ? a.machineId : a.src ?? 'actor';
    return (
      `<div class="actor-row status-${a.status}${a.sessionId === selected ? ' selected' : ''}" style="padding-left:${8 + depth * 14}px" ` +
      `data-session="${esc(a.sessionId)}" data-actor-id="${esc(a.id)}" data-path="${esc(path)}" data-status="${a.status}" data-state="${esc(state)}" title="${esc(`${path} (${a.sessionId})`)}">` +
      `<span class="dot"></span><span class="actor-id">${esc(a.id)}</span>` +
      `<span class="actor-kind">${esc(kind)}</span>${count > 1 ? `<span class="count">×${count}</span>` : ''}` +
      (state ? `<div class="actor-state">${esc(state)}</div>` : `<div class="actor-state">${a.status}</div>`) +
      '</div>'
    );
  };

  return {
    render(m: Model, selected: string | undefined): void {
      const out: string[] = [];
      const walk = (ids: string[], depth: number) => {
        // Newest session per id, in order of first appearance.
        const byId = new Map<string, { latest: ActorView; count: number }>();
        for (const sid of ids) {
          const a = m.actors.get(sid);
          if (!a) continue;
          const entry = byId.get(a.id);
          if (entry) {
            entry.count++;
            entry.latest = a;
          } else byId.set(a.id, { latest: a, count: 1 });
        }
        for (const { latest, count } of byId.values()) {
          out.push(rowOf(m, latest, depth, count, selected));
          walk(latest.children, depth + 1);
        }
      };
      walk(m.roots, 0);
      el.innerHTML = out.length > 0 ? out.join('') : '<div class="empty">waiting for actors…</div>';
    },
  };
}
