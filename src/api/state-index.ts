/**
 * The agent's one modify index (Nomad's Raft index, on one node): every change to a job or an allocation
 * takes the next number, and blocking queries wait for the number they care about to pass theirs.
 */
import { Subject, type Observable } from 'rxjs';
import { ApplyOrder } from './apply-order.ts';

/** A monotonically increasing index with a stream of its changes. */
export class StateIndex {
  private value: number;
  private reserved: number;
  private readonly changes = new Subject<number>();
  /** The order writes apply in: a write that commits before it applies takes its index here (apply-order.ts). */
  readonly order = new ApplyOrder(() => this.next());

  /**
   * `reserve(upTo)`, when given, must record durably that indexes up to `upTo` may be handed out; it is
   * called once per `block` indexes, so a successor started from the recorded value never reissues one.
   */
  constructor(start = 1, private readonly reserve?: (upTo: number) => void, private readonly block = 1024) {
    this.value = start;
    this.reserved = start;
  }

  /** The newest index handed out. */
  get current(): number {
    return this.value;
  }

  /** Takes the next index for a change; tell `changed` once the change is visible. */
  next(): number {
    if (this.reserve && this.value + 1 > this.reserved) {
      try {
        this.reserve(this.value + this.block);
        this.reserved = this.value + this.block;
      } catch {
        // A full or failing disk must not stop the change that asked (its own commit reports the disk);
        // the reservation is tried again at the next index.
      }
    }
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
