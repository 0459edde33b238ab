/**
 * The alloc runner's record of its service checks (what the inspector shows in an allocation's Checks
 * table): the checks hook sends CHECK_STATUS when a check's status changes and CHECKS_REMOVED when checks
 * stop for good, so the context holds one small line per live check. Pure functions over the context.
 */
import type { AllocCheckStatus, AllocRunnerContext, AllocRunnerEvent } from './alloc-runner-types.ts';
import { checkOutputOf } from './model.ts';

export { CHECK_OUTPUT_LIMIT, checkOutputOf } from './model.ts';

/** The checks record after a CHECK_STATUS or CHECKS_REMOVED event; the same object when nothing changes. */
export function nextChecks(context: Pick<AllocRunnerContext, 'checks'>, event: AllocRunnerEvent): Record<string, AllocCheckStatus> | undefined {
  const current = context.checks;
  if (event.type === 'CHECK_STATUS') {
    const { id, name, service, task, status, output, time } = event.check;
    const line: AllocCheckStatus = { name, service, ...(task !== undefined && { task }), status, output: checkOutputOf(output), time };
    return { ...current, [id]: line };
  }
  if (event.type === 'CHECKS_REMOVED' && current && event.ids.some((id) => id in current)) {
    const next = { ...current };
    for (const id of event.ids) delete next[id];
    return next;
  }
  return current;
}
