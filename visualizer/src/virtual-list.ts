/**
 * A virtualised list of fixed-height rows: only the rows in view (plus a margin) exist in the DOM, each
 * kept by key and redrawn only when its signature changes. Owners redraw a row in place (text nodes and
 * attributes of the cells it made when the row was new), so the element under the pointer survives
 * updates between pointer-down and pointer-up, and 500 allocations cost what the ~40 visible rows cost.
 */

/** What the list asks of its owner for row `i`. */
export interface RowSource {
  count: number;
  key(i: number): string;
  /** Changes whenever the row's look would. */
  signature(i: number): string;
  /** Draws row `i` into `el`: `fresh` when the element is new (make its cells), else update them in place. */
  draw(el: HTMLElement, i: number, fresh: boolean): void;
}

/** Sets a text node's text only when it differs (no DOM write, no layout, when nothing changed). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** Sets (or, with undefined, removes) an attribute only when it differs. */
export function setAttr(el: Element, name: string, value: string | undefined): void {
  if (value === undefined) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) el.setAttribute(name, value);
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
        const fresh = !row;
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
          src.draw(row.el, i, fresh);
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
    /** The row element of `key`, if it is drawn. */
    element(key: string): HTMLElement | undefined {
      return rows.get(key)?.el;
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
