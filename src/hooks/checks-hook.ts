/**
 * checks: runs the Nomad-provider service checks of an allocation (Nomad's checks_hook.go) and their
 * check_restart (Nomad's check watcher). Prerun writes each check's pending stub; a check first runs
 * half an interval after its task runs (Nomad's compromise between too early and a full interval), then
 * every interval after the last run ended, on the agent's shared scheduler. Results go to the check
 * store. An update adds and removes checks; preKill stops them and forgets their results, as Nomad
 * purges them; postrun and shutdown stop them (the results stay to be read), destroy forgets them.
 */
import type { Clock } from '../drivers/clock.ts';
import type { AllocSpec, AllocState, TaskSpec } from '../jobspec/types.ts';
import { checkOutputOf, isServerTerminal, type AllocCheckReport } from '../../machines/model.ts';
import { applyResult, armed, restartReason, type RestartCounter } from '../checks/check-restart.ts';
import { initialCounters, nextCounters, type StatusCounters } from '../checks/check-status.ts';
import type { CheckStore } from '../checks/check-store.ts';
import { runCheck as realRunCheck, type CheckQuery, type RawResult } from '../checks/checker.ts';
import { nomadChecksOf, type LookupOf, type NomadCheck } from '../checks/nomad-checks.ts';
import { WAITING_OUTPUT, type CheckQueryResult } from '../checks/result.ts';
import type { CancelRun, CheckScheduler } from '../checks/scheduler.ts';
import type { AllocRunnerHook } from './types.ts';


/** What the checks hook needs from its runner and agent. */
export interface ChecksHookOptions {
  alloc: AllocSpec;
  clock: Clock;
  /** The agent's shared timer source. */
  scheduler: CheckScheduler;
  /** Where results go (the agent's, so the API can read them). */
  store: CheckStore;
  /** The env a service's fields interpolate in: its task's, or the allocation's for `undefined`. */
  lookupOf: LookupOf;
  /** Subscribes to the allocation's state, current value first; returns the unsubscribe function. */
  watch(listener: (state: AllocState) => void): () => void;
  /** check_restart: restarts `task` (every running task when undefined) as a failure, with Nomad's reason. */
  restart(task: string | undefined, reason: string): void;
  /** The result's Group (Nomad's allocation name, `job.group[index]`); default `job.group`. */
  groupName?: string;
  /**
   * Told when a check's status changes (its first stub included) and when checks stop for good, so the
   * alloc runner's context shows them (the runner sends these to its actor); not on every run.
   */
  report?(event: AllocCheckReport): void;
  /** Runs one check once; tests replace it. */
  runCheck?: (q: CheckQuery, signal: AbortSignal) => Promise<RawResult>;
}

/** One observed check: its definition and what it remembers between runs. */
interface Observer {
  def: NomadCheck;
  counters: StatusCounters;
  restart?: RestartCounter;
  /** The start (ms) of the followed task(s) the check last saw; undefined while none runs. */
  seenStart?: number;
  /** Its first run was scheduled (half an interval after its task first ran). */
  started: boolean;
  next?: CancelRun;
  abort: AbortController;
  stopped: boolean;
}

/**
 * The checks hook. `resume()` starts it again in a runner restored while its tasks run (prerun is not
 * repeated); `halt()` stops its checks when the runner's actor is stopped without its hooks running.
 */
export type ChecksHook = AllocRunnerHook & {
  resume(alloc: AllocSpec): void;
  halt(): void;
  /** The on_update of an observed check, by ID (its fields interpolated, as its ID is). */
  onUpdateOf(id: string): string | undefined;
};

/** Whether the allocation has a Nomad-provider check, i.e. needs the hook. */
export const hasNomadChecks = (alloc: AllocSpec): boolean => countNomadChecks(alloc) > 0;

/** How many Nomad-provider checks the allocation has (group and task services). */
export const countNomadChecks = (alloc: AllocSpec): number => nomadChecksOf(alloc, () => () => undefined).length;

/** Builds the hook for one allocation. */
export function checksHook(opts: ChecksHookOptions): ChecksHook {
  const { clock, scheduler, store } = opts;
  const run = opts.runCheck ?? realRunCheck;
  let alloc = opts.alloc;
  const observers = new Map<string, Observer>();
  let unwatch: (() => void) | undefined;
  let latest: AllocState | undefined;
  const group = () => opts.groupName ?? `${alloc.job}.${alloc.group}`;
  /** The status last reported per check ID, so the runner hears changes only. */
  const reported = new Map<string, string>();

  const reportStatus = (r: CheckQueryResult) => {
    if (!opts.report || reported.get(r.ID) === r.Status) return;
    reported.set(r.ID, r.Status);
    opts.report({
      type: 'CHECK_STATUS',
      check: { id: r.ID, name: r.Check, service: r.Service, ...(r.Task !== undefined && { task: r.Task }), status: r.Status, output: checkOutputOf(r.Output), time: clock.now() },
    });
  };

  const reportRemoved = (ids: readonly string[]) => {
    const gone = ids.filter((id) => reported.delete(id));
    if (opts.report && gone.length > 0) opts.report({ type: 'CHECKS_REMOVED', ids: gone });
  };

  const resultOf = (o: Observer, fields: { Output: string; StatusCode?: number }): CheckQueryResult => ({
    ID: o.def.id,
    Mode: o.def.mode,
    Status: o.counters.status,
    ...(fields.StatusCode !== undefined && { StatusCode: fields.StatusCode }),
    Output: fields.Output,
    Timestamp: Math.floor(clock.now() / 1000),
    Group: group(),
    ...(o.def.task !== undefined && { Task: o.def.task }),
    Service: o.def.service,
    Check: o.def.check.name,
  });

  /** The tasks whose (re)start a check follows: its service's task, or every main task for a group service. */
  const followed = (def: NomadCheck): TaskSpec[] =>
    def.restarts !== undefined ? alloc.tasks.filter((t) => t.name === def.restarts) : alloc.tasks.filter((t) => !t.lifecycle || t.lifecycle.sidecar);

  /** The latest start among the followed tasks that run, or undefined when none runs. */
  const startOf = (def: NomadCheck, state: AllocState): number | undefined => {
    let since: number | undefined;
    for (const t of followed(def)) {
      const ts = state.taskStates[t.name];
      if (ts?.state === 'running') since = Math.max(since ?? 0, ts.startedAt ?? 0);
    }
    return since;
  };

  const schedule = (o: Observer, delay: number) => {
    o.next?.();
    o.next = scheduler.after(delay, () => void runOnce(o));
  };

  const runOnce = async (o: Observer) => {
    o.next = undefined;
    const raw = await run(o.def.query, o.abort.signal).catch((err: unknown): RawResult => ({ outcome: 'failure', output: `nomad: ${String(err)}` }));
    if (o.stopped) return;
    o.counters = nextCounters(o.def.check, o.counters, raw.outcome);
    const result = resultOf(o, { Output: raw.output, StatusCode: raw.statusCode });
    store.set(alloc.id, result);
    reportStatus(result);
    const policy = o.def.check.checkRestart;
    if (policy && o.restart) {
      const { counter, restart } = applyResult(policy, o.restart, o.counters.status, clock.now());
      o.restart = counter;
      if (restart) {
        // One restart per task: its other checks wait for the task's next start too (Nomad's watcher).
        for (const other of observers.values()) if (other !== o && other.def.restarts === o.def.restarts && other.restart) other.restart = { ...other.restart, restarting: true };
        opts.restart(o.def.restarts, restartReason(o.def.check.name));
      }
    }
    schedule(o, o.def.check.interval);
  };

  /** A task (re)started: the first run is scheduled once, check_restart's grace starts over at each start. */
  const onState = (state: AllocState) => {
    latest = state;
    for (const o of observers.values()) follow(o, state);
  };

  const follow = (o: Observer, state: AllocState) => {
    const start = startOf(o.def, state);
    if (start === o.seenStart) return;
    o.seenStart = start;
    const policy = o.def.check.checkRestart;
    // A check is not judged while its task is down (Nomad unwatches it until the task's services come back).
    if (policy) o.restart = start === undefined ? undefined : armed(policy, start);
    if (start !== undefined && !o.started) {
      o.started = true;
      schedule(o, o.def.check.interval / 2);
    }
  };

  const observe = () => {
    for (const def of nomadChecksOf(alloc, opts.lookupOf)) {
      if (observers.has(def.id)) continue;
      const o: Observer = { def, counters: initialCounters(def.check), abort: new AbortController(), stopped: false, started: false };
      observers.set(def.id, o);
      // A restored or re-observed check keeps its last result (the store ignores a stub over one).
      const stub = resultOf(o, { Output: WAITING_OUTPUT });
      store.set(alloc.id, stub);
      const kept = store.list(alloc.id)[def.id];
      if (kept && kept.Status !== 'pending') o.counters = { ...o.counters, status: kept.Status };
      reportStatus(kept ?? stub);
      if (latest) follow(o, latest);
    }
  };

  const stopObserver = (o: Observer) => {
    o.stopped = true;
    o.next?.();
    o.next = undefined;
    o.abort.abort();
  };

  const start = () => {
    if (unwatch || isServerTerminal(alloc)) return;
    // Watch first so `latest` is known; observe then follows the tasks that already run.
    unwatch = opts.watch(onState);
    observe();
  };

  const stop = () => {
    unwatch?.();
    unwatch = undefined;
    latest = undefined;
    for (const o of observers.values()) stopObserver(o);
    observers.clear();
  };

  return {
    name: 'checks',
    async prerun() {
      start();
    },
    async update({ alloc: next }) {
      alloc = next;
      if (!unwatch) return;
      const ids = nomadChecksOf(next, opts.lookupOf).map((d) => d.id);
      const removed = store.difference(next.id, ids);
      for (const id of removed) {
        const o = observers.get(id);
        if (o) stopObserver(o);
        observers.delete(id);
      }
      store.remove(next.id, removed);
      reportRemoved(removed);
      observe();
    },
    async preKill() {
      stop();
      store.purge(alloc.id);
      reportRemoved([...reported.keys()]);
    },
    async postrun() {
      stop();
    },
    async shutdown() {
      stop();
    },
    async destroy() {
      stop();
      store.purge(alloc.id);
      reportRemoved([...reported.keys()]);
    },
    resume(restored) {
      alloc = restored;
      start();
    },
    halt: stop,
    onUpdateOf: (id) => observers.get(id)?.def.check.onUpdate,
  };
}
