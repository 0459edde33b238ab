/**
 * The allocations pane, Nomad's view first: one row per allocation named `job.group[index]` with its
 * short ID, client status and a task summary; expanded, one row per task with its state, failed,
 * restarts and last event (what `nomad alloc status` prints). Allocations start expanded when there are
 * few (≤ 5); hook and driver actors appear only with "show internal". Sortable by job, status or age.
 *
 * Rows are virtualised (virtual-list.ts) and redrawn in place: each row element keeps its cells, and an
 * update only rewrites the text and attributes that changed. Selection happens on pointer-down, so a row
 * updated (or moved by the sort) before pointer-up never loses the click. Keyboard: ↑/↓ move the cursor,
 * → expands (or steps into), ← collapses (or steps out), Enter selects.
 */
import { valueText, type ActorView, type Model } from './model.ts';
import { allocNamesOf, allocSummaryOf, timeText, type TaskSummary } from './nomad.ts';
import { createVirtualList, setAttr, setText } from './virtual-list.ts';

type Row =
  | { kind: 'alloc'; key: string; a: ActorView; depth: 0 }
  | { kind: 'task'; key: string; a?: ActorView; parent: ActorView; task?: TaskSummary; name: string; depth: 1 }
  | { kind: 'call'; key: string; a: ActorView; count: number; depth: number };

const ROW_H = 22;
/** Allocations start expanded when there are at most this many: a lone allocation shows its tasks at once. */
export const EXPAND_UP_TO = 5;

/** The columns the list sorts by. */
export type SortKey = 'job' | 'status' | 'age';

/** Options the toolbar changes. */
export interface AllocListOptions {
  showInternal: boolean;
  query: string;
  sort?: { key: SortKey; descending: boolean };
}

/** What the list tells its owner. */
export interface AllocListHooks {
  /** A row was chosen (pointer-down or Enter): the sessionId of its actor. */
  onSelect(sessionId: string): void;
  /** The list needs drawing again (scroll, expand, cursor moved). */
  onScroll(): void;
}

// Nomad's client statuses, the ones needing attention first.
const STATUS_RANK: Record<string, number> = { pending: 0, running: 1, failed: 2, lost: 3, unknown: 4, complete: 5 };

const collator = new Intl.Collator(undefined, { numeric: true });

/** The pane in `el` (made focusable for the keyboard). */
export function createAllocList(el: HTMLElement, hooks: AllocListHooks) {
  const list = createVirtualList(el, ROW_H, hooks.onScroll);
  /** Allocations the user opened or closed against the default (open when few, closed when many). */
  const toggled = new Set<string>();
  let openByDefault = false;
  let rows: Row[] = [];
  let builtFor = '';
  let lastModel: Model | undefined;
  let cursor: string | undefined;
  let selectedNow: string | undefined;

  const isOpen = (sid: string) => openByDefault !== toggled.has(sid);
  const toggle = (sid: string) => {
    if (toggled.has(sid)) toggled.delete(sid);
    else toggled.add(sid);
    builtFor = '';
    hooks.onScroll();
  };
  const sessionOf = (r: Row) => (r.kind === 'task' ? r.a : r.a)?.sessionId;

  el.tabIndex = 0;
  el.setAttribute('role', 'tree');
  el.setAttribute('aria-label', 'allocations: arrows move, → and ← expand and collapse, Enter selects');
  el.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    const target = e.target as HTMLElement;
    const row = target.closest<HTMLElement>('[data-key]');
    if (!row) return;
    cursor = row.dataset.key;
    if (target.closest('.twisty') && row.dataset.alloc) return toggle(row.dataset.alloc);
    if (row.dataset.session) hooks.onSelect(row.dataset.session);
  });

  el.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || rows.length === 0) return;
    let i = rows.findIndex((r) => r.key === cursor);
    if (i < 0) i = Math.max(0, rows.findIndex((r) => sessionOf(r) === selectedNow));
    const r = rows[i]!;
    const move = (to: number) => {
      const j = Math.max(0, Math.min(rows.length - 1, to));
      cursor = rows[j]!.key;
      list.reveal(j);
      hooks.onScroll();
    };
    switch (e.key) {
      case 'ArrowDown':
        move(cursor === undefined ? i : i + 1);
        break;
      case 'ArrowUp':
        move(cursor === undefined ? i : i - 1);
        break;
      case 'Home':
        move(0);
        break;
      case 'End':
        move(rows.length - 1);
        break;
      case 'ArrowRight':
        if (r.kind === 'alloc' && !isOpen(r.a.sessionId)) toggle(r.a.sessionId);
        else move(i + 1);
        break;
      case 'ArrowLeft':
        if (r.kind === 'alloc') {
          if (isOpen(r.a.sessionId)) toggle(r.a.sessionId);
        } else {
          let j = i;
          while (j > 0 && rows[j]!.depth >= r.depth) j--;
          move(j);
        }
        break;
      case 'Enter':
      case ' ': {
        cursor = r.key;
        const sid = sessionOf(r);
        if (sid) hooks.onSelect(sid);
        else hooks.onScroll();
        break;
      }
      default:
        return;
    }
    e.preventDefault();
  });

  const newestById = (m: Model, parent: ActorView, machinesOnly: boolean): Map<string, { a: ActorView; count: number }> => {
    const out = new Map<string, { a: ActorView; count: number }>();
    for (const sid of parent.children) {
      const a = m.actors.get(sid);
      if (!a || (machinesOnly && !a.machineId)) continue;
      const e = out.get(a.id);
      if (e) {
        e.a = a;
        e.count++;
      } else out.set(a.id, { a, count: 1 + (parent.retired?.[a.id] ?? 0) });
    }
    return out;
  };

  const statusOf = (a: ActorView) => allocSummaryOf(a)?.clientStatus ?? (a.status === 'active' ? valueText(a.value) : a.status);

  const sorted = (m: Model, opts: AllocListOptions): ActorView[] => {
    const allocs: ActorView[] = [];
    for (const sid of m.roots) {
      const a = m.actors.get(sid);
      if (a) allocs.push(a);
    }
    const s = opts.sort;
    if (!s) return allocs;
    const by: (x: ActorView, y: ActorView) => number =
      s.key === 'job'
        ? (x, y) => collator.compare(allocNamesOf(x).name, allocNamesOf(y).name) || collator.compare(x.id, y.id)
        : s.key === 'status'
          ? (x, y) => (STATUS_RANK[statusOf(x)] ?? 9) - (STATUS_RANK[statusOf(y)] ?? 9) || collator.compare(allocNamesOf(x).name, allocNamesOf(y).name)
          : (x, y) => x.createdAt - y.createdAt;
    return allocs.sort(s.descending ? (x, y) => by(y, x) : by);
  };

  const build = (m: Model, opts: AllocListOptions) => {
    openByDefault = m.roots.length <= EXPAND_UP_TO;
    const q = opts.query.trim().toLowerCase();
    const out: Row[] = [];
    const calls = (parent: ActorView, depth: number) => {
      if (!opts.showInternal) return;
      for (const { a, count } of newestById(m, parent, false).values()) {
        if (a.machineId) continue;
        out.push({ kind: 'call', key: `c:${parent.sessionId}:${a.id}`, a, count, depth });
      }
    };
    for (const a of sorted(m, opts)) {
      const sid = a.sessionId;
      // Without a filter a closed allocation is one row, whatever it holds: most of 500 are closed, and
      // reading their summaries on every redraw (their contexts change with every transition) was most of the list's time.
      if (!q && !isOpen(sid)) {
        out.push({ kind: 'alloc', key: `a:${sid}`, a, depth: 0 });
        continue;
      }
      const summary = allocSummaryOf(a);
      const children = newestById(m, a, true);
      const taskNames = summary ? summary.tasks.map((t) => t.name) : [...children.keys()];
      const names = allocNamesOf(a);
      const allocHit = !q || a.id.toLowerCase().includes(q) || names.name.toLowerCase().includes(q) || (summary?.clientStatus ?? '').includes(q);
      const taskHits = q ? taskNames.filter((n) => n.toLowerCase().includes(q) || (summary?.tasks.find((t) => t.name === n)?.state ?? '').includes(q)) : taskNames;
      if (!allocHit && taskHits.length === 0) continue;
      out.push({ kind: 'alloc', key: `a:${sid}`, a, depth: 0 });
      // A search that matched tasks opens their allocation; otherwise allocations stay as the user left them.
      const open = isOpen(sid) || (q !== '' && !allocHit);
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

  /** Makes a row's cells once: spans whose text and attributes are updated in place afterwards. */
  const cells = (el: HTMLElement, names: string[]): HTMLElement[] => {
    el.textContent = '';
    return names.map((cls) => {
      const span = document.createElement('span');
      span.className = cls;
      el.appendChild(span);
      return span;
    });
  };
  const cellsOf = (el: HTMLElement) => el.children as unknown as HTMLElement[];
  const badge = (span: HTMLElement, status: string, attr: string) => {
    setText(span, status);
    setAttr(span, 'class', `badge-s st-${status}`);
    setAttr(span, attr, status);
  };

  const drawAlloc = (m: Model, el: HTMLElement, a: ActorView, fresh: boolean) => {
    const [twisty, name, short, status, sum, time] = fresh ? cells(el, ['twisty', 'c-id', 'c-short', '', 'c-sum', 'c-time']) : cellsOf(el);
    const s = allocSummaryOf(a);
    const open = isOpen(a.sessionId);
    const names = allocNamesOf(a);
    setText(twisty!, open ? '▾' : '▸');
    setAttr(twisty!, 'title', open ? 'collapse (←)' : 'expand (→)');
    setText(name!, names.name);
    setText(short!, names.shortId);
    setAttr(short!, 'title', names.id);
    badge(status!, statusOf(a), 'data-client-status');
    const counts = new Map<string, number>();
    for (const t of s?.tasks ?? []) counts.set(t.state, (counts.get(t.state) ?? 0) + 1);
    setText(sum!, s ? [...counts].map(([st, n]) => `${n} ${st}`).join(', ') : `${a.children.length} actors`);
    setText(time!, timeText(a.updatedAt, m.origin));
    setAttr(el, 'aria-expanded', String(open));
  };

  const drawTask = (m: Model, el: HTMLElement, r: Extract<Row, { kind: 'task' }>, fresh: boolean) => {
    const [name, state, failed, restarts, event, time] = fresh ? cells(el, ['c-id', '', 'c-failed', 'c-restarts', 'c-event', 'c-time']) : cellsOf(el);
    const t = r.task;
    setText(name!, r.name);
    badge(state!, t?.state ?? (r.a ? (r.a.status === 'active' ? valueText(r.a.value) : r.a.status) : '?'), 'data-task-state');
    setText(failed!, t?.failed ? 'failed' : '');
    setAttr(failed!, 'data-failed', t?.failed ? 'true' : 'false');
    setText(restarts!, `↻${t?.restarts ?? 0}`);
    setAttr(restarts!, 'data-restarts', String(t?.restarts ?? 0));
    setAttr(restarts!, 'title', 'restarts');
    const ev = t?.lastEvent;
    setText(event!, ev ? `${ev.type}${ev.message ? `: ${ev.message}` : ''}` : '');
    setAttr(event!, 'title', ev?.message ?? '');
    setText(time!, timeText(ev?.time, m.origin));
  };

  const drawCall = (el: HTMLElement, r: Extract<Row, { kind: 'call' }>, fresh: boolean) => {
    const [name, status, sum] = fresh ? cells(el, ['c-id', '', 'c-sum']) : cellsOf(el);
    setText(name!, r.a.id);
    badge(status!, r.a.status, 'data-status');
    setText(sum!, `${r.a.src ?? 'actor'}${r.count > 1 ? ` ×${r.count}` : ''}`);
  };

  return {
    /** Redraws; cheap when nothing changed (rows are rebuilt only when actors changed or options did). */
    render(m: Model, selected: string | undefined, opts: AllocListOptions, changed: Set<string>): number {
      selectedNow = selected;
      const key = `${m.structure}|${opts.showInternal}|${opts.query}|${opts.sort?.key}|${opts.sort?.descending}`;
      // Task states live in their alloc's context, so a changed alloc may change its task rows' text too;
      // rows are cheap to rebuild (one pass over the allocations), the DOM is what costs.
      if (key !== builtFor || changed.size > 0 || lastModel !== m || openByDefault !== m.roots.length <= EXPAND_UP_TO) {
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
            const base = `${a?.sessionId ?? ''}@${a?.version ?? 0}|${a !== undefined && a.sessionId === selected}|${r.key === cursor}`;
            if (r.kind === 'alloc') return `${base}|${isOpen(r.a.sessionId)}|${m.origin}`;
            if (r.kind === 'task') return `${base}|${r.parent.version}|${m.origin}`;
            return `${base}|${r.count}`;
          },
          draw: (el, i, fresh) => {
            const r = rows[i]!;
            const a = r.kind === 'task' ? r.a : r.a;
            const path = r.kind === 'task' ? `${r.parent.id}/${r.name}` : a ? m.pathOf(a.sessionId).join('/') : '';
            setAttr(el, 'class', `row row-${r.kind} depth-${r.depth}${a && a.sessionId === selected ? ' selected' : ''}${r.key === cursor ? ' cursor' : ''}`);
            setAttr(el, 'data-key', r.key);
            setAttr(el, 'data-session', a?.sessionId ?? '');
            setAttr(el, 'data-path', path);
            setAttr(el, 'data-alloc', r.kind === 'alloc' ? r.a.sessionId : undefined);
            setAttr(el, 'role', 'treeitem');
            setAttr(el, 'aria-selected', String(!!a && a.sessionId === selected));
            if (r.kind === 'alloc') drawAlloc(m, el, r.a, fresh);
            else if (r.kind === 'task') drawTask(m, el, r, fresh);
            else drawCall(el, r, fresh);
          },
        },
        m.roots.length === 0 ? 'waiting for allocations…' : 'nothing matches the filter',
      );
    },
    /** Opens an allocation's row (when something inside it is selected from elsewhere). */
    expand(sessionId: string): void {
      if (!isOpen(sessionId)) {
        toggle(sessionId);
      }
    },
    /** Scrolls the row of `sessionId` into view (as of the last render); false when it has no row. */
    reveal(sessionId: string): boolean {
      const i = rows.findIndex((r) => sessionOf(r) === sessionId);
      if (i < 0) return false;
      cursor = rows[i]!.key;
      list.reveal(i);
      return true;
    },
  };
}
