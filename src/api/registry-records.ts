/**
 * The registry's tables as the agent's store keeps them (jobs, evaluations, allocations), read back with a
 * check of each entry: a damaged one stops the agent with its table and key named, never a TypeError later.
 */
import { StoreDamagedError, type AgentStore } from '../state/agent-store.ts';
import type { EvalRecord, JobEntry, StoredAlloc } from './job-registry.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isJobEntry(v: unknown): string | undefined {
  if (!isObject(v)) return 'expected a job object';
  if (typeof v.id !== 'string' || !Array.isArray(v.versions) || v.versions.length === 0) return 'expected { id, versions: [...] }';
  for (const [i, ver] of v.versions.entries()) {
    if (!isObject(ver) || !isObject(ver.job) || !Array.isArray(ver.allocs) || typeof ver.version !== 'number') return `versions[${i}]: expected { version, job, allocs }`;
  }
  for (const k of ['createIndex', 'modifyIndex', 'jobModifyIndex']) if (typeof v[k] !== 'number') return `${k}: expected a number`;
  return typeof v.stop === 'boolean' ? undefined : 'stop: expected true or false';
}

function isEvalRecord(v: unknown): string | undefined {
  return isObject(v) && typeof v.ID === 'string' && typeof v.JobID === 'string' ? undefined : 'expected an evaluation { ID, JobID, ... }';
}

function isStoredAlloc(v: unknown): string | undefined {
  if (!isObject(v)) return 'expected an allocation object';
  if (typeof v.id !== 'string' || typeof v.jobId !== 'string' || typeof v.group !== 'string' || typeof v.index !== 'number') return 'expected { id, jobId, group, index, ... }';
  if (v.desired !== 'run' && v.desired !== 'stop' && v.desired !== 'evict') return 'desired: expected run, stop or evict';
  if (!isObject(v.spec) || v.spec.id !== v.id || !Array.isArray(v.spec.tasks)) return 'spec: expected the allocation spec (with its id and tasks)';
  return undefined;
}

/** Every value of `table`, each checked by `problem`; the first damaged one throws, named. */
function readTable<T>(store: AgentStore, table: 'jobs' | 'allocs' | 'evals', problem: (v: unknown) => string | undefined): { key: string; value: T }[] {
  const { values, damaged } = store.entries(table);
  const bad = [...damaged.map((d) => `${table}/${d.key}: ${d.why}`), ...values.flatMap(({ key, value }) => {
    const why = problem(value);
    return why ? [`${table}/${key}: ${why}`] : [];
  })];
  if (bad.length > 0) throw new StoreDamagedError(`${store.path} is damaged: ${bad.join('; ')}. Nothing was changed; restore a snapshot ('allocrun operator snapshot restore') or move the store aside`, store.path);
  return values as { key: string; value: T }[];
}

/** The jobs table, checked. */
export const readJobs = (store: AgentStore) => readTable<JobEntry>(store, 'jobs', isJobEntry);
/** The evaluations table, checked. */
export const readEvals = (store: AgentStore) => readTable<EvalRecord>(store, 'evals', isEvalRecord);
/** The allocations table, checked. */
export const readAllocs = (store: AgentStore) => readTable<StoredAlloc>(store, 'allocs', isStoredAlloc);
