/**
 * The commit path of every API write whose events are published after an asynchronous commit. Nomad's state
 * store applies writes in Raft index order, so its event broker publishes them in that order. Here a write takes
 * its index, then waits for its commit, and a write that took a later index (another job's registration, a task's
 * state change) may finish first: without a hold its batch would reach the stream before this one's.
 */
import type { AgentStore, WriteTx } from '../state/agent-store.ts';
import type { EventBroker } from './event-broker.ts';

/**
 * Commits `write` at `index` (recorded as the store's newest index) and, once it is durable, runs `apply`, which
 * makes the write visible and publishes its events. The broker holds every batch of a later index from the
 * commit's start until `apply` has run or the commit has failed, so no stream reader sees an index go back.
 * Rejects as the commit does (a StoreCommitError), with nothing applied.
 */
export async function commitInOrder<T>(to: { store: AgentStore; events: EventBroker }, index: number, write: (tx: WriteTx) => void, apply: () => T): Promise<T> {
  const release = to.events.hold(index);
  try {
    await to.store.commit((tx) => {
      write(tx);
      tx.index(index);
    });
    return apply();
  } finally {
    release();
  }
}
