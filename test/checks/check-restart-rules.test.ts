/**
 * check_restart as a pure step (src/checks/check-restart.ts), row by row on a simulated timeline: `limit`
 * consecutive unhealthy results after `grace` restart the task once; a healthy result resets the count;
 * results in grace neither count nor reset; warnings count unless ignore_warnings; pending counts.
 */
import { describe, expect, it } from 'vitest';
import { applyResult, armed, restartReason } from '../../src/checks/check-restart.ts';
import type { CheckStatus } from '../../src/checks/result.ts';

type Row = {
  name: string;
  limit: number;
  grace: number;
  ignoreWarnings?: boolean;
  /** Results at times (ms after the task started). */
  results: [number, CheckStatus][];
  /** Index of the result that asks for the restart, or -1 for none. */
  restartsAt: number;
};

const rows: Row[] = [
  { name: 'limit 3: the third consecutive failure restarts', limit: 3, grace: 0, results: [[1, 'failure'], [2, 'failure'], [3, 'failure']], restartsAt: 2 },
  { name: 'limit 1: the first failure after grace restarts', limit: 1, grace: 0, results: [[1, 'success'], [2, 'failure']], restartsAt: 1 },
  { name: 'a success between failures starts the count over', limit: 3, grace: 0, results: [[1, 'failure'], [2, 'failure'], [3, 'success'], [4, 'failure'], [5, 'failure'], [6, 'failure']], restartsAt: 5 },
  { name: 'failures inside grace are not counted', limit: 2, grace: 10, results: [[1, 'failure'], [5, 'failure'], [9, 'failure'], [10, 'failure'], [11, 'failure']], restartsAt: 4 },
  { name: 'pending counts as unhealthy (a check that never answers)', limit: 2, grace: 0, results: [[1, 'pending'], [2, 'pending']], restartsAt: 1 },
  { name: 'warnings count without ignore_warnings', limit: 2, grace: 0, results: [[1, 'warning'], [2, 'warning']], restartsAt: 1 },
  { name: 'warnings are healthy with ignore_warnings', limit: 2, grace: 0, ignoreWarnings: true, results: [[1, 'warning'], [2, 'warning'], [3, 'warning']], restartsAt: -1 },
  { name: 'with ignore_warnings a warning resets the failure count', limit: 2, grace: 0, ignoreWarnings: true, results: [[1, 'failure'], [2, 'warning'], [3, 'failure'], [4, 'failure']], restartsAt: 3 },
  { name: 'limit 0 never restarts', limit: 0, grace: 0, results: [[1, 'failure'], [2, 'failure']], restartsAt: -1 },
];

describe('check_restart', () => {
  for (const row of rows) {
    it(row.name, () => {
      const policy = { limit: row.limit, grace: row.grace, ignoreWarnings: row.ignoreWarnings ?? false };
      let c = armed(policy, 0);
      const restarts: number[] = [];
      row.results.forEach(([at, status], i) => {
        const step = applyResult(policy, c, status, at);
        c = step.counter;
        if (step.restart) restarts.push(i);
      });
      expect(restarts).toEqual(row.restartsAt === -1 ? [] : [row.restartsAt]);
    });
  }

  it('after asking for a restart the check waits for the next start; re-armed, it counts again from zero', () => {
    const policy = { limit: 1, grace: 5, ignoreWarnings: false };
    let step = applyResult(policy, armed(policy, 0), 'failure', 10);
    expect(step.restart).toBe(true);
    step = applyResult(policy, step.counter, 'failure', 11);
    expect(step.restart).toBe(false);
    const rearmed = armed(policy, 20);
    expect(applyResult(policy, rearmed, 'failure', 22).restart).toBe(false);
    expect(applyResult(policy, rearmed, 'failure', 25).restart).toBe(true);
  });

  it("gives Nomad's reason", () => {
    expect(restartReason('http')).toBe('healthcheck: check "http" unhealthy');
  });
});
