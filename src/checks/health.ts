/**
 * What the health watcher asks of checks when `health_check = "checks"` (Nomad's tracker,
 * watchNomadEvents): whether every check of the allocation passes now, and, at the healthy deadline,
 * which services held each task back.
 */
import { passesForHealth, type AllocationResults } from './result.ts';

/** The allocation's checks as the health watcher sees them. */
export interface HealthChecks {
  /** How many checks the allocation has (group and task services). */
  count: number;
  /** A check's on_update, by ID (`require_healthy` when unknown). */
  onUpdateOf(id: string): string;
  /** The results now and at every change; returns the unsubscribe. */
  watch(listener: (results: AllocationResults) => void): () => void;
}

/** Every check has a result and each lets the deployment through (pending never does). */
export function allChecksPass(results: AllocationResults, checks: Pick<HealthChecks, 'count' | 'onUpdateOf'>): boolean {
  const all = Object.values(results);
  return all.length >= checks.count && all.every((r) => passesForHealth(r, checks.onUpdateOf(r.ID)));
}

/**
 * The services whose checks did not pass, per task (`''` for group services), sorted and without repeats:
 * the "Services not healthy by deadline" of each task's Alloc Unhealthy event.
 */
export function servicesNotPassing(results: AllocationResults, checks: Pick<HealthChecks, 'onUpdateOf'>): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const r of Object.values(results)) {
    if (passesForHealth(r, checks.onUpdateOf(r.ID))) continue;
    const key = r.Task ?? '';
    if (!out.has(key)) out.set(key, new Set());
    out.get(key)!.add(r.Service);
  }
  return new Map([...out].map(([k, v]) => [k, [...v].sort()]));
}
