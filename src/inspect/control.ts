/**
 * `allocRunnerControl(lookup)`: the usual `control` for `serveInspector`, routing the page's commands to
 * allocation runners by id path. Runners are typed by shape so inspect/ does not import the runtime.
 */
import type { InspectorCommandEvent } from './protocol.ts';
import type { InspectorControl } from './server.ts';

/** What routing needs from an allocation runner (`createAllocRunner`'s result has it). */
export interface ControllableAllocRunner {
  send(event: { type: 'KILL' } | { type: 'RESTART'; task?: string; failure?: boolean } | { type: 'SIGNAL'; task?: string; signal: string }): void;
  readonly actor: { getSnapshot(): { children: unknown } };
}

/**
 * `['alloc']` → the alloc actor; `['alloc', 'task']` → RESTART and SIGNAL through the alloc (so it tracks
 * them), KILL straight to the task actor (the alloc has no per-task kill). Anything deeper is refused.
 */
export function allocRunnerControl(lookup: (allocId: string) => ControllableAllocRunner | undefined): InspectorControl {
  return (path: string[], event: InspectorCommandEvent) => {
    const [allocId, task, ...rest] = path;
    const runner = allocId === undefined ? undefined : lookup(allocId);
    if (!runner) throw new Error(`no allocation ${JSON.stringify(allocId)} here`);
    if (rest.length > 0) throw new Error(`commands go to an allocation or a task, not to ${path.join(' / ')}`);
    if (task === undefined) return runner.send(event);
    const children = runner.actor.getSnapshot().children as Record<string, { send(ev: { type: string }): void; logic?: object } | undefined>;
    const child = children[task];
    // Task runners are the alloc's machine children; hook and driver calls are promise actors.
    if (!child || typeof child.logic !== 'object' || !('root' in child.logic)) {
      throw new Error(`allocation ${allocId} has no task ${JSON.stringify(task)}`);
    }
    if (event.type === 'KILL') return child.send({ type: 'KILL' });
    return runner.send({ ...event, task });
  };
}
