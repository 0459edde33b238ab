/**
 * The latest result of every check, per allocation (Nomad's checkstore.Shim): what
 * `/v1/client/allocation/:id/checks` serves and what the health watcher reads. A pending stub never
 * replaces a result (a check re-observed after an update or restore keeps what it last said). Listeners
 * hear each change of their allocation's results.
 */
import type { AllocationResults, CheckQueryResult } from './result.ts';

type Listener = (results: AllocationResults) => void;

/**
 * Where a store keeps results across agent restarts (Nomad writes its checkstore to the client's state):
 * told of a result only when its status changes, as Nomad writes, and of checks forgotten.
 */
export interface CheckPersistence {
  save(allocId: string, result: CheckQueryResult): void;
  remove(allocId: string, ids: readonly string[]): void;
}

/** Check results of every allocation of an agent (or of one runner, when it runs alone). */
export class CheckStore {
  private readonly current = new Map<string, Map<string, CheckQueryResult>>();
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(private readonly persistence?: CheckPersistence) {}

  /** Puts back results an earlier agent kept (before any runner starts): a check's stub then leaves it be. */
  restore(allocId: string, results: readonly CheckQueryResult[]): void {
    let m = this.current.get(allocId);
    if (!m) this.current.set(allocId, (m = new Map()));
    for (const r of results) m.set(r.ID, r);
  }

  /** Records a result; a pending one only when the check has none yet. */
  set(allocId: string, result: CheckQueryResult): void {
    let m = this.current.get(allocId);
    if (!m) this.current.set(allocId, (m = new Map()));
    const previous = m.get(result.ID);
    if (result.Status === 'pending' && previous) return;
    m.set(result.ID, result);
    if (previous?.Status !== result.Status) this.persistence?.save(allocId, result);
    this.notify(allocId);
  }

  /** The allocation's results by check ID (a copy); empty when it has none. */
  list(allocId: string): AllocationResults {
    return Object.fromEntries(this.current.get(allocId) ?? []);
  }

  /** The IDs held for the allocation that are not in `ids` (checks an update removed). */
  difference(allocId: string, ids: readonly string[]): string[] {
    return [...(this.current.get(allocId)?.keys() ?? [])].filter((id) => !ids.includes(id));
  }

  /** Forgets some checks of an allocation. */
  remove(allocId: string, ids: readonly string[]): void {
    const m = this.current.get(allocId);
    if (!m || ids.length === 0) return;
    for (const id of ids) m.delete(id);
    this.persistence?.remove(allocId, ids);
    this.notify(allocId);
  }

  /** Forgets every check of an allocation (its checks stopped for good). */
  purge(allocId: string): void {
    const m = this.current.get(allocId);
    if (!m) return;
    this.current.delete(allocId);
    if (m.size > 0) this.persistence?.remove(allocId, [...m.keys()]);
    this.notify(allocId);
  }

  /** Calls `listener` with the allocation's results now and on every change; returns the unsubscribe. */
  watch(allocId: string, listener: Listener): () => void {
    let set = this.listeners.get(allocId);
    if (!set) this.listeners.set(allocId, (set = new Set()));
    set.add(listener);
    listener(this.list(allocId));
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(allocId);
    };
  }

  private notify(allocId: string): void {
    const set = this.listeners.get(allocId);
    if (!set) return;
    const results = this.list(allocId);
    for (const l of [...set]) l(results);
  }
}
