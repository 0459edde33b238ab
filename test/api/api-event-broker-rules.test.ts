/**
 * The event broker's rules one at a time (src/api/event-broker.ts): how `topic=` values parse, which
 * events a topic, key, filter key and namespace let through, the buffer's bound, and batches shared as
 * published when every event matches.
 */
import { describe, expect, it } from 'vitest';
import { EventBroker, parseTopics, type EventBatch, type StreamEvent } from '../../src/api/event-broker.ts';

function event(topic: StreamEvent['Topic'], key: string, extra: Partial<StreamEvent> = {}): StreamEvent {
  return { Topic: topic, Type: 'T', Key: key, Namespace: 'default', FilterKeys: [], Index: 1, Payload: {}, ...extra };
}

function live(broker: EventBroker, opts: { fromIndex?: number; topics?: string[]; namespace?: string }): EventBatch[] {
  const got: EventBatch[] = [];
  broker.subscribe({ fromIndex: opts.fromIndex ?? 0, topics: parseTopics(opts.topics ?? []), namespace: opts.namespace ?? 'default' }).subscribe((b) => got.push(b));
  return got;
}

describe('parseTopics', () => {
  it.each<[string[], unknown]>([
    [[], [{ topic: '*', key: '*' }]],
    [['Job'], [{ topic: 'Job', key: '*' }]],
    [['Job:web'], [{ topic: 'Job', key: 'web' }]],
    [['Job:'], [{ topic: 'Job', key: '*' }]],
    [['Job:a:b'], [{ topic: 'Job', key: 'a:b' }]],
    [[':web'], [{ topic: '', key: 'web' }]],
    [['Job:web', 'Allocation'], [{ topic: 'Job', key: 'web' }, { topic: 'Allocation', key: '*' }]],
  ])('%j', (values, filters) => {
    expect(parseTopics(values)).toEqual(filters);
  });
});

describe('which events a subscriber gets', () => {
  it.each<[string, { topics?: string[]; namespace?: string }, StreamEvent, boolean]>([
    ['every topic by default', {}, event('Node', 'n1'), true],
    ['the topic named', { topics: ['Job'] }, event('Job', 'web'), true],
    ['not another topic', { topics: ['Job'] }, event('Allocation', 'web'), false],
    ['the key named', { topics: ['Job:web'] }, event('Job', 'web'), true],
    ['not another key', { topics: ['Job:web'] }, event('Job', 'db'), false],
    ['a key among the filter keys', { topics: ['Allocation:web'] }, event('Allocation', 'a1', { FilterKeys: ['x', 'web'] }), true],
    ['any topic with the key, by *', { topics: ['*:web'] }, event('Allocation', 'web'), true],
    ['another namespace: no', { namespace: 'default' }, event('Job', 'web', { Namespace: 'ops' }), false],
    ['every namespace, by *', { namespace: '*' }, event('Job', 'web', { Namespace: 'ops' }), true],
    ['an event with no namespace (a node): every subscriber', { namespace: 'ops' }, event('Node', 'n1', { Namespace: '' }), true],
  ])('%s', (_what, opts, e, gets) => {
    const broker = new EventBroker();
    const got = live(broker, opts);
    broker.publish({ Index: 1, Events: [e] });
    expect(got.length).toBe(gets ? 1 : 0);
  });

  it('a batch whose events all match is passed on as published; a partly matching one as a new batch of its matches', () => {
    const broker = new EventBroker();
    const all = live(broker, {});
    const jobs = live(broker, { topics: ['Job'] });
    const batch = { Index: 1, Events: [event('Job', 'web'), event('Allocation', 'a1')] };
    broker.publish(batch);
    expect(all[0]).toBe(batch);
    expect(jobs).toEqual([{ Index: 1, Events: [batch.Events[0]] }]);
    expect(jobs[0]).not.toBe(batch);
  });

  it('an unsubscribed stream gets nothing more', () => {
    const broker = new EventBroker();
    const got: EventBatch[] = [];
    const sub = broker.subscribe({ fromIndex: 0, topics: parseTopics([]), namespace: '*' }).subscribe((b) => got.push(b));
    sub.unsubscribe();
    broker.publish({ Index: 1, Events: [event('Job', 'web')] });
    expect(got).toEqual([]);
  });
});

describe('the buffer', () => {
  it.each<[number, number[]]>([
    [1, [3]],
    [2, [2, 3]],
    [3, [1, 2, 3]],
  ])('with capacity %i, a late subscriber from index 0 of history gets %j', (capacity, indexes) => {
    const broker = new EventBroker(capacity);
    for (const i of [1, 2, 3]) broker.publish({ Index: i, Events: [event('Job', 'web')] });
    expect(live(broker, { fromIndex: 0.5 }).map((b) => b.Index)).toEqual(indexes);
  });

  it('holds 4096 batches by default', () => {
    const broker = new EventBroker();
    for (let i = 1; i <= 4097; i++) broker.publish({ Index: i, Events: [event('Job', 'web')] });
    const got = live(broker, { fromIndex: 0.5 });
    expect(got.length).toBe(4096);
    expect(got[0]!.Index).toBe(2);
  });

  it('a replayed batch is not sent again live, and live batches after it are', () => {
    const broker = new EventBroker();
    broker.publish({ Index: 1, Events: [event('Job', 'web')] });
    const got = live(broker, { fromIndex: 0.5 });
    broker.publish({ Index: 1, Events: [event('Job', 'web')] });
    broker.publish({ Index: 2, Events: [event('Job', 'web')] });
    expect(got.map((b) => b.Index)).toEqual([1, 2]);
  });
});
