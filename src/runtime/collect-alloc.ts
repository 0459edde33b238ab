/**
 * How the agent destroys one terminal allocation, in an order a crash cannot break (Nomad's client destroys the
 * alloc runner, whose destroy hooks remove the alloc dir, then deletes its state):
 *
 * 1. its record is saved once more, marked `collecting` (its runner's own saves stopped first): from here on a
 *    next agent never restores nor shows it, it finishes the collection;
 * 2. the runner's destroy path runs (DESTROY: the destroy hooks, alloc_dir's removes the alloc dir); a record
 *    with no runner (finished before this agent started) has its alloc dir removed as that hook would;
 * 3. the record is deleted.
 *
 * A crash before 1 leaves the allocation whole; between 1 and 3, a marked record whose dir may be half gone,
 * which the next agent's `start()` finishes (`finishCollection`) before it restores anything.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocState } from '../../machines/model.ts';
import type { StateStore } from '../state/store.ts';
import type { AgentRecord } from './create-agent.ts';
import { persistedView, type AllocRunner } from './create-alloc-runner.ts';

/** A live runner as the agent holds it: the runner, its saves (to stop), when it was created. */
export interface LiveRunner {
  runner: AllocRunner;
  persist: { halt(): Promise<void> };
  createdAt: number;
}

/** The alloc dir of allocation `id` under the agent's data dir (create-alloc-runner.ts's layout). */
export const allocDirOf = (dataDir: string, id: string): string => join(dataDir, 'allocs', id);

/** Resolves once the runner's actor has stopped (destroyed, or failed). */
function stopped(runner: AllocRunner): Promise<void> {
  return new Promise((resolve) => {
    if (runner.actor.getSnapshot().status !== 'active') return resolve();
    const sub = runner.actor.subscribe({
      next: (snap) => {
        if (snap.status !== 'active') (sub.unsubscribe(), resolve());
      },
      error: () => resolve(),
      complete: () => resolve(),
    });
  });
}

/** The collection of one allocation: its final state (for the API to record first) and the steps above. */
export function collectionOf(at: { store: StateStore; dataDir: string; id: string; live?: LiveRunner; record?: AgentRecord }): { state: AllocState; run(): Promise<void> } {
  const { store, dataDir, id, live, record } = at;
  const state = live ? live.runner.getState() : record!.state;
  return {
    state,
    async run() {
      let marked: AgentRecord;
      if (live) {
        // No save of the runner may land after the mark (it would unmark it) or after the delete (it would bring it back).
        await live.persist.halt();
        marked = { spec: live.runner.actor.getSnapshot().context.alloc, state: live.runner.getState(), createdAt: live.createdAt, updatedAt: Date.now(), snapshot: persistedView(live.runner.actor), collecting: true };
      } else {
        marked = { ...record!, collecting: true };
      }
      await store.save(id, marked);
      if (live) {
        const done = stopped(live.runner);
        live.runner.send({ type: 'DESTROY' });
        await done;
      }
      await finishCollection(store, dataDir, id);
    },
  };
}

/** Steps 2 (the dir, by path) and 3 of a collection: what a next agent does for a record left marked `collecting`. */
export async function finishCollection(store: StateStore, dataDir: string, id: string): Promise<void> {
  await rm(allocDirOf(dataDir, id), { recursive: true, force: true });
  await store.remove(id);
}
