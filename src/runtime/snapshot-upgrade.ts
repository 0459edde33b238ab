/**
 * Persisted snapshots from before the runners' contexts were grouped (allocrun 0.1.0 state files kept the
 * task runner's `allocId`, `handle`, `decision`… and the alloc runner's `seed`, `runComplete`,
 * `coordinator`… at the top level; they now live under `settings`, `run`, `restarts`, `updates`, and
 * `settings`, `taskFlags`, `gates`). An agent upgraded while its tasks run must still resume them, so old
 * contexts are rewritten into the new shape before the actor is restored. Likewise the alloc's state value from
 * before `running` became `steady` / `busy` (its three regions were `running`'s own). Pure data in, data out.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Drops undefined fields, as the JSON the snapshot is stored as would. */
function defined(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** A task-runner context in the current shape; one already in it (or not a task context) is returned as is. */
export function upgradeTaskContext(ctx: Json): Json {
  if ('settings' in ctx || !('allocId' in ctx)) return ctx;
  const {
    allocId, jobType, restartPolicy, maxKillTimeout, parkWhenDead,
    tracker, seed, decision,
    startAttempt, handle, stopReason, restartRequest, startError, lastExit,
    updateQueued, alloc, updating,
    ...rest
  } = ctx;
  return {
    ...rest,
    settings: defined({ allocId, jobType, restartPolicy, maxKillTimeout, parkWhenDead }),
    restarts: defined({ tracker, seed, decision }),
    run: defined({ attempt: startAttempt ?? 0, handle, stopReason, restartRequest, startError, lastExit }),
    updates: defined({ queued: updateQueued ?? false, alloc, updating }),
  };
}

/** An alloc-runner context in the current shape; one already in it is returned as is. */
export function upgradeAllocContext(ctx: Json): Json {
  if ('settings' in ctx || !('taskHooks' in ctx)) return ctx;
  const { taskHooks, maxKillTimeout, seed, restartPending, taskRejections, runComplete, detached, coordinator, open, gatesEnabled, ...rest } = ctx;
  return {
    ...rest,
    settings: defined({ taskHooks, maxKillTimeout, seed }),
    taskFlags: { restartPending: restartPending ?? {}, rejections: taskRejections ?? {}, runComplete: runComplete ?? {}, detached: detached ?? {} },
    gates: { coordinator: coordinator ?? 'init', open: open ?? [], enabled: gatesEnabled === true },
  };
}

/** The regions an alloc's `running` had at its top before `running.steady` / `running.busy` (all of them). */
const RUNNING_REGIONS = ['restarts', 'kill', 'updates'] as const;

/**
 * An alloc runner's state value in the current shape. `running` was parallel (its three regions at its top);
 * the regions now live under `running.busy`, entered once one has work, and `running.steady` stands for all
 * three idle. A value already in the current shape (or not an alloc's) is returned as it is.
 */
export function upgradeAllocValue(value: unknown): unknown {
  if (!isObject(value) || !isObject(value.running)) return value;
  const running = value.running;
  const keys = Object.keys(running);
  if (keys.length !== RUNNING_REGIONS.length || !RUNNING_REGIONS.every((r) => r in running)) return value;
  const idle = RUNNING_REGIONS.every((r) => running[r] === 'idle');
  return { ...value, running: idle ? 'steady' : { busy: running } };
}

/** A task runner's persisted snapshot with its context upgraded. */
export function upgradeTaskSnapshot(snapshot: unknown): unknown {
  if (!isObject(snapshot) || !isObject(snapshot.context)) return snapshot;
  const context = upgradeTaskContext(snapshot.context);
  return context === snapshot.context ? snapshot : { ...snapshot, context };
}

/**
 * An alloc runner's persisted snapshot with its state value, its context and every task runner child's context
 * upgraded, and its task runners no longer relaying their snapshots (they tell the alloc their news, machines/task-news.ts).
 */
export function upgradeAllocSnapshot(snapshot: unknown): unknown {
  if (!isObject(snapshot) || !isObject(snapshot.children) || !isObject(snapshot.context)) return snapshot;
  const context = upgradeAllocContext(snapshot.context);
  const value = upgradeAllocValue(snapshot.value);
  const tasks = Array.isArray((snapshot.context.alloc as Json | undefined)?.tasks)
    ? ((snapshot.context.alloc as Json).tasks as Json[]).map((t) => t.name)
    : [];
  let changed = context !== snapshot.context || value !== snapshot.value;
  const children: Json = { ...snapshot.children };
  for (const name of tasks) {
    const child = children[name as string];
    if (!isObject(child)) continue;
    const upgraded = upgradeTaskSnapshot(child.snapshot);
    // Task runners were spawned relaying every snapshot to the alloc (`syncSnapshot`), a flag XState restores
    // with the child; they now tell the alloc of their news themselves, so the relay is turned off.
    const relayed = child.syncSnapshot === true;
    if (upgraded !== child.snapshot || relayed) {
      children[name as string] = { ...child, snapshot: upgraded, ...(relayed && { syncSnapshot: false }) };
      changed = true;
    }
  }
  return changed ? { ...snapshot, value, context, children } : snapshot;
}
