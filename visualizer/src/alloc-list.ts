/**
 * The allocations pane, Nomad's view first: one row per allocation with its client status and a task
 * summary; expanded, one row per task with its state, failed, restarts and last event (what `nomad alloc
 * status` prints). Allocations start collapsed; hook and driver actors appear only with "show internal".
 * Rows are virtualised (virtual-list.ts) and rebuilt only when the actors they show changed.
 */
import { esc } from './html.ts';
import { valueText, type ActorView, type Model } from './model.ts';
import { allocSummaryOf, timeText, type TaskSummary } from './nomad.ts';
import { createVirtualList } from './virtual-list.ts';

type Row =
  | { kind: 'alloc'; key: string; a: ActorView; depth: 0 }
  | { kind: 'task'; key: string; a?: ActorView; parent: ActorView; task?: TaskSummary; name: string; depth: 1 }
  | { kind: 'call'; key: string; a: ActorView; count: number; depth: number };

const ROW_H = 22;

/** Options the toolbar changes. */
export interface AllocListOptions {
  showInternal: boolean;
  query: string;
}

/** The pane in `el`; `onSelect` gets the sessionId of a clicked row's actor. */
export function createAllocList(el: HTMLElement, onSelect: (sessionId: string) => void, onScroll: () => void) {
  const list = createVirtualList(el, ROW_H, onScroll);
  const expanded = new Set<string>();
  let rows: Row[] = [];
  let builtFor = '';
  let lastModel: Model | undefined;

  el.addEventListener('click', (e) => {
    const target = e.target as HTMLElement;
    const row = target.closest<HTMLElement>('[data-key]');
    if (!row) return;
    if (target.closest('.twisty') && row.dataset.alloc) {
      const sid = row.dataset.alloc;
      if (expanded.has(sid)) expanded.delete(sid);
      else expanded.add(sid);
      builtFor = '';
      onScroll();
      return;
    }
    if (row.dataset.session) onSelect(row.dataset.session);
  });

  const newestById = (m: Model, ids: string[], machinesOnly: boolean): Map<string, { a: ActorView; count: number }> => {
    const out = new Map<string, { a: ActorView; count: number }>();
    for (const sid of ids) {
      const a = m.actors.get(sid);
      if (!a || (machinesOnly && !a.machineId)) continue;
      const e = out.get(a.id);
      if (e) {
        e.a = a;
        e.count++;
      } else out.set(a.id, { a, count: 1 });
    }
    return out;
  };

  const build = (m: Model, opts: AllocListOptions) => {
    const q = opts.query.trim().toLowerCase();
    const out: Row[] = [];
    const calls = (parent: ActorView, depth: number) => {
      if (!opts.showInternal) return;
      for (const { a, count } of newestById(m, parent.children, false).values()) {
        if (a.machineId) continue;
        out.push({ kind: 'call', key: `c:${parent.sessionId}:${a.id}`, a, count, depth });
      }
    };
    for (const sid of m.roots) {
      const a = m.actors.get(sid);
      if (!a) continue;
      const summary = allocSummaryOf(a);
      const children = newestById(m, a.children, true);
      const taskNames = summary ? summary.tasks.map((t) => t.name) : [...children.keys()];
      const allocHit = !q || a.id.toLowerCase().includes(q) || (summary?.clientStatus ?? '').includes(q);
      const taskHits = q ? taskNames.filter((n) => n.toLowerCase().includes(q) || (summary?.tasks.find((t) => t.name === n)?.state ?? '').includes(q)) : taskNames;
      if (!allocHit && taskHits.length === 0) continue;
      out.push({ kind: 'alloc', key: `a:${sid}`, a, depth: 0 });
      // A search that matched tasks opens their allocation; otherwise allocations stay as the user left them.
      const open = expanded.has(sid) || (q !== '' && !allocHit);
      if (!open) continue;
      for (const name of allocHit ? taskNames : taskHits) {
        const child = children.get(name)?.a;
        out.push({ kind: 'task', key: `t:${sid}:${name}`, a: child, parent: a, task: summary?.tasks.find((t) => t.name === name), name, depth: 1 });
        if (child) calls(child, 2);
      }
      calls(a, 1);
    }
    rows = out;
  };

  const cls = (status: string) => `st-${esc(status)}`;

  const allocHtml = (m: Model, a: ActorView): string => {
    const s = allocSummaryOf(a);
    const open = expanded.has(a.sessionId);
    const status = s?.clientStatus ?? (a.status === 'active' ? valueText(a.value) : a.status);
    const counts = new Map<string, number>();
    for (const t of s?.tasks ?? []) counts.set(t.state, (counts.get(t.state) ?? 0) + 1);
    const tasks = s ? [...counts].map(([st, n]) => `${n} ${st}`).join(', ') : `${a.children.length} actors`;
    return (
      `<span class="twisty" title="${open ? 'collapse' : 'expand'}">${open ? '▾' : '▸'}</span>` +
      `<span class="c-id">${esc(a.id)}</span><span class="badge-s ${cls(status)}" data-client-status="${esc(status)}">${esc(status)}</span>` +
      `<span class="c-sum">${esc(tasks)}</span><span class="c-time">${esc(timeText(a.updatedAt, m.origin))}</span>`
    );
  };

  const taskHtml = (m: Model, r: Extract<Row, { kind: 'task' }>): string => {
    const t = r.task;
    const state = t?.state ?? (r.a ? (r.a.status === 'active' ? valueText(r.a.value) : r.a.status) : '?');
    const ev = t?.lastEvent;
    return (
      `<span class="c-id">${esc(r.name)}</span><span class="badge-s ${cls(state)}" data-task-state="${esc(state)}">${esc(state)}</span>` +
      `<span class="c-failed" data-failed="${t?.failed ? 'true' : 'false'}">${t?.failed ? 'failed' : ''}</span>` +
      `<span class="c-restarts" data-restarts="${t?.restarts ?? 0}" title="restarts">↻${t?.restarts ?? 0}</span>` +
      `<span class="c-event" title="${esc(ev?.message ?? '')}">${esc(ev ? `${ev.type}${ev.message ? `: ${ev.message}` : ''}` : '')}</span>` +
      `<span class="c-time">${esc(timeText(ev?.time, m.origin))}</span>`
    );
  };

  const callHtml = (r: Extract<Row, { kind: 'call' }>): string =>
    `<span class="c-id">${esc(r.a.id)}</span><span class="badge-s ${cls(r.a.status)}">${esc(r.a.status)}</span>` +
    `<span class="c-sum">${esc(r.a.src ?? 'actor')}${r.count > 1 ? ` ×${r.count}` : ''}</span>`;

  return {
    /** Redraws; cheap when nothing changed (rows are rebuilt only when actors were added or options changed). */
    render(m: Model, selected: string | undefined, opts: AllocListOptions, changed: Set<string>): number {
      const key = `${m.structure}|${opts.showInternal}|${opts.query}`;
      // Task states live in their alloc's context, so a changed alloc may change its task rows' text too;
      // rows are cheap to rebuild (one pass over the allocations), the DOM is what costs.
      if (key !== builtFor || changed.size > 0 || lastModel !== m) {
        build(m, opts);
        builtFor = key;
        lastModel = m;
      }
      return list.render(
        {
          count: rows.length,
          key: (i) => rows[i]!.key,
          signature: (i) => {
            const r = rows[i]!;
            const a = r.kind === 'task' ? r.a : r.a;
            const base = `${a?.sessionId ?? ''}@${a?.version ?? 0}|${a?.sessionId === selected}`;
            if (r.kind === 'alloc') return `${base}|${expanded.has(r.a.sessionId)}|${m.origin}`;
            if (r.kind === 'task') return `${base}|${r.parent.version}|${m.origin}`;
            return `${base}|${r.count}`;
          },
          html: (i) => {
            const r = rows[i]!;
            return r.kind === 'alloc' ? allocHtml(m, r.a) : r.kind === 'task' ? taskHtml(m, r) : callHtml(r);
          },
          attrs: (i) => {
            const r = rows[i]!;
            const a = r.kind === 'task' ? r.a : r.a;
            const path = r.kind === 'task' ? `${r.parent.id}/${r.name}` : a ? m.pathOf(a.sessionId).join('/') : '';
            return {
              class: `row row-${r.kind} depth-${r.depth}${a && a.sessionId === selected ? ' selected' : ''}`,
              'data-key': r.key,
              'data-session': a?.sessionId ?? '',
              'data-path': path,
              ...(r.kind === 'alloc' ? { 'data-alloc': r.a.sessionId } : {}),
            };
          },
        },
        m.roots.length === 0 ? 'waiting for allocations…' : 'nothing matches the filter',
      );
    },
    /** Opens an allocation's row (when something inside it is selected from elsewhere). */
    expand(sessionId: string): void {
      if (!expanded.has(sessionId)) {
        expanded.add(sessionId);
        builtFor = '';
      }
    },
    /** Scrolls the row of `sessionId` into view. */
    reveal(sessionId: string): void {
      const i = rows.findIndex((r) => (r.kind === 'task' ? r.a : r.a)?.sessionId === sessionId);
      if (i >= 0) list.reveal(i);
    },
  };
}
