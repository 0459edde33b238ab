/**
 * Draws a laid-out chart as SVG markup. States and edges carry `data-state` / `data-edge` attributes so
 * the page can highlight the active states and animate the last transition by toggling classes.
 */
import type { ChartLayout, EdgePath } from './chart-layout.ts';
import { esc } from './html.ts';

function pathOf(e: EdgePath): string {
  const [first, ...rest] = e.points;
  if (!first) return '';
  return `M${first.x.toFixed(1)},${first.y.toFixed(1)}` + rest.map((p) => ` L${p.x.toFixed(1)},${p.y.toFixed(1)}`).join('');
}

/** The chart as an `<svg>` element's markup, sized to the layout. */
export function chartSvg(layout: ChartLayout, title: string): string {
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 ${Math.ceil(layout.width)} ${Math.ceil(layout.height)}" ` +
      `width="${Math.ceil(layout.width)}" height="${Math.ceil(layout.height)}" role="img" aria-label="${esc(title)}">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">' +
      '<path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>',
  );
  // Outer states first, so inner boxes paint over their parents.
  const states = [...layout.states].sort((a, b) => a.depth - b.depth);
  for (const s of states) {
    const cls = `state state-${s.type}${s.initial ? ' initial' : ''}${s.depth === 0 ? ' root' : ''}${s.folded ? ' folded' : ''}`;
    out.push(`<g class="${cls}" data-state="${esc(s.id)}" transform="translate(${s.x.toFixed(1)},${s.y.toFixed(1)})">`);
    out.push(`<rect class="box" width="${s.width.toFixed(1)}" height="${s.height.toFixed(1)}" rx="6"/>`);
    if (s.initial) out.push('<circle class="initial-dot" cx="-1" cy="-1" r="4"/>');
    // Collapsible states carry a toggle: ⊞ shows the folded children, ⊟ folds them.
    const toggle = s.collapsible ? `<text class="fold" data-fold="${esc(s.id)}" x="6" y="16">${s.folded ? '⊞' : '⊟'}</text>` : '';
    out.push(`${toggle}<text class="name" x="${s.collapsible ? 20 : 8}" y="16">${esc(s.label)}${s.type === 'final' ? ' ◉' : s.type === 'parallel' ? ' ∥' : ''}</text>`);
    s.lines.forEach((l, i) => out.push(`<text class="line" x="10" y="${32 + i * 14}">${esc(l)}</text>`));
    out.push('</g>');
  }
  for (const e of layout.edges) {
    out.push(`<g class="edge" data-edge="${esc(e.id)}"><path d="${pathOf(e)}" marker-end="url(#arrow)"/>`);
    if (e.labelBox) {
      const b = e.labelBox;
      out.push(
        `<rect class="edge-label-bg" x="${b.x.toFixed(1)}" y="${b.y.toFixed(1)}" width="${b.width}" height="${b.height}" rx="3"/>` +
          `<text class="edge-label" x="${(b.x + 3).toFixed(1)}" y="${(b.y + b.height - 3).toFixed(1)}">${esc(e.label)}</text>`,
      );
    }
    out.push('</g>');
  }
  out.push('</svg>');
  return out.join('');
}
