/**
 * The commit path of every API write that commits before it applies. Nomad's FSM applies writes in Raft index
 * order, so its reads and its event broker see them in that order. Here a write takes its index, then waits for
 * its commit, and a write that took a later index (another job's registration, a task's state change) may be
 * durable first: the agent's ApplyOrder runs the applies in index order, and the broker holds the batches of later
 * indexes meanwhile (the writers that publish at once without a commit, such as the service catalog, included).
 */
import type { AgentStore, WriteTx } from '../state/agent-store.ts';
import type { EventBroker } from './event-broker.ts';
import type { StateIndex } from './state-index.ts';

/**
 * Commits `write` at `index` (taken with `index.order.take()`, and recorded as the store's newest index) and,
 * once it is durable and every lower index has applied or failed, runs `apply`, which makes the write visible
 * and publishes its events. The broker holds every batch of a later index from the commit's start until `apply`
 * has run or the commit has failed. Rejects as the commit does (a StoreCommitError), with nothing applied and
 * the index released, so later writes go on.
 */
export async function commitInOrder<T>(to: { store: AgentStore; events: EventBroker; index: StateIndex }, index: number, write: (tx: WriteTx) => void, apply: () => T): Promise<T> {
  const release = to.events.hold(index);
  try {
    await commitAt(to, index, write);
    return await to.index.order.applyAt(index, apply);
  } finally {
    release();
  }
}

/**
 * Commits `write` at `index` (taken with `index.order.take()`) for a write that is read straight from the store (an
 * ACL token, a variable): its commit is what makes it visible, so the commit itself waits until every lower index
 * has applied or failed. Once durable, the index is announced and `told` runs (it publishes the write's events); the
 * broker holds every batch of a later index from the start until then, so those events come before them. Rejects
 * as the commit does, the index released and nothing told.
 */
export async function commitVisibleInOrder(to: { store: AgentStore; events: EventBroker; index: StateIndex }, index: number, write: (tx: WriteTx) => void, told: () => void = () => undefined): Promise<void> {
  const release = to.events.hold(index);
  try {
    await to.index.order.settledBelow(index);
    await commitAt(to, index, write);
    await to.index.order.applyAt(index, () => {
      to.index.changed(index);
      told();
    });
  } finally {
    release();
  }
}

/** Commits `write` at `index` (recorded as the store's newest); a failed commit releases the index, nothing applied. */
async function commitAt(to: { store: AgentStore; index: StateIndex }, index: number, write: (tx: WriteTx) => void): Promise<void> {
  try {
    await to.store.commit((tx) => {
      write(tx);
      tx.index(index);
    });
  } catch (err) {
    to.index.order.abandon(index);
    throw err;
  }
}
