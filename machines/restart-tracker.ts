/**
 * Nomad's restart tracker (client/allocrunner/taskrunner/restarts) as a pure function: the tracker's count
 * and window are plain data in machine context, the clock and the random source are arguments, and each
 * decision sees exactly one trigger (Nomad's flags, which it resets after every decision anyway).
 */
import { formatDuration, type ExitResult, type JobType, type RestartPolicy, type TaskLifecycle } from './model.ts';

/** The tracker's memory between decisions: failures counted in the current window, and when it began. */
export interface RestartTrackerState {
  count: number;
  /** Start of the current interval, in ms on the runner clock. */
  windowStart: number;
}

/** What happened since the last decision (one of Nomad's `failure`, `manual` or `killed` flags). */
export type RestartTrigger =
  /** The task exited; a failure whatever the exit code, since clean exits are judged by `onSuccess`. */
  | { kind: 'exit'; exit: ExitResult }
  /** Prestart or the driver's start failed; unrecoverable errors are never retried. */
  | { kind: 'startError'; recoverable: boolean; message: string }
  /** A user or trigger restart: `failure: false` is "manual" (not counted), `true` counts against the policy. */
  | { kind: 'restartRequested'; failure: boolean }
  /** The task was killed: it is never restarted. */
  | { kind: 'killed' }
  /** No flag at all (Nomad's step 5): the tracker counts the attempt but has no decision to make. */
  | { kind: 'none' };

/** Nomad's TaskRestarting / TaskTerminated / TaskNotRestarting / TaskKilled, and '' (no decision). */
export type RestartDecisionKind = 'restart' | 'terminated' | 'notRestarting' | 'killed' | 'none';

/** A decision with its delay (ms, only meaningful for 'restart'), Nomad's reason string, and the next tracker. */
export interface RestartDecision {
  decision: RestartDecisionKind;
  delay: number;
  reason: string;
  tracker: RestartTrackerState;
}

/** Nomad's reason strings, kept verbatim because users and tooling match on them. */
export const ReasonNoRestartsAllowed = 'Policy allows no restarts';
/** Reason for a start error that retrying cannot fix. */
export const ReasonUnrecoverableError = 'Error was unrecoverable';
/** Reason for an ordinary, jittered restart. */
export const ReasonWithinPolicy = 'Restart within policy';
/** Reason for a mode "delay" restart that waits out the rest of the interval. */
export const ReasonDelay = 'Exceeded allowed attempts, applying a delay';
/** Reason for a clean exit of a task that does not restart on success. */
export const ReasonTerminatedSuccessfully = 'Restart unnecessary as task terminated successfully';

/** Nomad adds up to 25% of the delay as jitter so restarting tasks do not move in lockstep. */
const JITTER = 0.25;
/** Nomad treats a zero delay as one nanosecond; in milliseconds that is 1e-6. */
const MIN_DELAY_MS = 1e-6;

/** A fresh tracker whose window starts now (Nomad starts it when the task runner is built). */
export function newRestartTracker(now: number): RestartTrackerState {
  return { count: 0, windowStart: now };
}

/**
 * Whether a clean exit restarts the task (Nomad's `onSuccess`): services and system jobs yes, batch no;
 * prestart/poststart tasks only if they are sidecars; poststop never.
 */
export function restartsOnSuccess(jobType: JobType, lifecycle?: TaskLifecycle): boolean {
  switch (lifecycle?.hook) {
    case 'prestart':
    case 'poststart':
      return lifecycle.sidecar === true;
    case 'poststop':
      return false;
    default:
      return jobType !== 'batch' && jobType !== 'sysbatch';
  }
}

/** Nomad's `ExitResult.Successful()`: exit code 0, no signal, no driver error (OOM is not considered). */
export function isCleanExit(exit: ExitResult): boolean {
  return exit.exitCode === 0 && exit.signal === 0 && !exit.err;
}

/**
 * Decides what happens after `trigger`, in the order of Nomad's `GetState` (spec §1.4): killed, manual,
 * zero attempts, window/count, no flag, unrecoverable or successful, over the limit, within policy.
 */
export function decideRestart(args: {
  policy: RestartPolicy;
  jobType: JobType;
  lifecycle?: TaskLifecycle;
  tracker: RestartTrackerState;
  trigger: RestartTrigger;
  now: number;
  random: () => number;
}): RestartDecision {
  const { policy, tracker, trigger, now } = args;
  const onSuccess = restartsOnSuccess(args.jobType, args.lifecycle);
  const cleanExitNotRestarted = trigger.kind === 'exit' && isCleanExit(trigger.exit) && !onSuccess;

  // 1. A kill always wins, even over a restart requested just before it.
  if (trigger.kind === 'killed') return { decision: 'killed', delay: 0, reason: '', tracker };

  // 2. A manual restart ignores the policy and is not counted.
  if (trigger.kind === 'restartRequested' && !trigger.failure) return { decision: 'restart', delay: 0, reason: '', tracker };

  // 3. No attempts allowed: only a clean exit of a run-to-completion task ends well; a service exiting 0 fails.
  if (policy.attempts === 0) {
    return cleanExitNotRestarted
      ? { decision: 'terminated', delay: 0, reason: ReasonNoRestartsAllowed, tracker }
      : { decision: 'notRestarting', delay: 0, reason: ReasonNoRestartsAllowed, tracker };
  }

  // 4. A new interval forgets earlier failures (Go's `now.After(end)`: strictly after), then this one counts.
  const windowEnd = tracker.windowStart + policy.interval;
  const expired = now > windowEnd;
  const next: RestartTrackerState = {
    count: (expired ? 0 : tracker.count) + 1,
    windowStart: expired ? now : tracker.windowStart,
  };

  // 5. Nothing flagged a failure, so there is nothing to decide; the runner restarts without an event.
  if (trigger.kind === 'none') return { decision: 'none', delay: 0, reason: '', tracker: next };

  // 6. Some outcomes are final whatever the count.
  if (trigger.kind === 'startError' && !trigger.recoverable) {
    return { decision: 'notRestarting', delay: 0, reason: ReasonUnrecoverableError, tracker: next };
  }
  if (cleanExitNotRestarted) return { decision: 'terminated', delay: 0, reason: ReasonTerminatedSuccessfully, tracker: next };

  // 7. Over the limit: fail, or wait out the rest of the window (after which the count resets).
  if (next.count > policy.attempts) {
    if (policy.mode === 'fail') {
      const reason = `Exceeded allowed attempts ${policy.attempts} in interval ${formatDuration(policy.interval)} and mode is "fail"`;
      return { decision: 'notRestarting', delay: 0, reason, tracker: next };
    }
    // Until 1 ms past the window's end: a new interval starts only strictly after it (step 4), and on a clock that
    // does not move by itself (SimulatedClock) a wait that ends exactly at the end would restart, fail and wait 0 ms
    // again forever at the same instant.
    return { decision: 'restart', delay: next.windowStart + policy.interval - now + 1, reason: ReasonDelay, tracker: next };
  }

  // 8. Within policy: the delay plus up to 25% jitter, in [D, 1.25·D).
  const d = policy.delay > 0 ? policy.delay : MIN_DELAY_MS;
  return { decision: 'restart', delay: d + args.random() * d * JITTER, reason: ReasonWithinPolicy, tracker: next };
}

/** A seedable PRNG whose whole state is one JSON number, so a machine can keep it in context. */
export interface SeededRandom {
  /** The next value in [0, 1); advances `seed`. */
  next(): number;
  /** The current state: `mulberry32(r.seed)` continues exactly where `r` left off. */
  readonly seed: number;
}

/**
 * Mulberry32, a tiny 32-bit PRNG (not cryptographic). Its state is an unsigned 32-bit integer exposed as
 * `seed`, so `decide` can draw jitter from `mulberry32(ctx.seed)` and store `rng.seed` back: runs replay exactly.
 */
export function mulberry32(seed: number): SeededRandom {
  // Any number is accepted; it is reduced to 32 bits like the reference implementation does.
  let state = seed >>> 0;
  return {
    next(): number {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
    get seed(): number {
      return state;
    },
  };
}
