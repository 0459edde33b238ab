/**
 * The agent's one timer source for checks: every check of every allocation is an entry in a heap ordered
 * by due time, and a single clock timer is armed for the earliest. Nomad runs a goroutine per check; one
 * timer keeps a busy agent from holding a timer per check and lets a simulated clock drive them all.
 */
import type { Clock } from '../drivers/clock.ts';

interface Entry {
  at: number;
  seq: number;
  run: () => void;
  cancelled: boolean;
}

/** Cancels a scheduled run; harmless after it ran. */
export type CancelRun = () => void;

/** Runs callbacks at their due times on one timer. */
export class CheckScheduler {
  private readonly heap: Entry[] = [];
  private seq = 0;
  private timer: unknown;
  private armedFor: number | undefined;

  constructor(private readonly clock: Clock) {}

  /** Runs `run` once, `delayMs` from now. */
  after(delayMs: number, run: () => void): CancelRun {
    const entry: Entry = { at: this.clock.now() + Math.max(0, delayMs), seq: this.seq++, run, cancelled: false };
    this.push(entry);
    this.arm();
    return () => {
      entry.cancelled = true;
    };
  }

  /** How many runs are waiting (cancelled ones are dropped lazily, when they reach the top). */
  get pending(): number {
    return this.heap.filter((e) => !e.cancelled).length;
  }

  /** Drops every waiting run and the timer (agent shutdown). */
  clear(): void {
    for (const e of this.heap) e.cancelled = true;
    this.heap.length = 0;
    this.disarm();
  }

  private arm(): void {
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.pop();
    const top = this.heap[0];
    if (!top) return this.disarm();
    if (this.armedFor !== undefined && this.armedFor <= top.at) return;
    this.disarm();
    this.armedFor = top.at;
    this.timer = this.clock.setTimeout(() => this.fire(), top.at - this.clock.now());
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = undefined;
  }

  private fire(): void {
    this.timer = undefined;
    this.armedFor = undefined;
    const now = this.clock.now();
    const due: Entry[] = [];
    while (this.heap.length > 0 && this.heap[0]!.at <= now) due.push(this.pop());
    for (const e of due) {
      if (e.cancelled) continue;
      e.cancelled = true;
      // A check that throws must not stop the others due with it.
      try {
        e.run();
      } catch {
        /* the run reports its own errors */
      }
    }
    this.arm();
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): Entry {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
