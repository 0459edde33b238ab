/**
 * What `allocrun job run` says when the scheduler could not place every allocation, in the words of Nomad's
 * job-run monitor (command/monitor.go, monitor and formatAllocMetrics): the evaluation, each group with how
 * many it failed to place (the first failure plus the coalesced ones) and that first failure's metric, and the
 * blocked evaluation that waits for capacity. Nomad then exits 2. Nomad walks its maps in Go's random order;
 * here groups and each map's keys are sorted, so the same evaluation always reads the same.
 */

/** Nomad's AllocationMetric, the parts the report reads (Go leaves empty maps and lists null). */
export interface AllocationMetricBody {
  NodesEvaluated?: number;
  NodesAvailable?: Record<string, number> | null;
  ClassFiltered?: Record<string, number> | null;
  ConstraintFiltered?: Record<string, number> | null;
  NodesExhausted?: number;
  ClassExhausted?: Record<string, number> | null;
  DimensionExhausted?: Record<string, number> | null;
  QuotaExhausted?: string[] | null;
  CoalescedFailures?: number;
}

/** The parts of an evaluation (`GET /v1/evaluation/:id`) the report reads. */
export interface EvaluationBody {
  ID: string;
  Status: string;
  FailedTGAllocs?: Record<string, AllocationMetricBody> | null;
  BlockedEval?: string;
  /** The deployment the registration started (a service job with an update block), else empty. */
  DeploymentID?: string;
}

/** Nomad's exit status for a registration whose allocations could not all be placed. */
export const PLACEMENT_FAILED_EXIT = 2;

/** Go's %q for the names printed (JSON's quoting agrees with it for printable text). */
const q = (s: string): string => JSON.stringify(s);

const sorted = (m: Record<string, number> | null | undefined): [string, number][] => Object.entries(m ?? {}).sort(([a], [b]) => a.localeCompare(b));

/** formatAllocMetrics without scores: one `* ...` line per fact, in Nomad's order, each after `prefix`. */
export function allocMetricLines(m: AllocationMetricBody, prefix: string): string[] {
  const lines: string[] = [];
  if (!m.NodesEvaluated) lines.push('* No nodes were eligible for evaluation');
  for (const [dc, n] of sorted(m.NodesAvailable)) if (n === 0) lines.push(`* No nodes are available in datacenter ${q(dc)}`);
  for (const [cls, n] of sorted(m.ClassFiltered)) lines.push(`* Class ${q(cls)}: ${n} nodes excluded by filter`);
  for (const [c, n] of sorted(m.ConstraintFiltered)) lines.push(`* Constraint ${q(c)}: ${n} nodes excluded by filter`);
  if (m.NodesExhausted && m.NodesExhausted > 0) lines.push(`* Resources exhausted on ${m.NodesExhausted} nodes`);
  for (const [cls, n] of sorted(m.ClassExhausted)) lines.push(`* Class ${q(cls)} exhausted on ${n} nodes`);
  for (const [dim, n] of sorted(m.DimensionExhausted)) lines.push(`* Dimension ${q(dim)} exhausted on ${n} nodes`);
  for (const dim of m.QuotaExhausted ?? []) lines.push(`* Quota limit hit ${q(dim)}`);
  return lines.map((l) => prefix + l);
}

/** The report's lines, none when every allocation was placed. */
export function placementFailureLines(ev: EvaluationBody): string[] {
  const groups = Object.entries(ev.FailedTGAllocs ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (groups.length === 0) return [];
  const lines = [`==> Evaluation "${ev.ID.slice(0, 8)}" finished with status "${ev.Status}" but failed to place all allocations:`];
  for (const [group, metric] of groups) {
    const coalesced = metric.CoalescedFailures ?? 0;
    lines.push(`    Task Group ${q(group)} (failed to place ${coalesced + 1} allocation${coalesced > 0 ? 's' : ''}):`);
    lines.push(...allocMetricLines(metric, '      '));
  }
  if (ev.BlockedEval) lines.push(`    Evaluation "${ev.BlockedEval.slice(0, 8)}" waiting for additional capacity to place remainder`);
  return lines;
}
