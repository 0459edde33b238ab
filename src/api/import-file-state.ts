/**
 * A data dir written by the file-based agent (before the store): `api-state.json` (jobs, versions, what
 * the registry knew of each allocation) and `allocs/<id>/state.json` (each runner's record). On the first
 * start with the store, both are imported in one transaction, then renamed `*.imported` so they are
 * neither read again nor lost. A file that cannot be read stops the import with its name: nothing is
 * imported by halves and nothing is dropped without a word.
 */
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { StoreDamagedError, type AgentStore } from '../state/agent-store.ts';
import { FileStateStore } from '../state/file-store.ts';
import type { AllocRecord } from '../state/store.ts';
import type { JobEntry, StoredAlloc } from './job-registry.ts';

/** The legacy registry file's name in the data dir. */
export const LEGACY_REGISTRY_FILE = 'api-state.json';

/** What the legacy registry file held. */
interface LegacyRegistry {
  index: number;
  jobs: JobEntry[];
  allocs: Omit<StoredAlloc, 'spec'>[];
}

/** What an import took over, and what it could not (each named). */
export interface ImportReport {
  jobs: number;
  allocs: number;
  runners: number;
  skipped: string[];
}

function readLegacyRegistry(path: string): LegacyRegistry | undefined {
  if (!existsSync(path)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new StoreDamagedError(`${path} cannot be imported: ${(err as Error).message}. It was left as it is; fix or move it aside, then start the agent again`, path, { cause: err });
  }
  const v = value as Partial<LegacyRegistry> | null;
  if (!v || typeof v !== 'object' || !Array.isArray(v.jobs) || !Array.isArray(v.allocs) || typeof v.index !== 'number') {
    throw new StoreDamagedError(`${path} cannot be imported: expected { index, jobs: [...], allocs: [...] }. It was left as it is; fix or move it aside, then start the agent again`, path);
  }
  v.jobs.forEach((j, i) => {
    if (!j || typeof j !== 'object' || typeof j.id !== 'string' || !Array.isArray(j.versions)) {
      throw new StoreDamagedError(`${path} cannot be imported: jobs[${i}] is not a job (${JSON.stringify(j)?.slice(0, 80)}). It was left as it is`, path);
    }
  });
  v.allocs.forEach((a, i) => {
    if (!a || typeof a !== 'object' || typeof a.id !== 'string' || typeof a.jobId !== 'string') {
      throw new StoreDamagedError(`${path} cannot be imported: allocs[${i}] is not an allocation (${JSON.stringify(a)?.slice(0, 80)}). It was left as it is`, path);
    }
  });
  return v as LegacyRegistry;
}

/** Imports the file-based state of `dataDir` into a new `store`; undefined when there was none to import. */
export async function importFileState(dataDir: string, store: AgentStore): Promise<ImportReport | undefined> {
  if (!store.isNew) return undefined;
  const registryPath = join(dataDir, LEGACY_REGISTRY_FILE);
  const registry = readLegacyRegistry(registryPath);
  const files = new FileStateStore(dataDir);
  const scan = await files.scan();
  if (!registry && scan.records.length === 0 && scan.problems.length === 0) return undefined;
  const skipped = scan.problems.map((p) => `${p.message} (left in place, not imported)`);
  const runners = new Map<string, AllocRecord>(scan.records.map((r) => [r.spec.id, r]));
  const allocs: StoredAlloc[] = [];
  for (const a of registry?.allocs ?? []) {
    const record = runners.get(a.id);
    if (record) allocs.push({ ...a, spec: record.spec });
    else skipped.push(`allocation ${a.id} of job ${JSON.stringify(a.jobId)} in ${registryPath} has no state file: it never started, and the next reconcile places its job's allocations again`);
  }
  await store.commit((tx) => {
    for (const j of registry?.jobs ?? []) tx.put('jobs', j.id, j);
    for (const a of allocs) tx.put('allocs', a.id, a);
    for (const r of runners.values()) tx.put('runners', r.spec.id, r);
    tx.index(registry?.index ?? 1);
  });
  // Imported: renamed, not removed, so an operator can still look; a later start does not import again.
  if (registry) renameSync(registryPath, `${registryPath}.imported`);
  for (const id of runners.keys()) {
    const path = files.statePath(id);
    if (existsSync(path)) renameSync(path, `${path}.imported`);
  }
  return { jobs: registry?.jobs.length ?? 0, allocs: allocs.length, runners: runners.size, skipped };
}
