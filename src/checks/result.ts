/**
 * A check's latest result in Nomad's shape (structs.CheckQueryResult, served by
 * `/v1/client/allocation/:id/checks` as a map of check ID to result), and the stub a check shows before
 * it first runs (Nomad's checks.Stub).
 */

/**
 * Nomad's statuses (success, failure, pending), plus `warning`: a check whose `initial_status` is
 * "warning", or an HTTP check answered 429 Too Many Requests (Consul's one warning status), which
 * `check_restart { ignore_warnings = true }` and `on_update = "ignore_warnings"` let through.
 */
export type CheckStatus = 'success' | 'failure' | 'pending' | 'warning';

/** `readiness` when the check's on_update is "ignore" (deployments go on whatever it says), else `healthiness`. */
export type CheckMode = 'healthiness' | 'readiness';

/** One check's latest result. */
export interface CheckQueryResult {
  ID: string;
  Mode: CheckMode;
  Status: CheckStatus;
  /** The HTTP status code of an HTTP check that got an answer; absent otherwise (omitted, as Nomad's omitempty). */
  StatusCode?: number;
  Output: string;
  /** Unix seconds. */
  Timestamp: number;
  /** The allocation's name (`job.group[index]`). */
  Group: string;
  /** The task of a task-level service; absent for group services. */
  Task?: string;
  Service: string;
  Check: string;
}

/** The results of one allocation, by check ID. */
export type AllocationResults = Record<string, CheckQueryResult>;

/** What a check says before its first run. */
export const WAITING_OUTPUT = 'nomad: waiting to run';

/**
 * Whether a result lets a deployment through (Nomad's tracker with Consul's on_update rules): a failure
 * only when the check is a readiness one (on_update "ignore"), a warning also with "ignore_warnings",
 * a pending check never.
 */
export function passesForHealth(r: Pick<CheckQueryResult, 'Status' | 'Mode'>, onUpdate: string): boolean {
  switch (r.Status) {
    case 'success':
      return true;
    case 'warning':
      return r.Mode === 'readiness' || onUpdate === 'ignore_warnings';
    case 'failure':
      return r.Mode === 'readiness';
    default:
      return false;
  }
}
