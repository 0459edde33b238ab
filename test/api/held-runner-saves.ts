/**
 * The runner records of an in-process agent (`serve`'s `agent.store`) over the agent's real store, with saves a
 * test can hold back (a slow disk: nothing reaches the store until released) or fail (a full one). Wired in by
 * `serve`'s seed, which hands over the store before the agent starts: `serve(dir, (s) => saves.over(s), {
 * agent: { store: saves } })`.
 */
import type { AgentStore } from '../../src/state/agent-store.ts';
import type { AllocRecord, StateScan, StateStore, StateStoreError } from '../../src/state/store.ts';

/** A StateStore whose saves wait for `hold` (when set) and then fail while `fail` is set; the rest passes through. */
export class HeldRunnerSaves implements StateStore {
  private inner!: StateStore;
  hold?: Promise<void>;
  fail = false;
  /** Saves waiting for `hold` now. */
  waiting = 0;

  /** Sits over `store`'s runners table; for `serve`'s seed. */
  async over(store: AgentStore): Promise<void> {
    this.inner = store.runners();
  }

  /** Holds every save from now on; the function returned lets them through. */
  holdSaves(): () => void {
    let release!: () => void;
    this.hold = new Promise<void>((r) => (release = r));
    return () => {
      this.hold = undefined;
      release();
    };
  }

  async save(allocId: string, record: AllocRecord): Promise<void> {
    if (this.hold) {
      this.waiting++;
      await this.hold.finally(() => this.waiting--);
    }
    if (this.fail) throw new Error('no space left on device (held-runner-saves)');
    await this.inner.save(allocId, record);
  }

  load(allocId: string): Promise<AllocRecord | undefined> {
    return this.inner.load(allocId);
  }

  list(): Promise<AllocRecord[]> {
    return this.inner.list();
  }

  remove(allocId: string): Promise<void> {
    return this.inner.remove(allocId);
  }

  scan(opts?: { quarantine?: boolean }): Promise<StateScan> {
    return this.inner.scan!(opts);
  }

  locate(allocId: string): string {
    return this.inner.locate!(allocId);
  }

  quarantine(allocId: string, problem: StateStoreError): Promise<StateStoreError> {
    return this.inner.quarantine!(allocId, problem);
  }
}
