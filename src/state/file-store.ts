/**
 * A StateStore on plain files: `<dataDir>/allocs/<id>/state.json`, beside the alloc dir the runner builds
 * there. Each save writes a spare file and renames it over the old one, so a reader (or a crash) never sees
 * half a record; saves of one allocation are queued so an older state never lands after a newer one.
 * State files hold every task's environment: they are 0600, and the data dir and `allocs/` 0700.
 * A damaged record is reported with its path and skipped, so it never hides the healthy ones.
 */
import { mkdirSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checkRecord } from './record-check.ts';
import { replaceFile, spareFilesOf } from './replace-file.ts';
import { StateStoreError, type AllocRecord, type StateScan, type StateStore } from './store.ts';

/** The contract this store implements, re-exported so callers need one import. */
export { StateStoreError, type AllocRecord, type StateScan, type StateStore } from './store.ts';

/** Creates the data dir (0700 when this creates it) and its `allocs/` (always 0700: only the agent reads it). */
export function ensureDataDir(dataDir: string): void {
  mkdirSync(join(dataDir, 'allocs'), { recursive: true, mode: 0o700 });
}

/**
 * Lets other users pass through the data dir and `allocs/` (0711) to the task dirs they own, by path:
 * a task running as `nobody` opens `$NOMAD_TASK_DIR/...`, yet lists nothing and reads nothing of the
 * agent's (the store, the token and the socket are 0600). Each becomes exactly passable: search for group
 * and others added, any read or write of theirs taken away (allocs/ may have been made 0755 by a hook).
 */
export async function openPassage(dataDir: string): Promise<void> {
  await mkdir(join(dataDir, 'allocs'), { recursive: true, mode: 0o711 });
  for (const dir of [dataDir, join(dataDir, 'allocs')]) {
    const { mode } = await stat(dir);
    if ((mode & 0o011) !== 0o011) await chmod(dir, (mode & 0o7700) | 0o011);
  }
}

const STATE_FILE = 'state.json';
/** How many state files a scan reads at once: enough to keep the thread pool (4 threads) busy. */
const SCAN_READS = 16;

/** File-backed StateStore rooted at `dataDir`. */
export class FileStateStore implements StateStore {
  private readonly queues = new Map<string, Promise<void>>();
  private dirReady: Promise<void> | undefined;

  constructor(readonly dataDir: string) {}

  /** The directory of one allocation (shared with its alloc dir). */
  allocDir(allocId: string): string {
    checkId(allocId);
    return join(this.dataDir, 'allocs', allocId);
  }

  locate(allocId: string): string {
    return this.statePath(allocId);
  }

  /** The state file of one allocation. */
  statePath(allocId: string): string {
    return join(this.allocDir(allocId), STATE_FILE);
  }

  save(allocId: string, record: AllocRecord): Promise<void> {
    let path: string;
    try {
      path = this.statePath(allocId);
    } catch (err) {
      // Refused through the promise, as every StateStore method: a caller's .catch() must see it.
      return Promise.reject(err);
    }
    // Serialised after any save still in flight for this allocation, and run even if that one failed.
    const prev = this.queues.get(allocId) ?? Promise.resolve();
    const next = prev.catch(() => {}).then(() => this.write(path, record));
    this.queues.set(allocId, next);
    void next.finally(() => {
      if (this.queues.get(allocId) === next) this.queues.delete(allocId);
    }).catch(() => {});
    return next;
  }

  async load(allocId: string): Promise<AllocRecord | undefined> {
    return readRecord(this.statePath(allocId), allocId);
  }

  async list(): Promise<AllocRecord[]> {
    return (await this.scan()).records;
  }

  async scan(opts: { quarantine?: boolean } = {}): Promise<StateScan> {
    let ids: string[];
    try {
      ids = await readdir(join(this.dataDir, 'allocs'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], problems: [] };
      throw new StateStoreError(`cannot list allocations in ${this.dataDir}: ${(err as Error).message}`, this.dataDir, { cause: err });
    }
    ids.sort();
    // Read SCAN_READS files at a time: one by one, a restart of thousands of allocations mostly waited on
    // each read's round trip to the thread pool. Results keep the directory order.
    const read: ({ rec?: AllocRecord } | { problem: StateStoreError })[] = new Array(ids.length);
    let next = 0;
    const reader = async () => {
      for (let i = next++; i < ids.length; i = next++) {
        const id = ids[i]!;
        // Alloc dirs of runners that ran without a store have no state file: not an allocation we know.
        read[i] = await readRecord(join(this.dataDir, 'allocs', id, STATE_FILE), id).then(
          (rec) => ({ rec }),
          (err: unknown) => ({ problem: err as StateStoreError }),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(SCAN_READS, ids.length) }, reader));
    const records: AllocRecord[] = [];
    const problems: StateStoreError[] = [];
    for (const [i, r] of read.entries()) {
      if ('problem' in r) problems.push(opts.quarantine ? await this.quarantine(ids[i]!, r.problem) : r.problem);
      else if (r.rec) records.push(r.rec);
    }
    return { records: records.sort((a, b) => (a.createdAt ?? a.updatedAt) - (b.createdAt ?? b.updatedAt)), problems };
  }

  async quarantine(allocId: string, problem: StateStoreError): Promise<StateStoreError> {
    const path = this.statePath(allocId);
    const aside = `${path}.corrupt-${new Date().toISOString().replace(/:/g, '-')}`;
    try {
      await rename(path, aside);
    } catch (err) {
      return new StateStoreError(`${problem.message}; moving it aside failed: ${(err as Error).message}`, path, { cause: problem });
    }
    return new StateStoreError(`${problem.message}; moved aside to ${aside}`, path, { cause: problem, movedTo: aside });
  }

  async remove(allocId: string): Promise<void> {
    await (this.queues.get(allocId) ?? Promise.resolve()).catch(() => {});
    await rm(this.statePath(allocId), { force: true });
    for (const spare of spareFilesOf(this.statePath(allocId))) await rm(spare, { force: true });
    // Leave the alloc dir if tasks left files there; remove it only when the record was all it held.
    await rmdir(this.allocDir(allocId)).catch(() => {});
  }

  private async makeAllocsDir(): Promise<void> {
    try {
      await mkdir(join(this.dataDir, 'allocs'), { recursive: true, mode: 0o700 });
      await chmod(join(this.dataDir, 'allocs'), 0o700);
    } catch (err) {
      this.dirReady = undefined; // the next save tries again
      throw err;
    }
  }

  private async write(path: string, record: AllocRecord): Promise<void> {
    try {
      // One check of allocs/ per store, shared by every save in flight (a restore starts thousands at once).
      this.dirReady ??= this.makeAllocsDir();
      await this.dirReady;
      // Compact: an agent saves on every step and reads every record at restore; indenting doubled the bytes.
      const text = `${JSON.stringify(record)}\n`;
      try {
        await replaceFile(path, text);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // The allocation's first save (or its dir was removed since): make the dir and write again. Every
        // later save skips the mkdir.
        await mkdir(dirname(path), { recursive: true, mode: 0o700 });
        await replaceFile(path, text);
      }
    } catch (err) {
      throw new StateStoreError(`cannot write ${path}: ${(err as Error).message}`, path, { cause: err });
    }
  }
}

/** An id becomes a directory name: refuse anything that would escape `allocs/`. */
function checkId(allocId: string): void {
  if (allocId === '' || allocId === '.' || allocId === '..' || /[/\\\0]/.test(allocId)) {
    throw new StateStoreError(`allocation id ${JSON.stringify(allocId)} cannot be used as a directory name`, allocId);
  }
}

async function readRecord(path: string, allocId: string): Promise<AllocRecord | undefined> {
  let text = await readText(path);
  if (text === undefined) return undefined;
  try {
    return parseRecord(text, allocId);
  } catch {
    // A save reuses the inode it replaced (replace-file.ts): a reader that opened the file just before two
    // saves may read the spare being rewritten. The name always holds a whole record, so read it again.
    const again = await readText(path);
    if (again === undefined) return undefined;
    if (again !== text) text = again;
  }
  try {
    return parseRecord(text, allocId);
  } catch (err) {
    const why = text.trim() === '' ? 'the file is empty' : (err as Error).message;
    throw new StateStoreError(`${path} is not a valid allocation record: ${why}`, path, { cause: err });
  }
}

function parseRecord(text: string, allocId: string): AllocRecord {
  return checkRecord(JSON.parse(text), allocId);
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw new StateStoreError(`cannot read ${path}: ${(err as Error).message}`, path, { cause: err });
  }
}
