/**
 * The allocation rows a click can land on: attached, not already selected, and wholly inside the list's
 * view, each with the point to click and its path (the row's `data-path`). Shared by the click-loss test
 * and bench/visualizer.ts, which click rows while allocations churn.
 */
import type { Page } from 'playwright-core';

export interface RowTarget {
  path: string;
  x: number;
  y: number;
}

export async function unselectedRowsInView(page: Page): Promise<RowTarget[]> {
  return page.locator('#allocs .row-alloc').evaluateAll((els) =>
    els
      // A row scrolled out between listing and reading is detached: skip it.
      .filter((el) => el.isConnected && !el.classList.contains('selected'))
      .map((el) => {
        const box = el.getBoundingClientRect();
        const list = document.getElementById('allocs')!.getBoundingClientRect();
        return { path: (el as HTMLElement).dataset.path!, x: box.left + 120, y: box.top + box.height / 2, inView: box.top >= list.top && box.bottom <= list.bottom };
      })
      .filter((r) => r.inView)
      .map(({ path, x, y }) => ({ path, x, y })),
  );
}
