/**
 * Every event batch an in-process agent publishes, in order: a spy on the broker's `publish` that records each
 * batch and still publishes it. Undone by `vi.restoreAllMocks()`.
 */
import { vi } from 'vitest';
import { EventBroker, type EventBatch } from '../../src/api/event-broker.ts';

export function recordPublishedBatches(into: EventBatch[] = []): EventBatch[] {
  const publish = EventBroker.prototype.publish;
  vi.spyOn(EventBroker.prototype, 'publish').mockImplementation(function (this: EventBroker, b) {
    into.push(b);
    return publish.call(this, b);
  });
  return into;
}
