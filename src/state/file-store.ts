/**
 * A StateStore on plain files: `<dataDir>/allocs/<id>/state.json`, beside the alloc dir the runner builds
 * there. Each save writes a temp file and renames it over the old one, so a reader (or a crash) never sees
 * half a record; saves of one allocation are queued so an older state never lands after a newer one.
 */
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StateStoreError, type AllocRecord, type StateStore } from './store.ts';

/** The contract this store implements, re-exported so callers need one import. */
export { StateStoreError, type AllocRecord, type StateStore } from './store.ts';

const STATE_FILE = 'state.json';

/** File-backed StateStore rooted at `dataDir`. */
export class FileStateStore implements StateStore {
  private readonly queues = new Map<string, Promise<void>>();
  private seq = 0;

  constructor(readonly dataDir: string) {}

  /** The directory of one allocation (shared with its alloc dir). */
  allocDir(allocId: string): string {
    checkId(allocId);
    return join(this.dataDir, 'allocs', allocId);
  }

  /** The state file of one allocation. */
  statePath(allocId: string): string {
    return join(this.allocDir(allocId), STATE_FILE);
  }

  save(allocId: string, record: AllocRecord): Promise<void> {
    const path = this.statePath(allocId);
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
    return readRecord(this.statePath(allocId));
  }

  async list(): Promise<AllocRecord[]> {
    let ids: string[];
    try {
      ids = await readdir(join(this.dataDir, 'allocs'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new StateStoreError(`cannot list allocations in ${this.dataDir}: ${(err as Error).message}`, this.dataDir, { cause: err });
    }
    const records: AllocRecord[] = [];
    for (const id of ids.sort()) {
      // Alloc dirs of runners that ran without a store have no state file: not an allocation we know.
      const rec = await readRecord(join(this.dataDir, 'allocs', id, STATE_FILE));
      if (rec) records.push(rec);
    }
    return records.sort((a, b) => (a.createdAt ?? a.updatedAt) - (b.createdAt ?? b.updatedAt));
  }

  async remove(allocId: string): Promise<void> {
    await (this.queues.get(allocId) ?? Promise.resolve()).catch(() => {});
    await rm(this.statePath(allocId), { force: true });
    // Leave the alloc dir if tasks left files there; remove it only when the record was all it held.
    await rmdir(this.allocDir(allocId)).catch(() => {});
  }

  private async write(path: string, record: AllocRecord): Promise<void> {
    const tmp = `${path}.${process.pid}.${++this.seq}.tmp`;
    try {
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(tmp, `${JSON.stringify(record, null, 2)}\n`);
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => {});
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

async function readRecord(path: string): Promise<AllocRecord | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw new StateStoreError(`cannot read ${path}: ${(err as Error).message}`, path, { cause: err });
  }
  try {
    const rec = JSON.parse(text) as AllocRecord;
    if (!rec || typeof rec !== 'object' || !rec.spec || !rec.state) throw new Error('not an allocation record');
    return rec;
  } catch (err) {
    throw new StateStoreError(`${path} is not a valid allocation record (${(err as Error).message}); remove it or the whole data dir`, path, { cause: err });
  }
}
