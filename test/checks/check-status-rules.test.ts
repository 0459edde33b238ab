/**
 * A check's reported status from its outcomes (src/checks/check-status.ts), row by row: initial_status
 * before the first run, success_before_passing and failures_before_critical as Consul counts them.
 */
import { describe, expect, it } from 'vitest';
import { initialCounters, nextCounters, type CheckOutcome } from '../../src/checks/check-status.ts';
import type { CheckStatus } from '../../src/checks/result.ts';

type Row = {
  name: string;
  initialStatus?: 'passing' | 'warning' | 'critical';
  successBeforePassing?: number;
  failuresBeforeCritical?: number;
  outcomes: CheckOutcome[];
  /** The status after the initial state, then after each outcome. */
  statuses: CheckStatus[];
};

const rows: Row[] = [
  { name: 'no initial_status: pending until the first run; then each outcome at once', outcomes: ['success', 'failure', 'success'], statuses: ['pending', 'success', 'failure', 'success'] },
  { name: 'initial_status passing is success before any run', initialStatus: 'passing', outcomes: ['failure'], statuses: ['success', 'failure'] },
  { name: 'initial_status critical is failure before any run', initialStatus: 'critical', outcomes: ['success'], statuses: ['failure', 'success'] },
  { name: 'initial_status warning is a warning before any run', initialStatus: 'warning', outcomes: ['success'], statuses: ['warning', 'success'] },
  { name: 'success_before_passing 3: two successes leave the status; the third passes', successBeforePassing: 3, outcomes: ['success', 'success', 'success'], statuses: ['pending', 'pending', 'pending', 'success'] },
  { name: 'success_before_passing counts consecutive successes: a failure starts the count over', successBeforePassing: 2, outcomes: ['success', 'failure', 'success', 'success'], statuses: ['pending', 'pending', 'failure', 'failure', 'success'] },
  { name: 'failures_before_critical 3: a passing check stays passing through two failures', failuresBeforeCritical: 3, outcomes: ['success', 'failure', 'failure', 'failure'], statuses: ['pending', 'success', 'success', 'success', 'failure'] },
  { name: 'failures_before_critical counts consecutive failures: a success between resets it', failuresBeforeCritical: 2, outcomes: ['success', 'failure', 'success', 'failure', 'failure'], statuses: ['pending', 'success', 'success', 'success', 'success', 'failure'] },
  { name: 'a warning counts as a good outcome for success_before_passing', successBeforePassing: 2, outcomes: ['warning', 'success'], statuses: ['pending', 'pending', 'success'] },
  { name: 'a warning once the threshold is met reports the warning', outcomes: ['success', 'warning'], statuses: ['pending', 'success', 'warning'] },
  { name: 'both thresholds: flapping never reaches either', successBeforePassing: 2, failuresBeforeCritical: 2, initialStatus: 'critical', outcomes: ['success', 'failure', 'success', 'failure'], statuses: ['failure', 'failure', 'failure', 'failure', 'failure'] },
  { name: 'thresholds of 0 behave as 1', successBeforePassing: 0, failuresBeforeCritical: 0, outcomes: ['failure', 'success'], statuses: ['pending', 'failure', 'success'] },
];

describe('check status thresholds', () => {
  for (const row of rows) {
    it(row.name, () => {
      const check = { initialStatus: row.initialStatus, successBeforePassing: row.successBeforePassing ?? 0, failuresBeforeCritical: row.failuresBeforeCritical ?? 0 };
      let c = initialCounters(check);
      const seen: CheckStatus[] = [c.status];
      for (const o of row.outcomes) {
        c = nextCounters(check, c, o);
        seen.push(c.status);
      }
      expect(seen).toEqual(row.statuses);
    });
  }
});
