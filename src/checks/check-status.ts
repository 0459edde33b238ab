/**
 * A check's status from its raw outcomes (pure): `initial_status` is what it says before any run, and a
 * status changes only after `success_before_passing` consecutive good outcomes or
 * `failures_before_critical` consecutive failures, as Consul's StatusHandler counts them (a warning
 * counts as good; either count resets the other). Until a threshold is reached the status stays as it was.
 */
import type { CheckStatus } from './result.ts';
import type { CheckSpec } from './spec.ts';

/** What one run of a check found, before the thresholds. */
export type CheckOutcome = 'success' | 'warning' | 'failure';

/** The thresholds' memory. JSON data. */
export interface StatusCounters {
  status: CheckStatus;
  successes: number;
  failures: number;
}

type Thresholds = Pick<CheckSpec, 'initialStatus' | 'successBeforePassing' | 'failuresBeforeCritical'>;

const INITIAL: Record<NonNullable<CheckSpec['initialStatus']>, CheckStatus> = { passing: 'success', warning: 'warning', critical: 'failure' };

/** Before the first run: the initial_status (passing, warning, critical) in Nomad's words, else pending. */
export function initialCounters(check: Thresholds): StatusCounters {
  return { status: check.initialStatus ? INITIAL[check.initialStatus] : 'pending', successes: 0, failures: 0 };
}

/** The counters after one more outcome. */
export function nextCounters(check: Thresholds, c: StatusCounters, outcome: CheckOutcome): StatusCounters {
  if (outcome === 'failure') {
    const failures = c.failures + 1;
    return { status: failures >= Math.max(1, check.failuresBeforeCritical) ? 'failure' : c.status, successes: 0, failures };
  }
  const successes = c.successes + 1;
  return { status: successes >= Math.max(1, check.successBeforePassing) ? outcome : c.status, successes, failures: 0 };
}
