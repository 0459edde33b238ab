/** The selected actor's details: id path, status, state value and sanitized context (or output/error). */
import { esc } from './html.ts';
import { valueText, type Model } from './model.ts';

/** Renders the details pane into `el`. */
export function createDetailsView(el: HTMLElement) {
  let lastKey = '';
  return {
    render(m: Model, selected: string | undefined): void {
      const a = selected ? m.actors.get(selected) : undefined;
      const key = a ? `${a.sessionId}@${a.version}` : '';
      if (key === lastKey) return;
      lastKey = key;
      if (!a) {
        el.innerHTML = '<div class="empty">no actor selected</div>';
        return;
      }
      const json = (title: string, v: unknown, open: boolean) =>
        `<details${open ? ' open' : ''}><summary>${title}</summary><pre>${esc(JSON.stringify(v, null, 2))}</pre></details>`;
      const rows: [string, string][] = [
        ['path', m.pathOf(a.sessionId).join(' / ')],
        ['session', a.sessionId],
        ['kind', a.machineId ? `machine ${a.machineId}` : a.src ?? 'actor'],
        ['status', a.status],
      ];
      if (a.value !== undefined) rows.push(['state', valueText(a.value)]);
      el.innerHTML =
        `<table class="facts">${rows.map(([k, v]) => `<tr><th>${k}</th><td data-fact="${k}">${esc(v)}</td></tr>`).join('')}</table>` +
        (a.context !== undefined ? json('context', a.context, true) : '') +
        (a.output !== undefined ? json('output', a.output, true) : '') +
        (a.error !== undefined ? json('error', a.error, true) : '');
    },
  };
}
