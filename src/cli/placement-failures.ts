/**
 * What `allocrun job run` says when the scheduler could not place every allocation, in the words of Nomad's
 * job-run monitor (command/monitor.go): the evaluation, each group with how many it failed to place and the
 * exhausted dimensions or the constraint that filtered the node, and the blocked evaluation that waits for capacity. Nomad then exits 2.
 */

/** The parts of an evaluation (`GET /v1/evaluation/:id`) the report reads. */
export interface EvaluationBody {
  ID: string;
  Status: string;
  FailedTGAllocs?: Record<string, { NodesEvaluated?: number; NodesExhausted?: number; CoalescedFailures?: number; DimensionExhausted?: Record<string, number> | null; ConstraintFiltered?: Record<string, number> | null }> | null;
  BlockedEval?: string;
}

/** Nomad's exit status for a registration whose allocations could not all be placed. */
export const PLACEMENT_FAILED_EXIT = 2;

/** The report's lines, none when every allocation was placed. */
export function placementFailureLines(ev: EvaluationBody): string[] {
  const groups = Object.entries(ev.FailedTGAllocs ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (groups.length === 0) return [];
  const lines = [`==> Evaluation "${ev.ID.slice(0, 8)}" finished with status "${ev.Status}" but failed to place all allocations:`];
  for (const [group, metric] of groups) {
    const failed = (metric.CoalescedFailures ?? 0) + 1;
    lines.push(`    Task Group "${group}" (failed to place ${failed} allocation${failed === 1 ? '' : 's'}):`);
    if (metric.NodesEvaluated === 0) lines.push('      * No nodes were eligible for evaluation');
    for (const [constraint, n] of Object.entries(metric.ConstraintFiltered ?? {})) lines.push(`      * Constraint "${constraint}": ${n} nodes excluded by filter`);
    if (metric.NodesExhausted) lines.push(`      * Resources exhausted on ${metric.NodesExhausted} nodes`);
    for (const [dimension, n] of Object.entries(metric.DimensionExhausted ?? {})) lines.push(`      * Dimension "${dimension}" exhausted on ${n} nodes`);
  }
  if (ev.BlockedEval) lines.push(`    Evaluation "${ev.BlockedEval.slice(0, 8)}" waiting for additional capacity to place remainder`);
  return lines;
}
