/**
 * The agent's one transactional store: an LMDB environment at `<data dir>/state.mdb` (0600) holding every
 * table the agent keeps (jobs with their versions, evaluations, allocations with their desired state, each
 * runner's snapshot, the API's index). A `commit` is one LMDB write transaction: it lands whole or not at
 * all, and its promise resolves only once the commit is synced to disk, so whoever answers a client after
 * it answers for something durable. Nomad's client keeps the same things in BoltDB.
 *
 * Values are JSON text this store parses itself, so a damaged value is reported with its table and key
 * instead of failing inside the database library; a damaged or unreadable store file is named and never
 * replaced by an empty one.
 */
import { chmodSync, closeSync, existsSync, openSync, readSync, statfsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { checkRecord } from './record-check.ts';
import { describeStoreProblem, type StoreProblem } from './store-problem.ts';
import { StateStoreError, type AllocRecord, type StateScan, type StateStore } from './store.ts';

/** The store's file name in the data dir. */
export const STORE_FILE = 'state.mdb';
/** The layout this code reads and writes; a store written by a newer allocrun is refused, not guessed at. */
const SCHEMA = 1;

/**
 * The tables, each a map from key to a JSON value. `quarantine` keeps damaged runner records, named;
 * `acl` the API's tokens (by accessor ID; secrets only as hashes); `vars` Nomad Variables (by namespace and
 * path, src/variables/variable-store.ts), secrets kept only here, in this 0600 file; `checks` the latest
 * status of each service check (by allocation and check ID, src/checks/check-persistence.ts); `periodic` each
 * periodic job's last launch (by job ID, src/api/periodic-launcher.ts).
 */
export type Table = 'meta' | 'jobs' | 'allocs' | 'evals' | 'runners' | 'quarantine' | 'acl' | 'vars' | 'checks' | 'periodic';
const TABLES: readonly Table[] = ['meta', 'jobs', 'allocs', 'evals', 'runners', 'quarantine', 'acl', 'vars', 'checks', 'periodic'];

/** What a table missing from a store opened read-only reads as. */
const EMPTY_TABLE = { get: () => undefined, getRange: () => [] } as unknown as Database<Buffer, string>;

/** A store file that cannot be opened or read: names the file and what is wrong with it (`problem`, when known). */
export class StoreDamagedError extends Error {
  readonly code = 'ErrStoreDamaged';
  /** What is wrong, as data: for a caller that names the file its own way. */
  readonly problem?: StoreProblem;
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown; problem?: StoreProblem },
  ) {
    super(message, options);
    this.name = 'StoreDamagedError';
    if (options?.problem) this.problem = options.problem;
  }
}

/** What to do about a store file refused on open; it is never replaced. */
const LEFT_AS_IT_IS = "It was left as it is; move it aside to start empty, or restore a snapshot ('allocrun operator snapshot restore')";

/** A StoreDamagedError for `path` whose message is built from `problem` (and, with `fix`, what to do). */
function refused(path: string, problem: StoreProblem, fix: string, cause?: unknown): StoreDamagedError {
  return new StoreDamagedError(`${describeStoreProblem(problem, path)}${fix}`, path, { problem, ...(cause !== undefined && { cause }) });
}

/** A commit that did not land (disk full, I/O error, read-only file system): nothing of it was written. */
export class StoreCommitError extends Error {
  readonly code = 'ErrStoreCommit';
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreCommitError';
  }
}

/** The writes of one transaction, made inside `commit`'s callback. */
export interface WriteTx {
  put(table: Table, key: string, value: unknown): void;
  remove(table: Table, key: string): void;
  /** Records `index` as the newest index handed out, unless a larger one already is. */
  index(index: number): void;
}

/** A value that could not be parsed, with where it lives. */
export interface DamagedValue {
  table: Table;
  key: string;
  why: string;
}

/** Test seams: a commit that fails as a full disk would, at the step a crash test wants. */
export interface StoreFaults {
  /** Called inside every commit before it is written, with the tables it writes; a throw fails the commit. */
  beforeCommit?(tables: readonly Table[]): void;
}

/** The agent's store; `openAgentStore` opens (or creates) one. */
export class AgentStore {
  private readonly tables: Record<Table, Database<Buffer, string>>;
  private closed = false;
  /** The API's newest index, recorded with every runner save (the registry sets it). */
  indexOf?: () => number;

  private constructor(
    readonly path: string,
    private readonly root: RootDatabase<Buffer, string>,
    private readonly faults: StoreFaults,
  ) {
    // A store opened read-only that an older allocrun wrote lacks the newer tables: they read as empty.
    this.tables = Object.fromEntries(TABLES.map((t) => [t, root.openDB<Buffer, string>({ name: t, encoding: 'binary' }) ?? EMPTY_TABLE])) as Record<Table, Database<Buffer, string>>;
  }

  /** Opens `<dataDir>/state.mdb`, creating it when `create` allows; refuses a damaged or newer file by name. */
  static open(dataDir: string, opts: { create?: boolean; readOnly?: boolean; faults?: StoreFaults } = {}): AgentStore {
    return AgentStore.openFile(join(dataDir, STORE_FILE), opts);
  }

  /** Opens the store file at `path` itself (a snapshot being checked, say). */
  static openFile(path: string, opts: { create?: boolean; readOnly?: boolean; faults?: StoreFaults } = {}): AgentStore {
    const existed = existsSync(path);
    if (!existed && opts.create === false) throw refused(path, { kind: 'missing' }, '');
    if (existed) checkFileShape(path);
    let root: RootDatabase<Buffer, string>;
    try {
      // overlappingSync off: a commit's promise then resolves after the commit is synced, not merely visible.
      root = open<Buffer, string>({ path, noSubdir: true, maxDbs: TABLES.length + 2, encoding: 'binary', overlappingSync: false, readOnly: opts.readOnly ?? false, cache: false });
    } catch (err) {
      throw refused(path, { kind: 'unopenable', detail: (err as Error).message }, `. ${LEFT_AS_IT_IS}`, err);
    }
    if (!opts.readOnly) {
      // The store holds every task's environment: only the agent's user may read it.
      for (const f of [path, `${path}-lock`]) if (existsSync(f)) chmodSync(f, 0o600);
    }
    const store = new AgentStore(path, root, opts.faults ?? {});
    let schema: unknown;
    try {
      schema = store.get('meta', 'schema');
    } catch (err) {
      // A damaged layout mark: refused like the rest, the file not held open.
      void root.close();
      throw err;
    }
    if (schema !== undefined && schema !== SCHEMA) {
      void root.close();
      throw refused(path, { kind: 'newer-layout', layout: schema, reads: SCHEMA }, '; it was left as it is');
    }
    return store;
  }

  /** Whether the store has ever been written (a new one has no schema mark yet). */
  get isNew(): boolean {
    return this.get('meta', 'schema') === undefined;
  }

  /** One value, parsed; a damaged value throws a StoreDamagedError naming table and key. */
  get(table: Table, key: string): unknown {
    const raw = this.tables[table].get(key);
    if (raw === undefined) return undefined;
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch (err) {
      throw refused(this.path, { kind: 'value', table, key, why: `not valid JSON: ${(err as Error).message}` }, '', err);
    }
  }

  /** One value as the text stored, unparsed: what a damaged value is kept as when set aside. */
  raw(table: Table, key: string): string | undefined {
    return this.tables[table].get(key)?.toString('utf8');
  }

  /** Every value of `table` that parses, in key order, and each one that does not. */
  entries(table: Table): { values: { key: string; value: unknown }[]; damaged: DamagedValue[] } {
    const values: { key: string; value: unknown }[] = [];
    const damaged: DamagedValue[] = [];
    for (const { key, value } of this.tables[table].getRange({})) {
      try {
        values.push({ key, value: JSON.parse(value.toString('utf8')) });
      } catch (err) {
        damaged.push({ table, key, why: `not valid JSON (${(err as Error).message})` });
      }
    }
    return { values, damaged };
  }

  /** The newest index any commit recorded (0 for a new store). */
  get savedIndex(): number {
    const v = this.get('meta', 'index');
    return typeof v === 'number' && Number.isFinite(v) ? v : 0;
  }

  /**
   * Records, durably and before returning, that indexes up to `upTo` may have been handed out: the agent
   * reserves indexes in blocks this way, so an agent that takes over the data dir (after a crash too) starts
   * past every index the last one served, as Nomad's Raft index never goes back.
   */
  reserveIndex(upTo: number): void {
    if (this.closed || upTo <= this.savedIndex) return;
    this.tables.meta.putSync('index', Buffer.from(JSON.stringify(upTo)));
  }

  /**
   * Runs `write` as one transaction and resolves once it is durable. A throw inside `write`, or a failed
   * commit, writes nothing and rejects (a StoreCommitError names the store and the cause).
   */
  async commit(write: (tx: WriteTx) => void): Promise<void> {
    if (this.closed) throw new StoreCommitError(`${this.path}: the store is closed`, this.path);
    // The writes are gathered first and applied in one go: lmdb-js keeps the puts of an asynchronous
    // transaction whose callback throws, so a throw half way through must happen before any put.
    const ops: ({ table: Table; key: string; value: Buffer } | { table: Table; key: string; value: undefined })[] = [];
    let index = 0;
    try {
      write({
        put: (table, key, value) => void ops.push({ table, key, value: Buffer.from(JSON.stringify(value)) }),
        remove: (table, key) => void ops.push({ table, key, value: undefined }),
        index: (i) => void (index = Math.max(index, i)),
      });
    } catch (err) {
      throw new StoreCommitError(`cannot commit to ${this.path}: ${(err as Error).message ?? String(err)}`, this.path, { cause: err });
    }
    let thrown: unknown;
    try {
      await this.root.transaction(() => {
        try {
          this.faults.beforeCommit?.(ops.map((op) => op.table));
        } catch (err) {
          thrown = err;
          throw err;
        }
        if (this.isNew) this.tables.meta.put('schema', Buffer.from(JSON.stringify(SCHEMA)));
        for (const op of ops) {
          if (op.value === undefined) void this.tables[op.table].remove(op.key);
          else void this.tables[op.table].put(op.key, op.value);
        }
        if (index > this.savedIndex) void this.tables.meta.put('index', Buffer.from(JSON.stringify(index)));
      });
    } catch (err) {
      const cause = thrown ?? (await commitCause(err));
      throw new StoreCommitError(`cannot commit to ${this.path}: ${(cause as Error).message ?? String(cause)}${this.spaceNote()}`, this.path, { cause });
    }
  }

  /** LMDB reports a full disk as an I/O error: say when the file system is (nearly) full. */
  private spaceNote(): string {
    try {
      const fs = statfsSync(dirname(this.path));
      const free = fs.bavail * fs.bsize;
      return free < 1024 * 1024 ? ` (the file system holding it has ${free} bytes free)` : '';
    } catch {
      return '';
    }
  }

  /** A consistent copy of the whole store at `to` (taken while the agent writes on). */
  async backup(to: string): Promise<void> {
    await this.root.backup(to, true);
    chmodSync(to, 0o600);
  }

  /** The runner records as a StateStore, for `createAgent`. */
  runners(): StateStore {
    return new RunnerTable(this);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.root.close();
  }
}

/**
 * Why a commit failed. lmdb-js rejects a failed commit with a generic error whose `commitError` promise
 * rejects with the cause (ENOSPC, MDB_MAP_FULL, EIO) once its writer thread reports it; that is what the
 * operator needs to read. Waited for briefly: the generic error is kept if the cause does not come.
 */
async function commitCause(err: unknown): Promise<unknown> {
  const pending = (err as { commitError?: Promise<unknown> } | null)?.commitError;
  if (!pending || typeof pending.then !== 'function') return err;
  let timer: NodeJS.Timeout | undefined;
  const cause = await Promise.race([
    pending.then(() => err, (real: unknown) => real),
    new Promise<unknown>((resolve) => (timer = setTimeout(() => resolve(err), 1_000))),
  ]);
  clearTimeout(timer);
  return cause;
}

/** LMDB's meta page marks: the magic number and the P_META page flag. */
const LMDB_MAGIC = 0xbeefc0de;
const P_META = 0x08;
/** Where LMDB keeps them in a meta page (lmdb-js's layout: a 24-byte page header, then MDB_meta). */
const META = { flags: 18, magic: 24, pageSize: 48, lastPage: 144, txnId: 152 } as const;

/**
 * LMDB maps the file into memory and trusts it: a file that is not a store, or one cut short, faults the
 * process on open or on first read instead of failing. So before opening, the two meta pages are checked
 * (magic, page size) and the file must hold every page the newer one counts; otherwise the file is named
 * and refused, and left as it is.
 */
function checkFileShape(path: string): void {
  const damaged = (why: string) => refused(path, { kind: 'damaged', why }, `. ${LEFT_AS_IT_IS}`);
  const size = statSync(path).size;
  const fd = openSync(path, 'r');
  try {
    const first = Buffer.alloc(META.txnId + 8);
    if (size < first.length || readSync(fd, first, 0, first.length, 0) < first.length) throw damaged(`its size (${size} bytes) is too small for an LMDB store`);
    const page = first.readUInt32LE(META.pageSize);
    if (page < 512 || page > 65536 || (page & (page - 1)) !== 0 || size < 2 * page) throw damaged(`it is not an LMDB store (no valid page size in its first meta page)`);
    if (size % page !== 0) throw damaged(`its size (${size} bytes) is not a whole number of ${page}-byte pages: it was cut short`);
    const second = Buffer.alloc(first.length);
    readSync(fd, second, 0, second.length, page);
    const metas = [first, second];
    for (const [i, m] of metas.entries()) {
      if (m.readUInt32LE(META.magic) !== LMDB_MAGIC || (m.readUInt16LE(META.flags) & P_META) === 0) throw damaged(`it is not an LMDB store (meta page ${i} has no LMDB mark)`);
    }
    const newest = first.readBigUInt64LE(META.txnId) >= second.readBigUInt64LE(META.txnId) ? first : second;
    const pages = Number(newest.readBigUInt64LE(META.lastPage)) + 1;
    if (pages * page > size) throw damaged(`it holds ${size / page} pages but its newest transaction uses ${pages}: it was cut short`);
  } finally {
    closeSync(fd);
  }
}

/** Each runner's record (`AllocRecord` plus its actor snapshot), kept in the `runners` table. */
class RunnerTable implements StateStore {
  constructor(private readonly store: AgentStore) {}

  async save(allocId: string, record: AllocRecord): Promise<void> {
    await this.store.commit((tx) => {
      tx.put('runners', allocId, record);
      if (this.store.indexOf) tx.index(this.store.indexOf());
    });
  }

  async load(allocId: string): Promise<AllocRecord | undefined> {
    const value = this.store.get('runners', allocId);
    return value === undefined ? undefined : checkRecord(value, allocId);
  }

  async list(): Promise<AllocRecord[]> {
    return (await this.scan()).records;
  }

  async remove(allocId: string): Promise<void> {
    await this.store.commit((tx) => tx.remove('runners', allocId));
  }

  locate(allocId: string): string {
    return `${this.store.path}: runners/${allocId}`;
  }

  /** Moves the record to `quarantine` under a key of its own: never overwritten, still there to look at. */
  async quarantine(allocId: string, problem: StateStoreError): Promise<StateStoreError> {
    const aside = `${allocId}@${new Date().toISOString()}`;
    try {
      const raw = this.store.raw('runners', allocId);
      await this.store.commit((tx) => {
        tx.put('quarantine', aside, { table: 'runners', key: allocId, why: problem.message, raw: raw ?? null });
        tx.remove('runners', allocId);
      });
    } catch (err) {
      return new StateStoreError(`${problem.message}; moving it aside failed: ${(err as Error).message}`, problem.path, { cause: problem });
    }
    return new StateStoreError(`${problem.message}; moved aside to quarantine/${aside}`, problem.path, { cause: problem, movedTo: `quarantine/${aside}` });
  }

  async scan(opts: { quarantine?: boolean } = {}): Promise<StateScan> {
    const { values, damaged } = this.store.entries('runners');
    const records: AllocRecord[] = [];
    const bad: DamagedValue[] = [...damaged];
    for (const { key, value } of values) {
      try {
        records.push(checkRecord(value, key));
      } catch (err) {
        bad.push({ table: 'runners', key, why: `not a valid allocation record: ${(err as Error).message}` });
      }
    }
    const problems: StateStoreError[] = [];
    for (const d of bad) {
      const problem = new StateStoreError(`${this.locate(d.key)} is ${d.why}`, this.locate(d.key));
      problems.push(opts.quarantine ? await this.quarantine(d.key, problem) : problem);
    }
    return { records: records.sort((a, b) => (a.createdAt ?? a.updatedAt) - (b.createdAt ?? b.updatedAt)), problems };
  }
}
