/**
 * The agent's one modify index (Nomad's Raft index, on one node): every change to a job or an allocation
 * takes the next number, and blocking queries wait for the number they care about to pass theirs.
 */
import { Subject, type Observable } from 'rxjs';

/** A monotonically increasing index with a stream of its changes. */
export class StateIndex {
  private value: number;
  private readonly changes = new Subject<number>();

  constructor(start = 1) {
    this.value = start;
  }

  /** The newest index handed out. */
  get current(): number {
    return this.value;
  }

  /** Takes the next index for a change; tell `changed` once the change is visible. */
  next(): number {
    return ++this.value;
  }

  /** Announces that state up to `index` is visible, waking blocking queries. */
  changed(index: number): void {
    this.changes.next(index);
  }

  /** Every announced change. */
  get changed$(): Observable<number> {
    return this.changes.asObservable();
  }
}

/**
 * Nomad's blocking query: resolves at once when `indexOf()` is already past `minIndex`, else on the first
 * change that moves it past, or after `waitMs` (with the unchanged index: the caller answers anyway).
 */
export function waitForIndex(index: StateIndex, indexOf: () => number, minIndex: number, waitMs: number, abort?: AbortSignal): Promise<number> {
  const now = indexOf();
  if (minIndex <= 0 || now > minIndex) return Promise.resolve(now);
  return new Promise<number>((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      sub.unsubscribe();
      abort?.removeEventListener('abort', finish);
      resolve(indexOf());
    };
    const timer = setTimeout(finish, waitMs);
    const sub = index.changed$.subscribe(() => {
      if (indexOf() > minIndex) finish();
    });
    abort?.addEventListener('abort', finish, { once: true });
  });
}
