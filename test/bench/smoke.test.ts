// The benchmarks' code runs, at the smallest sizes; no figure is asserted (timings belong in `npm run bench`).
import { describe, expect, it } from 'vitest';
import { descendantPidsOf } from '../../bench/lib/pids.ts';
import { measureStartKill, phaseGoals } from '../../bench/lib/start-kill.ts';
import { spawnerPid } from '../../src/drivers/raw-exec/spawner.ts';
import { p3Goals, runP3 } from '../../bench/p3-lifecycle.ts';
import { p4Goals, runP4 } from '../../bench/p4-scale.ts';
import { p6Goals, runP6 } from '../../bench/p6-idle.ts';

describe('benchmark smoke runs', () => {
  it('P1/P2 start and kill every fleet and leave no process behind', async () => {
    const r = await measureStartKill({ n: 2, rounds: 1, withPm2: false });
    expect(r.fleets.map((f) => f.name)).toEqual(['raw spawn', 'allocrun agent, built-in hooks', 'allocrun agent, no built-in hooks', 'bare XState alloc, no supervisor']);
    // Only raw_exec's spawner helper, which lives as long as this process, may remain.
    expect(descendantPidsOf(process.pid).filter((pid) => pid !== spawnerPid())).toEqual([]);
    expect(phaseGoals(r, 'start')).toHaveLength(1);
    expect(phaseGoals(r, 'kill')).toHaveLength(1);
  });

  it("P3 runs lifecycles of allocrun, of the bare XState alloc and of the shape's floor to the end", async () => {
    const r = await runP3({ n: 3, rounds: 1 });
    expect(r.rows).toHaveLength(5);
    expect(p3Goals(r)).toHaveLength(1);
  });

  it('P4 restores every allocation it did not kill', async () => {
    const r = await runP4({ n: 6, kills: 2, drainMs: 0 });
    expect(r.restored).toBe(4);
    expect(p4Goals(r)).toHaveLength(3);
  });

  it('P6 runs an idle agent in a child and reports its usage, fresh and after a restart', async () => {
    const r = await runP6({ n: 2, idleSec: 1, watchedSec: 1, settleSec: 0 });
    expect(r.allocs).toBe(2);
    const restarted = await runP6({ n: 2, idleSec: 1, watchedSec: 1, settleSec: 0, restart: true });
    expect(restarted.allocs).toBe(2);
    expect(p6Goals(r, restarted)).toHaveLength(2);
  });
});
