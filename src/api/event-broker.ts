/**
 * Nomad's event stream on one node: every job and allocation change is published as an event with its
 * index; subscribers get batches (`{ Index, Events }`) from a bounded buffer onwards, filtered by topic
 * and key the way `/v1/event/stream?topic=Job:web` filters them.
 */
import { Observable, Subject } from 'rxjs';

/** One event as Nomad's event stream writes it. */
export interface StreamEvent {
  Topic: 'Job' | 'Allocation' | 'Evaluation' | 'Deployment' | 'Node' | 'Variables' | 'Service';
  Type: string;
  Key: string;
  Namespace: string;
  FilterKeys: string[];
  Index: number;
  Payload: Record<string, unknown>;
}

/** The events of one index, as one line of the stream. */
export interface EventBatch {
  Index: number;
  Events: StreamEvent[];
}

/** `topic=Job:web` as a filter: the topic (`*` for all) and the key (`*` for every key). */
export interface TopicFilter {
  topic: string;
  key: string;
}

/** Parses the `topic` query values; none means every topic (Nomad's default). */
export function parseTopics(values: readonly string[]): TopicFilter[] {
  if (values.length === 0) return [{ topic: '*', key: '*' }];
  return values.map((v) => {
    const at = v.indexOf(':');
    return at < 0 ? { topic: v, key: '*' } : { topic: v.slice(0, at), key: v.slice(at + 1) || '*' };
  });
}

function matches(filters: readonly TopicFilter[], namespace: string, e: StreamEvent): boolean {
  // Nodes belong to no namespace (their events carry none): every subscriber sees them, as in Nomad.
  if (namespace !== '*' && e.Namespace !== '' && e.Namespace !== namespace) return false;
  return filters.some((f) => (f.topic === '*' || f.topic === e.Topic) && (f.key === '*' || f.key === e.Key || e.FilterKeys.includes(f.key)));
}

/**
 * Keeps the newest `capacity` batches for late subscribers and fans new ones out, in index order: a write that
 * took its index before an asynchronous commit holds the broker at that index (`hold`) until it has published,
 * and every batch of a later index waits for it, as Nomad's broker publishes what its state store applies in
 * Raft index order.
 */
export class EventBroker {
  private readonly buffer: EventBatch[] = [];
  private readonly live = new Subject<EventBatch>();
  /** The indexes held, each with how many holds it has. */
  private readonly held = new Map<number, number>();
  /** Batches published past a held index, oldest index first. */
  private readonly waiting: EventBatch[] = [];

  constructor(private readonly capacity = 4096) {}

  /** Publishes the events of one index (once no index below it is held). */
  publish(batch: EventBatch): void {
    if (batch.Events.length === 0) return;
    if (batch.Index > this.lowestHeld()) {
      // After every waiting batch of the same or a smaller index: the order they were published in stays.
      const at = this.waiting.findIndex((w) => w.Index > batch.Index);
      this.waiting.splice(at < 0 ? this.waiting.length : at, 0, batch);
      return;
    }
    this.deliver(batch);
  }

  /**
   * Holds batches of indexes after `index` until the returned release is called (once; more calls do nothing):
   * call it when the write that took `index` has published its batch, or has failed.
   */
  hold(index: number): () => void {
    this.held.set(index, (this.held.get(index) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.held.get(index)! - 1;
      if (left > 0) this.held.set(index, left);
      else this.held.delete(index);
      const lowest = this.lowestHeld();
      while (this.waiting.length > 0 && this.waiting[0]!.Index <= lowest) this.deliver(this.waiting.shift()!);
    };
  }

  private lowestHeld(): number {
    let lowest = Infinity;
    for (const i of this.held.keys()) if (i < lowest) lowest = i;
    return lowest;
  }

  private deliver(batch: EventBatch): void {
    this.buffer.push(batch);
    if (this.buffer.length > this.capacity) this.buffer.splice(0, this.buffer.length - this.capacity);
    this.live.next(batch);
  }

  /**
   * Batches after `fromIndex` still in the buffer (none when 0: only new events, as Nomad starts at
   * the latest index), then new ones, each filtered to the matching events.
   */
  subscribe(opts: { fromIndex: number; topics: TopicFilter[]; namespace: string }): Observable<EventBatch> {
    return new Observable<EventBatch>((subscriber) => {
      const send = (b: EventBatch) => {
        const events = b.Events.filter((e) => matches(opts.topics, opts.namespace, e));
        // The published batch itself when every event matches: streams can share its serialisation.
        if (events.length === b.Events.length) subscriber.next(b);
        else if (events.length > 0) subscriber.next({ Index: b.Index, Events: events });
      };
      let last = 0;
      if (opts.fromIndex > 0) {
        for (const b of this.buffer) if (b.Index > opts.fromIndex) (send(b), (last = b.Index));
      }
      const sub = this.live.subscribe((b) => {
        if (b.Index > last) send(b);
      });
      return () => sub.unsubscribe();
    });
  }
}
