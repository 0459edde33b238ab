/**
 * `check_restart` as a pure step (Nomad's serviceregistration watcher): after `grace` from the task's
 * (re)start, `limit` consecutive unhealthy results restart the task. Failing and pending results are
 * unhealthy; a warning is too unless `ignore_warnings`. A healthy result starts the count over; results
 * inside the grace period neither count nor reset it. Once a restart is asked for, the check waits for
 * the task's next start (Nomad re-watches a check when its task comes back).
 */
import type { CheckStatus } from './result.ts';
import type { CheckRestartSpec } from './spec.ts';

/** One check's restart memory. JSON data. */
export interface RestartCounter {
  /** Consecutive unhealthy results since grace ended or the last healthy one. */
  unhealthy: number;
  /** Results before this time (ms) are within grace. */
  graceUntil: number;
  /** A restart was asked for; nothing counts until the task starts again (`armed`). */
  restarting: boolean;
}

/** A fresh counter for a task (re)started at `startedAt`. */
export function armed(policy: CheckRestartSpec, startedAt: number): RestartCounter {
  return { unhealthy: 0, graceUntil: startedAt + policy.grace, restarting: false };
}

/** Whether a status counts against the check (Nomad's watcher: critical, failure, pending; warning unless ignored). */
export function isUnhealthy(policy: CheckRestartSpec, status: CheckStatus): boolean {
  if (status === 'success') return false;
  if (status === 'warning') return !policy.ignoreWarnings;
  return true;
}

/** The counter after a result at `now`, and whether the task must restart now. */
export function applyResult(policy: CheckRestartSpec, c: RestartCounter, status: CheckStatus, now: number): { counter: RestartCounter; restart: boolean } {
  if (c.restarting || policy.limit <= 0) return { counter: c, restart: false };
  if (!isUnhealthy(policy, status)) return { counter: c.unhealthy === 0 ? c : { ...c, unhealthy: 0 }, restart: false };
  if (now < c.graceUntil) return { counter: c, restart: false };
  const unhealthy = c.unhealthy + 1;
  if (unhealthy >= policy.limit) return { counter: { ...c, unhealthy, restarting: true }, restart: true };
  return { counter: { ...c, unhealthy }, restart: false };
}

/** Nomad's restart reason for a check that stayed unhealthy. */
export const restartReason = (checkName: string): string => `healthcheck: check ${JSON.stringify(checkName)} unhealthy`;
