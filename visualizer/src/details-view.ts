/**
 * The details pane: the picked timeline event's full payload (when travelling in time), then the selected
 * actor: id path, status, state value, its Nomad task state, sanitized context (or output/error), and for
 * a task a link to its live log tail. An allocation with service checks gets a Checks table (the alloc
 * runner's `checks` context: the latest status each check reported).
 */
import { eventLabel } from '../../src/inspect/statechart.ts';
import { esc } from './html.ts';
import { valueText, type Model, type TimelineEntry } from './model.ts';
import { allocNamesOf, allocSummaryOf, eventTimeText, timeText, type CheckSummary, type TaskSummary } from './nomad.ts';

/** The Checks table of an allocation: name, task (or group), status and output; empty without checks. */
export function checksTableHtml(checks: readonly CheckSummary[], origin: number | undefined): string {
  if (checks.length === 0) return '';
  const rows = checks.map(
    (c) =>
      `<tr data-check="${esc(c.id)}" class="check-${esc(c.status)}"><td>${esc(c.service)} / ${esc(c.name)}</td><td>${c.task === undefined ? 'group' : esc(c.task)}</td>` +
      `<td data-status="${esc(c.status)}">${esc(c.status)}</td><td title="${esc(timeText(c.time, origin))}">${esc(c.output)}</td></tr>`,
  );
  return `<h3>checks</h3><table class="checks"><tr><th>check</th><th>task</th><th>status</th><th>output</th></tr>${rows.join('')}</table>`;
}

/**
 * A task's Recent Events table as Nomad's task page shows it: newest first, time, type and description
 * ("No message" when the event has none).
 */
export function recentEventsHtml(task: TaskSummary, origin: number | undefined, title = 'recent events'): string {
  const rows = [...task.events].reverse().map(
    (e) =>
      `<tr data-event-type="${esc(e.type)}"><td class="ev-time">${esc(eventTimeText(e.time, origin))}</td><td class="ev-type">${esc(e.type)}</td>` +
      `<td class="ev-message">${e.message ? esc(e.message) : '<em>No message</em>'}</td></tr>`,
  );
  const body = rows.length > 0 ? rows.join('') : '<tr><td colspan="3"><em>No events</em></td></tr>';
  return `<h3>${esc(title)}</h3><table class="events" data-task="${esc(task.name)}"><tr><th>Time</th><th>Type</th><th>Description</th></tr>${body}</table>`;
}

/** Renders the details pane into `el`; `logsUrl` builds a task's log link when the server offers logs. */
export function createDetailsView(el: HTMLElement, logsUrl: (path: string[]) => string | undefined) {
  let lastKey = '';
  return {
    render(m: Model, selected: string | undefined, picked: TimelineEntry | undefined): void {
      const a = selected ? m.actors.get(selected) : undefined;
      // A task's Nomad state and events live in its allocation's context: its changes redraw the task too.
      const up = a?.parentSessionId ? m.actors.get(a.parentSessionId) : undefined;
      // Not the model's structure: under churn it changes with every hook call anywhere, and redrawing this
      // pane (a context's JSON) four times a second for nothing was a good part of the page's frames.
      // (An invoked machine's output or error arrives with its parent's done event, not as a transition.)
      const key = `${a ? `${a.sessionId}@${a.version}${a.output === undefined ? '' : 'o'}${a.error === undefined ? '' : 'e'}` : ''}|${up?.version}|${picked?.seq}`;
      if (key === lastKey) return;
      lastKey = key;
      const json = (title: string, v: unknown, open: boolean, attr = '') =>
        `<details${open ? ' open' : ''}${attr}><summary>${title}</summary><pre>${esc(JSON.stringify(v, null, 2))}</pre></details>`;
      const parts: string[] = [];
      if (picked) {
        const rows: [string, string][] =
          picked.kind === 'event'
            ? [['event', picked.type], ['reads', eventLabel(picked.type)], ['from', m.nameOf(picked.source) || '(outside)'], ['to', m.nameOf(picked.target)], ['at', timeText(picked.at, m.origin)]]
            : [['actor', m.nameOf(picked.sessionId)], ['state', `${picked.from ?? ''} ⟶ ${picked.to}`], ['on', picked.event], ['at', timeText(picked.at, m.origin)]];
        parts.push(`<h3>event #${picked.seq}</h3><table class="facts" data-picked="${picked.seq}">${rows.map(([k, v]) => `<tr><th>${k}</th><td>${esc(v)}</td></tr>`).join('')}</table>`);
        if (picked.kind === 'event') parts.push(json('payload', picked.payload ?? null, true, ' class="payload"'));
      }
      if (!a) {
        parts.push('<div class="empty">no actor selected</div>');
        el.innerHTML = parts.join('');
        return;
      }
      const path = m.pathOf(a.sessionId);
      const rows: [string, string][] = [
        ['path', path.join(' / ')],
        ['session', a.sessionId],
        ['kind', a.machineId ? `machine ${a.machineId}` : a.src ?? 'actor'],
        ['actor status', a.status],
      ];
      if (a.value !== undefined) rows.push(['state', valueText(a.value)]);
      const alloc = allocSummaryOf(a);
      if (alloc) {
        const names = allocNamesOf(a);
        rows.unshift(['name', names.name], ['ID', names.id], ['client status', alloc.clientStatus]);
      }
      // A task's Nomad state lives in its alloc's context.
      const parent = a.parentSessionId ? m.actors.get(a.parentSessionId) : undefined;
      const task = parent && a.machineId ? allocSummaryOf(parent)?.tasks.find((t) => t.name === a.id) : undefined;
      if (task) {
        rows.unshift(['task state', task.state], ['failed', String(task.failed)], ['restarts', String(task.restarts)]);
        if (task.lastEvent) rows.push(['last event', `${task.lastEvent.type}${task.lastEvent.message ? `: ${task.lastEvent.message}` : ''} (${timeText(task.lastEvent.time, m.origin)})`]);
      }
      parts.push(`<h3>${picked ? 'actor, at that moment' : 'actor'}</h3><table class="facts">${rows.map(([k, v]) => `<tr><th>${k}</th><td data-fact="${k}">${esc(v)}</td></tr>`).join('')}</table>`);
      if (task) parts.push(recentEventsHtml(task, m.origin));
      if (alloc) {
        parts.push(checksTableHtml(alloc.checks, m.origin));
        for (const t of alloc.tasks) parts.push(recentEventsHtml(t, m.origin, `${t.name}: recent events`));
      }
      const logs = task ? logsUrl(path) : undefined;
      if (logs) parts.push(`<p><a class="logs-link" href="${esc(logs)}" target="_blank" rel="noopener">logs: live stdout/stderr tail ↗</a></p>`);
      if (a.context !== undefined) parts.push(json('context', a.context, !picked));
      if (a.output !== undefined) parts.push(json('output', a.output, true));
      if (a.error !== undefined) parts.push(json('error', a.error, true));
      el.innerHTML = parts.join('');
    },
  };
}
