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
  /** Every stored allocation that can be read, oldest first (damaged records are left out: see `scan`). */
  list(): Promise<AllocRecord[]>;
  remove(allocId: string): Promise<void>;
  /**
   * Every readable record, and a StateStoreError naming each damaged one. With `quarantine` a damaged
   * record is moved aside (`state.json.corrupt-<time>`), so it is reported once and never read again.
   */
  scan?(opts?: { quarantine?: boolean }): Promise<StateScan>;
  /** Where one allocation's record lives, for messages (a file path, or store and key). */
  locate?(allocId: string): string;
  /** Sets a record that cannot be used aside (never overwritten) and says where it went. */
  quarantine?(allocId: string, problem: StateStoreError): Promise<StateStoreError>;
}

/** What `scan` found. */
export interface StateScan {
  records: AllocRecord[];
  problems: StateStoreError[];
}

/** A record that cannot be read or written; names the file so the user can look at it. */
export class StateStoreError extends Error {
  readonly code = 'ErrStateStore';
  /** Where a damaged record was moved, when it was. */
  readonly movedTo?: string;
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown; movedTo?: string },
  ) {
    super(message, options);
    this.name = 'StateStoreError';
    if (options?.movedTo) this.movedTo = options.movedTo;
  }
}
