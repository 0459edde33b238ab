/**
 * The allocation records of a data dir, whoever wrote it: an agent's store (`state.mdb`, opened read-only,
 * so it can be read while the agent runs) or the files `allocrun run` writes. For `allocrun status`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AgentStore, STORE_FILE } from './agent-store.ts';
import { FileStateStore } from './file-store.ts';
import type { StateScan } from './store.ts';

/** Every readable record of `dataDir`, and a StateStoreError naming each damaged one. */
export async function scanDataDir(dataDir: string): Promise<StateScan> {
  if (!existsSync(join(dataDir, STORE_FILE))) return new FileStateStore(dataDir).scan();
  const store = AgentStore.open(dataDir, { readOnly: true, create: false });
  try {
    const fromStore = await store.runners().scan!();
    // Allocations `allocrun run` left in the same data dir are still files: show both.
    const fromFiles = await new FileStateStore(dataDir).scan();
    const known = new Set(fromStore.records.map((r) => r.spec.id));
    return { records: [...fromStore.records, ...fromFiles.records.filter((r) => !known.has(r.spec.id))], problems: [...fromStore.problems, ...fromFiles.problems] };
  } finally {
    await store.close();
  }
}
