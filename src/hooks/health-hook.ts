/**
 * health_watcher: deployment health for allocations with an `update` block (Nomad's health_hook.go and
 * client/allochealth's task-state tracker). Once every task that counts has been running for
 * `min_healthy_time` the allocation is healthy; a failed task, a main task that finished, or a failed
 * allocation makes it unhealthy at once; and if neither happened by `healthy_deadline` it is unhealthy, with
 * one "Alloc Unhealthy" event per task that held it back. The verdict is reported once, then watching stops.
 * Health is per deployment: an update that moves the allocation to another one watches anew (Nomad's Update).
 */
import type { Clock } from '../drivers/clock.ts';
import type { AllocSpec, AllocState, TaskEvent, TaskSpec, TaskState } from '../jobspec/types.ts';
import { formatDuration, isServerTerminal, type DeploymentStatus, type UpdateStrategy } from '../../machines/model.ts';
import { allChecksPass, servicesNotPassing, type HealthChecks } from '../checks/health.ts';
import type { AllocationResults } from '../checks/result.ts';
import type { AllocRunnerHook } from './types.ts';

export type { DeploymentStatus, UpdateStrategy };

/** The task event type Nomad records on each task that made an allocation unhealthy. */
export const ALLOC_UNHEALTHY = 'Alloc Unhealthy';

/** Where the task states stand for health: Nomad's watchTaskEvents loop body, as a pure function. */
export type TaskHealthVerdict =
  | { kind: 'unhealthy' }
  | { kind: 'waiting' }
  /** Every task that counts is up; `since` is the latest start, so a restart moves it and restarts the wait. */
  | { kind: 'started'; since: number };

/** Judges a snapshot of the allocation: unhealthy now, still waiting for a task, or all started. */
export function taskHealthVerdict(tasks: readonly TaskSpec[], state: AllocState): TaskHealthVerdict {
  let since: number | undefined;
  let waiting = false;
  for (const task of tasks) {
    const ts = state.taskStates[task.name];
    if (!ts) continue;
    // Only ephemeral lifecycle tasks are judged by their hook (Nomad's lifecycleTasks leaves sidecars out):
    // a sidecar should run as long as the main tasks, so it counts as one of them.
    const hook = task.lifecycle && !task.lifecycle.sidecar ? task.lifecycle.hook : undefined;
    // Poststop tasks stay pending until the mains finish; a poststart task that ran and succeeded is done.
    if (hook === 'poststop') continue;
    if (hook === 'poststart' && ts.state === 'dead' && !ts.failed) continue;
    // A failure, or a task that finished when it should be running (only prestart tasks may finish).
    if (ts.failed || (ts.finishedAt !== undefined && hook !== 'prestart')) return { kind: 'unhealthy' };
    if (ts.state === 'pending') waiting = true;
    else since = Math.max(since ?? 0, ts.startedAt ?? 0);
  }
  // Failed at the alloc level (e.g. prerun) with no task to blame.
  if (state.clientStatus === 'failed') return { kind: 'unhealthy' };
  return waiting || since === undefined ? { kind: 'waiting' } : { kind: 'started', since };
}

/**
 * Why a task held its allocation back at `deadline` (Nomad's taskHealthState.event), or undefined if it
 * did not: failed, not running, dead when it should run, or running for less than min_healthy_time.
 */
export function unhealthyReason(task: TaskSpec, ts: TaskState | undefined, deadline: number, update: UpdateStrategy): string | undefined {
  if (!ts) return undefined;
  const minHealthy = formatDuration(update.minHealthyTime);
  const healthyDeadline = formatDuration(update.healthyDeadline);
  if (ts.failed) return 'Unhealthy because of failed task';
  switch (ts.state) {
    case 'pending':
      return `Task not running by healthy_deadline of ${healthyDeadline}`;
    case 'dead':
      // Non-sidecar lifecycle tasks are healthy when they exit successfully.
      return !task.lifecycle || task.lifecycle.sidecar ? 'Unhealthy because of dead task' : undefined;
    case 'running':
      return (ts.startedAt ?? 0) + update.minHealthyTime > deadline
        ? `Task not running for min_healthy_time of ${minHealthy} by healthy_deadline of ${healthyDeadline}`
        : undefined;
  }
}

/** What the hook reports: the verdict, and an Alloc Unhealthy event per task that held it back (none when healthy). */
export interface HealthReport {
  status: DeploymentStatus;
  taskEvents: Record<string, TaskEvent>;
}

/** How the health hook watches its allocation. */
export interface HealthHookOptions {
  update: UpdateStrategy;
  tasks: readonly TaskSpec[];
  clock: Clock;
  /** Subscribes to the allocation's state, current value first; returns the unsubscribe function. */
  watch(listener: (state: AllocState) => void): () => void;
  /** Receives the verdict, once. */
  report(report: HealthReport): void;
  /**
   * With `health_check = "checks"` and Nomad service checks: healthy also needs every check passing, unbroken,
   * for min_healthy_time (Nomad's watchNomadEvents); not passing at the deadline is named per task.
   */
  checks?: HealthChecks;
  /**
   * The allocation as the runner last heard of it, update hooks or not (Nomad's tracker reads the alloc's
   * DesiredStatus first on every update it hears). Once it is to stop or be evicted the watch ends without a
   * verdict: a task's death, or a timer, heard before the stop's update reaches this hook is the stop's, not
   * the allocation's. Without it only `update()` tells the hook of a stop.
   */
  latestAlloc?(): Pick<AllocSpec, 'desiredStatus' | 'deploymentId'>;
  /**
   * The allocation's state as the runner holds it now, ahead of `watch` (which hears it once the runner's step is
   * over): preKill reads it so a failure the kill was started for still decides.
   */
  current?(): AllocState;
  /** The deployment prerun watches health for (Nomad's DeploymentID); an update that changes it watches anew. */
  deploymentId?: string;
}

/**
 * The deployment health hook. Prerun starts watching (unless health is manual); postrun, shutdown and
 * destroy stop it; an update that stops the allocation stops it without a verdict, as Nomad does, and so does a
 * kill the runner was told (its preKill), unless the tasks already decided; an update that moves the allocation
 * to another deployment starts the watch over, from then, for the new one.
 */
export function healthHook(opts: HealthHookOptions): AllocRunnerHook {
  const { clock } = opts;
  // What is watched: the allocation's as its deployment last set them (an in-place update may change them).
  let { update, tasks } = opts;
  let deployment = opts.deploymentId;
  let stopWatching: (() => void) | undefined;
  const timers: unknown[] = [];
  let healthyTimer: unknown;
  let startedSince: number | undefined;
  let latest: AllocState | undefined;
  let deadline = 0;
  let reported = false;
  // Told of a kill (preKill): nothing is watched again.
  let killed = false;
  // Both halves of health: the tasks ran min_healthy_time, and (with checks) the checks passed as long.
  let tasksHealthy = false;
  let stopChecks: (() => void) | undefined;
  let checksTimer: unknown;
  let checksHealthy = false;
  let results: AllocationResults = {};
  const checksOf = (u: UpdateStrategy) => (u.healthCheck === 'checks' && opts.checks && opts.checks.count > 0 ? opts.checks : undefined);
  let checks = checksOf(update);

  // A verdict only for the deployment being watched, while the allocation is to run (Nomad's AllocStoppedCh, and
  // its Update cancelling the watcher before the deployment's health is cleared).
  const stopping = () => {
    const latest = opts.latestAlloc?.();
    return latest !== undefined && (isServerTerminal(latest) || latest.deploymentId !== deployment);
  };

  const stop = () => {
    stopWatching?.();
    stopWatching = undefined;
    for (const t of timers.splice(0)) clock.clearTimeout(t);
    if (healthyTimer !== undefined) clock.clearTimeout(healthyTimer);
    healthyTimer = undefined;
    stopChecks?.();
    stopChecks = undefined;
    if (checksTimer !== undefined) clock.clearTimeout(checksTimer);
    checksTimer = undefined;
  };

  const maybeHealthy = () => {
    if (tasksHealthy && (!checks || checksHealthy)) finish(true);
  };

  const onResults = (next: AllocationResults) => {
    results = next;
    if (!checks || reported) return;
    if (!allChecksPass(next, checks)) {
      checksHealthy = false;
      if (checksTimer !== undefined) clock.clearTimeout(checksTimer);
      checksTimer = undefined;
      return;
    }
    // Passing from now on: healthy once that lasts min_healthy_time (a failure in between starts it over).
    if (checksHealthy || checksTimer !== undefined) return;
    checksTimer = clock.setTimeout(() => {
      checksTimer = undefined;
      checksHealthy = true;
      maybeHealthy();
    }, update.minHealthyTime);
  };

  const finish = (healthy: boolean, taskEvents: HealthReport['taskEvents'] = {}) => {
    if (reported) return;
    // Being stopped: no verdict (Nomad's AllocStoppedCh), whatever decided first.
    if (stopping()) return stop();
    reported = true;
    stop();
    opts.report({ status: { healthy, timestamp: clock.now() }, taskEvents });
  };

  const onState = (state: AllocState) => {
    // A stopping allocation's tasks die of the stop: the watch ends there, as Nomad's tracker exits.
    if (stopping()) return stop();
    latest = state;
    const verdict = taskHealthVerdict(tasks, state);
    if (verdict.kind === 'unhealthy') {
      finish(false, reasonsAt(deadline));
      return;
    }
    const since = verdict.kind === 'started' ? verdict.since : undefined;
    if (since === startedSince) return;
    // Every change of the latest start (a restart, a task coming up later) restarts the min_healthy_time wait.
    startedSince = since;
    tasksHealthy = false;
    if (healthyTimer !== undefined) clock.clearTimeout(healthyTimer);
    healthyTimer =
      since === undefined
        ? undefined
        : clock.setTimeout(() => {
            healthyTimer = undefined;
            tasksHealthy = true;
            maybeHealthy();
          }, update.minHealthyTime);
  };

  // Judged against the deadline, as Nomad does even when a failure decides earlier: a task that is simply
  // still young is not blamed for another task's failure.
  const reasonsAt = (at: number): HealthReport['taskEvents'] => {
    const events: HealthReport['taskEvents'] = {};
    const time = clock.now();
    const notPassing = checks ? servicesNotPassing(results, checks) : undefined;
    for (const task of tasks) {
      // A task's own state first; then its services' checks, then the group services' (Nomad names services).
      const services = notPassing && (notPassing.get(task.name) ?? (isMainTask(task) ? notPassing.get('') : undefined));
      const message = (latest && unhealthyReason(task, latest.taskStates[task.name], at, update)) || (services && `Services not healthy by deadline: ${services.join(', ')}`);
      if (message) events[task.name] = { type: ALLOC_UNHEALTHY, time, message, displayMessage: message };
    }
    return events;
  };

  const watchFromNow = () => {
    if (update.healthCheck === 'manual' || reported || stopWatching || killed || stopping()) return;
    deadline = clock.now() + update.healthyDeadline;
    timers.push(clock.setTimeout(() => finish(false, reasonsAt(deadline)), update.healthyDeadline));
    const unsubscribe = opts.watch(onState);
    // The current state comes first and may already decide (a task failed before prerun ended).
    if (reported) unsubscribe();
    else stopWatching = unsubscribe;
    if (checks && !reported) stopChecks = checks.watch(onResults);
  };

  /** Forgets the last deployment's watch and verdict (the runner cleared its DeploymentStatus with it). */
  const forget = () => {
    stop();
    reported = false;
    startedSince = undefined;
    latest = undefined;
    tasksHealthy = false;
    checksHealthy = false;
    results = {};
  };

  return {
    name: 'health_watcher',
    prerun: async () => watchFromNow(),
    async update({ alloc }) {
      if (isServerTerminal(alloc)) return stop();
      // Another deployment (Nomad's Update when the DeploymentID changes): its health is watched from now on, with
      // the group's update block as it is now; without one there is no deployment health to watch. So is the same
      // one when the runner holds no verdict and nothing watches: a restored runner's hook is made with the spec of
      // the update it had not taken yet, which moved it and cleared its verdict.
      const unjudged = !stopWatching && !reported && opts.current !== undefined && opts.current().deploymentStatus === undefined;
      if (alloc.deploymentId === deployment && !unjudged) return;
      forget();
      deployment = alloc.deploymentId;
      if (!alloc.update) return;
      update = alloc.update;
      tasks = alloc.tasks;
      checks = checksOf(update);
      watchFromNow();
    },
    // A kill, with no stop from the server (the embedder's, the inspector's or Ctrl-C's KILL): the allocation is
    // being stopped, not failing, and Nomad sets no health for a stopped one. A failure the kill was started for
    // (a task that failed, a leader that died) has decided already: the state as it is now is judged first.
    async preKill() {
      killed = true;
      if (!stopWatching) return;
      if (opts.current) onState(opts.current());
      stop();
    },
    postrun: async () => stop(),
    shutdown: async () => stop(),
    destroy: async () => stop(),
  };
}

/** A task that runs as long as the allocation: a main task or a sidecar. */
const isMainTask = (task: TaskSpec): boolean => !task.lifecycle || task.lifecycle.sidecar === true;

/** Whether an allocation gets a health_watcher: an update block, a service or system job, and health not manual (Nomad's batch jobs get the noop hook). */
export function watchesDeploymentHealth(spec: AllocSpec): spec is AllocSpec & { update: UpdateStrategy } {
  return spec.update !== undefined && (spec.type === 'service' || spec.type === 'system') && spec.update.healthCheck !== 'manual';
}
