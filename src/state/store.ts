/**
 * The StateStore contract: where an allocation's spec and last known state are kept so `allocrun status`
 * (and, later, an agent restoring allocations) can read them after the runner is gone.
 */
import type { AllocSpec, AllocState } from '../jobspec/types.ts';

/** One persisted allocation: what was asked for and what last happened. Times are epoch milliseconds. */
export interface AllocRecord {
  spec: AllocSpec;
  state: AllocState;
  updatedAt: number;
  /** When the record was first saved (Nomad's CreateTime); kept across saves by the store. */
  createdAt?: number;
}

/** Persisted allocations by id. Every method is async; `load` of an unknown id resolves undefined. */
export interface StateStore {
  save(allocId: string, record: AllocRecord): Promise<void>;
  load(allocId: string): Promise<AllocRecord | undefined>;
  /** Every stored allocation, oldest first. */
  list(): Promise<AllocRecord[]>;
  remove(allocId: string): Promise<void>;
}

/** A record that cannot be read or written; names the file so the user can look at it. */
export class StateStoreError extends Error {
  readonly code = 'ErrStateStore';
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StateStoreError';
  }
}
