/**
 * The event stream's rules, on the broker alone: a subscriber resuming from index N gets the batches
 * after N and never the one it already has; index 0 means only new events; topics and keys filter events
 * within a batch; a late subscriber never sees a batch twice (buffered, then live).
 */
import { describe, expect, it } from 'vitest';
import { EventBroker, parseTopics, type EventBatch, type StreamEvent } from '../../src/api/event-broker.ts';

function event(index: number, topic: StreamEvent['Topic'], key: string, extra: Partial<StreamEvent> = {}): StreamEvent {
  return { Topic: topic, Type: topic === 'Job' ? 'JobRegistered' : 'AllocationUpdated', Key: key, Namespace: 'default', FilterKeys: [], Index: index, Payload: {}, ...extra };
}

/** A broker holding batches 10, 11 and 12 (a job registration, then two allocation updates). */
function brokerWithHistory(capacity?: number): EventBroker {
  const broker = new EventBroker(capacity);
  broker.publish({ Index: 10, Events: [event(10, 'Job', 'web')] });
  broker.publish({ Index: 11, Events: [event(11, 'Allocation', 'a1', { FilterKeys: ['web'] })] });
  broker.publish({ Index: 12, Events: [event(12, 'Allocation', 'a2', { FilterKeys: ['db'] }), event(12, 'Job', 'db')] });
  return broker;
}

/** What a subscriber has received after the history, and after `later` is published too. */
function received(broker: EventBroker, opts: { fromIndex: number; topics?: string[]; namespace?: string }, later: EventBatch[] = []): EventBatch[] {
  const got: EventBatch[] = [];
  const sub = broker.subscribe({ fromIndex: opts.fromIndex, topics: parseTopics(opts.topics ?? []), namespace: opts.namespace ?? 'default' }).subscribe((b) => got.push(b));
  for (const b of later) broker.publish(b);
  sub.unsubscribe();
  return got;
}

const indexes = (batches: EventBatch[]) => batches.map((b) => b.Index);

describe('event stream index semantics', () => {
  it.each([
    ['index 0 replays nothing: only events published from now on', 0, [13]],
    ['a client resuming from the last index it has (12) gets only what follows', 12, [13]],
    ['a client resuming from 11 gets 12, not 11 again', 11, [12, 13]],
    ['an index before the buffer replays the whole buffer', 1, [10, 11, 12, 13]],
  ])('%s', (_rule, fromIndex, expected) => {
    expect(indexes(received(brokerWithHistory(), { fromIndex }, [{ Index: 13, Events: [event(13, 'Job', 'web')] }]))).toEqual(expected);
  });

  it('a batch published once reaches a subscriber once, even while it replays the buffer', () => {
    const broker = brokerWithHistory();
    const got: EventBatch[] = [];
    // Publishing from inside the replay: the live subscription must not deliver it a second time.
    let published = false;
    const sub = broker.subscribe({ fromIndex: 1, topics: parseTopics([]), namespace: 'default' }).subscribe((b) => {
      got.push(b);
      if (!published) {
        published = true;
        broker.publish({ Index: 13, Events: [event(13, 'Job', 'web')] });
      }
    });
    sub.unsubscribe();
    expect(indexes(got).filter((i) => i === 13).length).toBeLessThanOrEqual(1);
    expect(new Set(indexes(got)).size).toBe(got.length);
  });

  it('keeps only the newest `capacity` batches for late subscribers', () => {
    expect(indexes(received(brokerWithHistory(2), { fromIndex: 1 }))).toEqual([11, 12]);
  });

  it('publishes no empty batch', () => {
    const broker = new EventBroker();
    broker.publish({ Index: 5, Events: [] });
    expect(received(broker, { fromIndex: 1 })).toEqual([]);
  });
});

describe('event stream filters', () => {
  it.each([
    ['no topic means every topic', [], [[10, ['Job:web']], [11, ['Allocation:a1']], [12, ['Allocation:a2', 'Job:db']]]],
    ['a topic alone matches every key of it', ['Job'], [[10, ['Job:web']], [12, ['Job:db']]]],
    ['Topic:key matches the key', ['Job:db'], [[12, ['Job:db']]]],
    ['Topic:key matches an event whose FilterKeys hold the key (an allocation of job web)', ['Allocation:web'], [[11, ['Allocation:a1']]]],
    ['Topic: with an empty key matches every key', ['Allocation:'], [[11, ['Allocation:a1']], [12, ['Allocation:a2']]]],
    ['* matches every topic', ['*:db'], [[12, ['Allocation:a2', 'Job:db']]]],
    ['several topics are a union', ['Job:web', 'Allocation:db'], [[10, ['Job:web']], [12, ['Allocation:a2']]]],
  ])('%s', (_rule, topics, expected) => {
    const got = received(brokerWithHistory(), { fromIndex: 1, topics });
    expect(got.map((b) => [b.Index, b.Events.map((e) => `${e.Topic}:${e.Key}`)])).toEqual(expected);
  });

  it('filters by namespace, * for every namespace', () => {
    const broker = new EventBroker();
    broker.publish({ Index: 3, Events: [event(3, 'Job', 'a', { Namespace: 'prod' }), event(3, 'Job', 'b')] });
    expect(received(broker, { fromIndex: 1 }).flatMap((b) => b.Events.map((e) => e.Key))).toEqual(['b']);
    expect(received(broker, { fromIndex: 1, namespace: 'prod' }).flatMap((b) => b.Events.map((e) => e.Key))).toEqual(['a']);
    expect(received(broker, { fromIndex: 1, namespace: '*' }).flatMap((b) => b.Events.map((e) => e.Key))).toEqual(['a', 'b']);
  });
});
