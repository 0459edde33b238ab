/**
 * Nomad Variables kept in the agent's store (its `vars` table, in the 0600 LMDB file, and in snapshots of
 * it, which are 0600 too): nowhere else. Writes are check-and-set as Nomad's state store does them
 * (nomad/state/state_store_variables.go): `cas = 0` means "must not exist", `cas = N` means "its
 * ModifyIndex must be N", and a failed check answers the current variable (or a zero one when it is gone)
 * without writing. Writes are applied one at a time, each checked against what is committed and answered
 * once its commit is durable; a failed commit changes nothing.
 */
import { Observable, Subject, filter } from 'rxjs';
import type { AgentStore, WriteTx } from '../state/agent-store.ts';
import { taskMayRead, type TaskClaim } from './job-access.ts';
import { checkVariable, namespaceProblem, VariableError } from './path-rules.ts';
import { DEFAULT_NAMESPACE, metadataOf, unixNanos, type Variable, type VariableItems, type VariableMetadata } from './variable.ts';
import type { VariableChange, VariableSource } from './variable-source.ts';

/** Where indexes come from: the agent's one index (the API's StateIndex), so variables share its order. */
export interface Indexer {
  /** Takes the next index for a change. */
  next(): number;
  /** Announces that state up to `index` is visible (wakes blocking queries). */
  changed(index: number): void;
  /**
   * Commits `write` at `index` (a `next` one, recorded as the store's newest) and, once it is durable and in the
   * agent's index order, announces it and runs `told`; rejects as the commit does, nothing told. The agent's API
   * gives its one ordered commit here (src/api/ordered-commit.ts); without one, the store's writes, serial and
   * indexed here alone, commit and are told at once.
   */
  commit?(index: number, write: (tx: WriteTx) => void, told: () => void): Promise<void>;
}

/** A committed write as the event stream tells it: the variable's metadata (never its items). */
export interface VariableWritten {
  type: 'VariableUpserted' | 'VariableDeleted';
  variable: VariableMetadata;
  index: number;
}

/** The outcome of a check-and-set write that did not pass its check: the variable as it is now. */
export interface Conflict {
  ok: false;
  /** The current variable; a zero one (no items, indexes 0) when the write expected one that is gone. */
  conflict: Variable;
}

/** A put that landed: the variable as written. */
export interface Written {
  ok: true;
  variable: Variable;
  index: number;
}

/** A delete that landed (or found nothing to delete). */
export interface Deleted {
  ok: true;
  index: number;
  /** What was deleted (absent when nothing was, or the entry was damaged). */
  deleted?: VariableMetadata;
}

/** The key of a variable in the `vars` table: namespaces hold no `/`, so the first one splits them. */
const keyOf = (namespace: string, path: string): string => `${namespace}/${path}`;

/** A stored value that has a variable's shape (anything else is damaged, and named). */
function isVariable(v: unknown): v is Variable {
  const r = v as Partial<Variable> | null;
  return (
    typeof r === 'object' && r !== null &&
    typeof r.Namespace === 'string' && typeof r.Path === 'string' &&
    typeof r.CreateIndex === 'number' && typeof r.ModifyIndex === 'number' &&
    typeof r.CreateTime === 'number' && typeof r.ModifyTime === 'number' &&
    typeof r.Items === 'object' && r.Items !== null && Object.values(r.Items).every((x) => typeof x === 'string')
  );
}

/** A damaged `vars` entry: named by its key, never by its contents. */
export class VariableStoreError extends Error {
  readonly code = 'ErrVariableStore';
  constructor(message: string) {
    super(message);
    this.name = 'VariableStoreError';
  }
}

const byNamespaceAndPath = (a: VariableMetadata, b: VariableMetadata): number =>
  a.Namespace === b.Namespace ? (a.Path < b.Path ? -1 : a.Path > b.Path ? 1 : 0) : a.Namespace < b.Namespace ? -1 : 1;

/** The agent's variables: reads of the store, serialized check-and-set writes, a stream of changes. */
export class VariableStore implements VariableSource {
  private readonly changes = new Subject<VariableChange>();
  private readonly writes = new Subject<VariableWritten>();
  private queue: Promise<unknown> = Promise.resolve();
  /** Where write indexes come from; the API sets its StateIndex here (serve-agent-api.ts). */
  index: Indexer;
  private readonly now: () => number;

  constructor(
    private readonly store: AgentStore,
    opts: { index?: Indexer; now?: () => number } = {},
  ) {
    this.index = opts.index ?? counterFrom(store.savedIndex);
    this.now = opts.now ?? Date.now;
  }

  /** The variable at `path` in `namespace`, or undefined. */
  get(path: string, namespace: string = DEFAULT_NAMESPACE): Variable | undefined {
    const key = keyOf(namespace, path);
    const value = this.store.get('vars', key);
    if (value === undefined) return undefined;
    if (!isVariable(value)) throw damaged(this.store, key);
    return value;
  }

  /** Every variable's metadata under `prefix` in `namespace` (`*`: every namespace), by namespace and path. */
  list(prefix = '', namespace: string = DEFAULT_NAMESPACE): VariableMetadata[] {
    const { values, damaged: bad } = this.store.entries('vars');
    if (bad.length > 0) throw damaged(this.store, bad[0]!.key);
    const out: VariableMetadata[] = [];
    for (const { key, value } of values) {
      if (!isVariable(value)) throw damaged(this.store, key);
      if ((namespace === '*' || value.Namespace === namespace) && value.Path.startsWith(prefix)) out.push(metadataOf(value));
    }
    return out.sort(byNamespaceAndPath);
  }

  /** The agent's store reads every variable: the API checks callers by route (src/api/acl.ts). */
  allowed(): boolean {
    return true;
  }

  /** Every committed change, from now on. */
  get changes$(): Observable<VariableChange> {
    return this.changes.asObservable();
  }

  /**
   * Every committed write with the metadata the event stream shows, from now on, told before a write of a later
   * index is (the API publishes these as the Variables topic). A delete of a damaged entry has none: it is not told.
   */
  get written$(): Observable<VariableWritten> {
    return this.writes.asObservable();
  }

  /** The newest index of any variable write or delete (Nomad's index of the variables table), 0 for none. */
  get tableIndex(): number {
    const v = this.store.get('meta', 'varsIndex');
    return typeof v === 'number' ? v : 0;
  }

  /**
   * Writes `items` at `path` in `namespace`; with `cas`, only when the variable's ModifyIndex is `cas`
   * (0: only when there is none), otherwise answers the conflict and writes nothing. Throws a
   * VariableError for a request Nomad refuses and a StoreCommitError when the commit fails.
   */
  put(namespace: string, path: string, items: VariableItems, opts: { cas?: number } = {}): Promise<Written | Conflict> {
    checkVariable(namespace, path, items);
    return this.serially(async () => {
      const existing = this.get(path, namespace);
      const conflict = casConflict(namespace, path, existing, opts.cas);
      if (conflict) return conflict;
      const index = this.index.next();
      const now = unixNanos(this.now());
      const variable: Variable = {
        Namespace: namespace,
        Path: path,
        CreateIndex: existing?.CreateIndex ?? index,
        ModifyIndex: index,
        CreateTime: existing?.CreateTime ?? now,
        ModifyTime: now,
        Items: { ...items },
      };
      await this.committed(index, (tx) => tx.put('vars', keyOf(namespace, path), variable), () => {
        this.changes.next({ namespace, path, index, deleted: false });
        this.writes.next({ type: 'VariableUpserted', variable: metadataOf(variable), index });
      });
      return { ok: true as const, variable, index };
    });
  }

  /**
   * Deletes the variable at `path` in `namespace`; with `cas`, only when its ModifyIndex is `cas` (0: only
   * when there is none, which deletes nothing), otherwise answers the conflict. Deleting what is not there
   * succeeds, as in Nomad.
   */
  delete(namespace: string, path: string, opts: { cas?: number } = {}): Promise<Deleted | Conflict> {
    const problem = namespaceProblem(namespace) ?? (path === '' ? 'delete requires a Path' : undefined);
    if (problem !== undefined) throw new VariableError(problem);
    return this.serially(async () => {
      const key = keyOf(namespace, path);
      // A damaged entry can still be deleted (without a check-and-set index, which it has none of to check).
      const raw = this.store.raw('vars', key);
      let existing: Variable | undefined;
      try {
        existing = this.get(path, namespace);
      } catch (err) {
        if (opts.cas !== undefined) throw err;
      }
      if (raw === undefined && opts.cas === 0) return { ok: true as const, index: this.tableIndex };
      const conflict = casConflict(namespace, path, existing, opts.cas);
      if (conflict) return conflict;
      if (raw === undefined) return { ok: true as const, index: this.tableIndex };
      const index = this.index.next();
      await this.committed(index, (tx) => tx.remove('vars', key), () => {
        this.changes.next({ namespace, path, index, deleted: true });
        if (existing) this.writes.next({ type: 'VariableDeleted', variable: metadataOf(existing), index });
      });
      return { ok: true as const, index, ...(existing && { deleted: metadataOf(existing) }) };
    });
  }

  /** What the task of `claim` may read: its job's implicit paths in its own namespace, and nothing else. */
  forTask(claim: TaskClaim): VariableSource {
    const allowed = (path: string, namespace: string = claim.namespace) => taskMayRead(claim, namespace, path);
    return {
      get: (path, namespace = claim.namespace) => (allowed(path, namespace) ? this.get(path, namespace) : undefined),
      list: (prefix, namespace = claim.namespace) => this.list(prefix, namespace).filter((m) => allowed(m.Path, m.Namespace)),
      allowed,
      changes$: this.changes$.pipe(filter((c) => allowed(c.path, c.namespace))),
    };
  }

  /** Commits `write` at `index` with the table's index and, once durable, announces it and runs `told` (Indexer.commit). */
  private committed(index: number, write: (tx: WriteTx) => void, told: () => void): Promise<void> {
    const withTableIndex = (tx: WriteTx) => {
      write(tx);
      tx.put('meta', 'varsIndex', index);
    };
    if (this.index.commit) return this.index.commit(index, withTableIndex, told);
    return this.commitAlone(index, withTableIndex, told);
  }

  /** Without the agent: each write is serial and took its index here, so it is the newest once committed. */
  private async commitAlone(index: number, write: (tx: WriteTx) => void, told: () => void): Promise<void> {
    await this.store.commit((tx) => {
      write(tx);
      tx.index(index);
    });
    this.index.changed(index);
    told();
  }

  /** Runs `write` after every write before it has finished: checks and commits never interleave. */
  private serially<T>(write: () => Promise<T>): Promise<T> {
    const run = this.queue.then(write, write);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** The conflict a check-and-set write meets, or undefined when its check passes (or it has none). */
function casConflict(namespace: string, path: string, existing: Variable | undefined, cas: number | undefined): Conflict | undefined {
  if (cas === undefined) return undefined;
  if (cas === 0) return existing === undefined ? undefined : { ok: false, conflict: existing };
  if (existing === undefined) return { ok: false, conflict: zeroVariable(namespace, path) };
  return existing.ModifyIndex === cas ? undefined : { ok: false, conflict: existing };
}

/** The "plausible zero value" Nomad answers when a write expected a variable that is not there. */
function zeroVariable(namespace: string, path: string): Variable {
  return { Namespace: namespace, Path: path, CreateIndex: 0, ModifyIndex: 0, CreateTime: 0, ModifyTime: 0, Items: {} };
}

function damaged(store: AgentStore, key: string): VariableStoreError {
  return new VariableStoreError(`${store.path}: vars/${key} is damaged (not a variable record); delete it with 'allocrun var purge' or restore a snapshot`);
}

/** An index of its own for a store used without the API: it goes on from what the store last recorded. */
function counterFrom(start: number): Indexer {
  let value = Math.max(start, 1);
  return { next: () => ++value, changed: () => undefined };
}

const instances = new WeakMap<AgentStore, VariableStore>();

/**
 * The one VariableStore of `store`: the API writes through it and the hooks read and watch it, so every
 * write reaches every watcher. Made on first use.
 */
export function variablesOf(store: AgentStore): VariableStore {
  let v = instances.get(store);
  if (!v) instances.set(store, (v = new VariableStore(store)));
  return v;
}
