/**
 * The allocation records of a data dir, whoever wrote it: an agent's store (`state.mdb`, opened read-only,
 * so it can be read while the agent runs) or the files `allocrun run` writes. For `allocrun status`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AgentStore, STORE_FILE } from './agent-store.ts';
import { FileStateStore } from './file-store.ts';
import type { AllocRecord, StateScan } from './store.ts';

/** Every readable record of `dataDir`, and a StateStoreError naming each damaged one. */
export async function scanDataDir(dataDir: string): Promise<StateScan> {
  if (!existsSync(join(dataDir, STORE_FILE))) return new FileStateStore(dataDir).scan();
  const store = AgentStore.open(dataDir, { readOnly: true, create: false });
  try {
    const fromStore = await store.runners().scan!();
    // A runner's record holds the spec it was started with; a stop or purge committed later is in the store's
    // allocations table (its `desired`), which is what the agent's API answers: status shows that one too.
    const records = fromStore.records.map((r) => {
      const desired = (store.get('allocs', r.spec.id) as { desired?: unknown } | undefined)?.desired;
      return isDesired(desired) ? { ...r, spec: { ...r.spec, desiredStatus: desired } } : r;
    });
    // Allocations `allocrun run` left in the same data dir are still files: show both.
    const fromFiles = await new FileStateStore(dataDir).scan();
    const known = new Set(records.map((r) => r.spec.id));
    return { records: [...records, ...fromFiles.records.filter((r) => !known.has(r.spec.id))], problems: [...fromStore.problems, ...fromFiles.problems] };
  } finally {
    await store.close();
  }
}

const isDesired = (v: unknown): v is NonNullable<AllocRecord['spec']['desiredStatus']> => v === 'run' || v === 'stop' || v === 'evict';
