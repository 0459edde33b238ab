/**
 * The event broker's hold (src/api/event-broker.ts), as a table of holds, publishes and releases: batches of an
 * index past a held one wait for its release and then go in index order, as Nomad's broker publishes what its
 * state store applies in Raft index order. The writers that hold it are route-events-index-order-rules'.
 */
import { describe, expect, it } from 'vitest';
import { EventBroker, type EventBatch } from '../../src/api/event-broker.ts';

const batch = (Index: number): EventBatch => ({ Index, Events: [{ Topic: 'Job', Type: 'T', Key: `k${Index}`, Namespace: 'default', FilterKeys: [], Index, Payload: {} }] });

/** What a subscriber from now on receives, as the indexes of its batches. */
function received(broker: EventBroker): number[] {
  const seen: number[] = [];
  broker.subscribe({ fromIndex: 0, topics: [{ topic: '*', key: '*' }], namespace: '*' }).subscribe((b) => seen.push(b.Index));
  return seen;
}

describe('the broker\'s hold', () => {
  it.each<[string, (b: EventBroker) => void, number[]]>([
    ['a batch past no hold goes at once', (b) => b.publish(batch(5)), [5]],
    ['a batch past a held index waits', (b) => (b.hold(5), b.publish(batch(6))), []],
    ['a batch below every held index goes at once', (b) => (b.hold(5), b.publish(batch(4))), [4]],
    ['the holder\'s own batch goes at once', (b) => (b.hold(5), b.publish(batch(5))), [5]],
    ['a waiting batch goes once the hold is released, after the holder\'s', (b) => {
      const release = b.hold(5);
      b.publish(batch(6));
      b.publish(batch(5));
      release();
    }, [5, 6]],
    ['waiting batches go in index order whatever order they came in', (b) => {
      const release = b.hold(5);
      b.publish(batch(8));
      b.publish(batch(6));
      b.publish(batch(7));
      release();
    }, [6, 7, 8]],
    ['a released hold with nothing published lets the later ones go', (b) => {
      const release = b.hold(5);
      b.publish(batch(6));
      release();
    }, [6]],
    ['a batch between two holds waits for the lower only', (b) => {
      const low = b.hold(5);
      b.hold(7);
      b.publish(batch(6));
      b.publish(batch(8));
      low();
    }, [6]],
    ['the higher hold released first lets nothing past the lower', (b) => {
      b.hold(5);
      const high = b.hold(7);
      b.publish(batch(6));
      b.publish(batch(8));
      high();
    }, []],
    ['the next held index\'s own batch goes once the lower hold is released', (b) => {
      const low = b.hold(5);
      b.hold(7);
      b.publish(batch(7));
      low();
    }, [7]],
    ['a release called twice releases one hold of two on the same index', (b) => {
      const one = b.hold(5);
      b.hold(5);
      b.publish(batch(6));
      one();
      one();
    }, []],
    ['an empty batch is never delivered, held or not', (b) => {
      const release = b.hold(5);
      b.publish({ Index: 6, Events: [] });
      release();
      b.publish({ Index: 7, Events: [] });
    }, []],
  ])('%s', (_rule, steps, expected) => {
    const broker = new EventBroker();
    const seen = received(broker);
    steps(broker);
    expect(seen).toEqual(expected);
  });

  it('delivers batches of one index in the order they were published', () => {
    const broker = new EventBroker();
    const keys: string[] = [];
    broker.subscribe({ fromIndex: 0, topics: [{ topic: '*', key: '*' }], namespace: '*' }).subscribe((b) => keys.push(b.Events[0]!.Key));
    const release = broker.hold(5);
    broker.publish({ ...batch(6), Events: [{ ...batch(6).Events[0]!, Key: 'first' }] });
    broker.publish({ ...batch(6), Events: [{ ...batch(6).Events[0]!, Key: 'second' }] });
    release();
    expect(keys).toEqual(['first', 'second']);
  });

  it('keeps for late subscribers what it delivered, in the order delivered', () => {
    const broker = new EventBroker();
    const release = broker.hold(5);
    broker.publish(batch(7));
    broker.publish(batch(5));
    broker.publish(batch(6));
    release();
    const late: number[] = [];
    broker.subscribe({ fromIndex: 1, topics: [{ topic: '*', key: '*' }], namespace: '*' }).subscribe((b) => late.push(b.Index));
    expect(late).toEqual([5, 6, 7]);
  });
});

