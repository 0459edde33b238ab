/**
 * The goals of the README's benchmark table, in one place (issue #31 re-based them on the floors measured
 * in the same run: raw processes, pm2, a bare XState allocation). Each bench judges its own figures with
 * these, so a goal is stated once and the table's "goal" column is the text the judgement used.
 */

/** P1: start N raw_exec allocations, against raw `spawn` and pm2 in the same run. */
export const P1_GOAL = {
  maxRatio: 2,
  maxCpuMsPerStart: 3,
  text: '≤ 2× raw spawn and faster than pm2; ≤ 3 ms agent CPU per start (helper and supervisors included)',
  /** Met when every part holds; pm2 missing from the run (`--no-pm2`) leaves that part unjudged, so not met. */
  met: (f: { ratio: number; pm2Ms: number | undefined; ms: number; cpuMsPerStart: number }) =>
    f.ratio <= 2 && f.pm2Ms !== undefined && f.ms < f.pm2Ms && f.cpuMsPerStart <= 3,
};

/** P2: KILL every allocation, against a raw `kill` of the same processes. */
export const P2_GOAL = {
  maxRatio: 5,
  text: '≤ 5× raw kill',
  met: (f: { ratio: number }) => f.ratio <= 5,
};

/** P3: full lifecycles per CPU-second (mock driver), as a share of a bare XState alloc of the same shape. */
export const P3_GOAL = {
  text: '≥ 15% of bare with built-in hooks, ≥ 25% without',
  met: (f: { hooksShare: number; noHooksShare: number }) => f.hooksShare >= 0.15 && f.noHooksShare >= 0.25,
};

/** P4: 10,000 live allocations: heap each, KILL p99, restore. */
export const P4_GOAL = {
  heap: { text: '≤ 40 KB', met: (kb: number) => kb <= 40 },
  killP99: { text: '≤ 50 ms', met: (ms: number) => ms <= 50 },
  restore: { text: '≤ 10 s', met: (ms: number, allRestored: boolean) => ms <= 10_000 && allRestored },
};

/** P5: throughput with the live inspection stream (JSON), as a share of XState's own no-op inspect. */
export const P5_GOAL = {
  text: '≥ 90% of a no-op inspect',
  met: (ofNoop: number) => ofNoop >= 0.9,
};

/** P6: an idle agent's CPU, fresh and after a restart. */
export const P6_GOAL = {
  text: '≤ 2% of one core',
  met: (pct: number) => pct <= 2,
};
