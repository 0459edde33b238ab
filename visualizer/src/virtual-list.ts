/**
 * A virtualised list of fixed-height rows: only the rows in view (plus a margin) exist in the DOM, each
 * kept by key and rewritten only when its signature changes. A row under the pointer therefore survives
 * updates between mouse-down and mouse-up, so clicks are never lost, and 500 allocations cost what the
 * ~40 visible rows cost.
 */

/** What the list asks of its owner for row `i`. */
export interface RowSource {
  count: number;
  key(i: number): string;
  /** Changes whenever the row's markup would. */
  signature(i: number): string;
  /** The row's inner markup. */
  html(i: number): string;
  /** Attributes for the row element (data-*, class). */
  attrs(i: number): Record<string, string>;
}

const OVERSCAN = 8;

/** A list in `scroller` (which must scroll vertically) with rows `rowHeight` px high. */
export function createVirtualList(scroller: HTMLElement, rowHeight: number, onScroll: () => void) {
  const spacer = document.createElement('div');
  spacer.className = 'vlist';
  spacer.style.position = 'relative';
  scroller.appendChild(spacer);
  const empty = document.createElement('div');
  empty.className = 'empty';
  scroller.appendChild(empty);
  let rows = new Map<string, { el: HTMLElement; sig: string; top: number }>();
  // The scroll position and height are read when they change, never while rendering: reading them after
  // DOM writes would force a layout in every frame.
  let scrollTop = scroller.scrollTop;
  let height = scroller.clientHeight;
  let count = 0;
  scroller.addEventListener(
    'scroll',
    () => {
      scrollTop = scroller.scrollTop;
      onScroll();
    },
    { passive: true },
  );
  new ResizeObserver((entries) => {
    height = entries[entries.length - 1]!.contentRect.height;
    onScroll();
  }).observe(scroller);

  return {
    /** Draws the rows in view; returns how many row elements were rewritten. */
    render(src: RowSource, emptyText: string): number {
      if (src.count !== count) spacer.style.height = `${src.count * rowHeight}px`;
      count = src.count;
      empty.textContent = src.count === 0 ? emptyText : '';
      empty.hidden = src.count !== 0;
      const first = Math.max(0, Math.floor(scrollTop / rowHeight) - OVERSCAN);
      const last = Math.min(src.count, Math.ceil((scrollTop + height) / rowHeight) + OVERSCAN);
      const next = new Map<string, { el: HTMLElement; sig: string; top: number }>();
      let written = 0;
      for (let i = first; i < last; i++) {
        const key = src.key(i);
        const sig = src.signature(i);
        let row = rows.get(key);
        if (row) rows.delete(key);
        else {
          row = { el: document.createElement('div'), sig: '', top: -1 };
          row.el.style.position = 'absolute';
          row.el.style.left = '0';
          row.el.style.right = '0';
          row.el.style.height = `${rowHeight}px`;
          spacer.appendChild(row.el);
        }
        if (row.sig !== sig) {
          const attrs = src.attrs(i);
          row.el.className = attrs.class ?? '';
          for (const [k, v] of Object.entries(attrs)) if (k !== 'class') row.el.setAttribute(k, v);
          row.el.innerHTML = src.html(i);
          row.sig = sig;
          written++;
        }
        const top = i * rowHeight;
        if (row.top !== top) {
          row.el.style.top = `${top}px`;
          row.top = top;
        }
        next.set(key, row);
      }
      for (const gone of rows.values()) gone.el.remove();
      rows = next;
      return written;
    },
    /** Scrolls so that row `i` is in view. */
    reveal(i: number): void {
      const top = i * rowHeight;
      if (top < scrollTop || top + rowHeight > scrollTop + height) scroller.scrollTop = scrollTop = Math.max(0, top - height / 2);
    },
    /** Whether the view shows the last rows (as of the last render). */
    atBottom(): boolean {
      return scrollTop + height >= count * rowHeight - rowHeight * 2;
    },
    /** Scrolls to the end; call before `render` so the rows drawn are the ones in view. */
    toBottom(rows: number): void {
      const top = Math.max(0, rows * rowHeight - height);
      if (top !== scrollTop) {
        spacer.style.height = `${rows * rowHeight}px`;
        count = rows;
        scroller.scrollTop = scrollTop = top;
      }
    },
  };
}
