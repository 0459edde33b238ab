/**
 * `allocRunnerControl(lookup)`: the usual `control` for `serveInspector`, routing the page's commands to
 * allocation runners by id path, and `allocRunnerLogs(lookup)`, the usual `logs`. Runners are typed by
 * shape so inspect/ does not import the runtime.
 */
import type { InspectorCommandEvent } from './protocol.ts';
import type { InspectorControl, InspectorLogs } from './feed.ts';

/** What routing needs from an allocation runner (`createAllocRunner`'s result has it). */
export interface ControllableAllocRunner {
  send(event: { type: 'KILL' } | { type: 'RESTART'; task?: string; failure?: boolean } | { type: 'SIGNAL'; task?: string; signal: string }): void;
  readonly actor: { getSnapshot(): { children: unknown; status?: string; context?: unknown } };
  /** The runtime's refusals (`command.rejected`): a command it refuses while being sent is answered with its message. */
  readonly rejections$?: { subscribe(fn: (r: { command: string; message: string }) => void): { unsubscribe(): void } };
  /** A task's log lines through its driver's `Controller.logs()`, when the runtime offers them. */
  logs?(task: string, opts: { follow?: boolean; tail?: number }): ReturnType<InspectorLogs>;
}

function taskStateOf(runner: ControllableAllocRunner, task: string): string | undefined {
  const ctx = runner.actor.getSnapshot().context as { taskStates?: Record<string, { state?: string }> } | undefined;
  return ctx?.taskStates?.[task]?.state;
}

/** Sends, and throws the runtime's rejection if it refused the command while handling it (XState emits synchronously). */
function sendOrThrow(runner: ControllableAllocRunner, send: () => void): void {
  const refused: string[] = [];
  const sub = runner.rejections$?.subscribe((r) => refused.push(r.message));
  try {
    send();
  } finally {
    sub?.unsubscribe();
  }
  if (refused.length > 0) throw new Error(refused.join('; '));
}

/**
 * `['alloc']` → the alloc actor; `['alloc', 'task']` → RESTART and SIGNAL through the alloc (so it tracks
 * them), KILL straight to the task actor (the alloc has no per-task kill). Anything deeper is refused, and
 * so are commands that would do nothing: a KILL to a dead task, to a complete (failed, lost) allocation or to a
 * finished runner.
 */
export function allocRunnerControl(lookup: (allocId: string) => ControllableAllocRunner | undefined): InspectorControl {
  return (path: string[], event: InspectorCommandEvent) => {
    const [allocId, task, ...rest] = path;
    const runner = allocId === undefined ? undefined : lookup(allocId);
    if (!runner) throw new Error(`no allocation ${JSON.stringify(allocId)} here`);
    if (rest.length > 0) throw new Error(`commands go to an allocation or a task, not to ${path.join(' / ')}`);
    const snap = runner.actor.getSnapshot();
    if (snap.status !== undefined && snap.status !== 'active') {
      throw new Error(`cannot ${event.type.toLowerCase()} allocation ${allocId}: its runner has finished (${snap.status})`);
    }
    // Nomad's words for a stop that has nothing left to stop: the client status.
    const clientStatus = (snap.context as { clientStatus?: string } | undefined)?.clientStatus;
    if (task === undefined && event.type === 'KILL' && (clientStatus === 'complete' || clientStatus === 'failed' || clientStatus === 'lost')) {
      throw new Error(`allocation is ${clientStatus}`);
    }
    if (task === undefined) return sendOrThrow(runner, () => runner.send(event));
    const children = snap.children as Record<string, { send(ev: { type: string }): void; logic?: object } | undefined>;
    const child = children[task];
    // Task runners are the alloc's machine children; hook and driver calls are promise actors.
    if (!child || typeof child.logic !== 'object' || !('root' in child.logic)) {
      throw new Error(`allocation ${allocId} has no task ${JSON.stringify(task)}`);
    }
    if (event.type === 'KILL') {
      if (taskStateOf(runner, task) === 'dead') throw new Error(`cannot kill task ${JSON.stringify(task)}: it is already dead`);
      return sendOrThrow(runner, () => child.send({ type: 'KILL' }));
    }
    return sendOrThrow(runner, () => runner.send({ ...event, task }));
  };
}

/** Routes `/logs` to the runner's `logs(task)`; a clear error when the allocation, the task or log access is missing. */
export function allocRunnerLogs(lookup: (allocId: string) => ControllableAllocRunner | undefined): InspectorLogs {
  return (allocId, task, opts) => {
    const runner = lookup(allocId);
    if (!runner) throw new Error(`no allocation ${JSON.stringify(allocId)} here`);
    if (taskStateOf(runner, task) === undefined) throw new Error(`allocation ${allocId} has no task ${JSON.stringify(task)}`);
    if (!runner.logs) throw new Error('this runtime cannot read task logs back (its runners have no logs())');
    return runner.logs(task, opts);
  };
}
