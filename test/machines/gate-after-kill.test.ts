/**
 * Found by the property tests: when one reducer step both decided the alloc's kill and opened a lifecycle gate,
 * GATE reached the task before its KILL, so the task started its prestart hooks although it was about to be
 * killed; a hook that answered at once had its answer dropped by the queued KILL, and the stop hook never got
 * that state back. In Nomad the kill (killTasks, synchronous) comes before the coordinator hears of the new
 * states, so a task killed while gated never runs prestart.
 */
import { describe, expect, it } from 'vitest';
import { createAllocRunner } from '../../src/index.ts';
import type { AllocSpec } from '../../machines/model.ts';
import { recordingTaskHook, SimulatedClock, untilAborted, type HookCall } from '../../src/testing/index.ts';

const noRestart = { attempts: 0, interval: 3_600_000, delay: 1_000, mode: 'fail' as const };

describe('a task killed while waiting on its lifecycle gate (Nomad: killTasks before the coordinator update)', () => {
  it('never runs its prestart hooks, so its stop hook has no dropped state to miss', async () => {
    const spec: AllocSpec = {
      id: 'gate', job: 'j', group: 'g', type: 'service',
      tasks: [
        // Fails at 1 s: the alloc is killed (Sibling Task Failed).
        { name: 'failing', driver: 'mock', config: { run_for: '1s', exit_code: 1 }, restart: noRestart },
        // Stuck in prestart, so main tasks are not done and the poststart gate stays shut until it is killed.
        { name: 'stuck', driver: 'mock', config: { run_for: '1h' }, restart: noRestart },
        { name: 'after', driver: 'mock', config: { run_for: '1h' }, lifecycle: { hook: 'poststart', sidecar: true }, restart: noRestart },
      ],
    };
    const log: HookCall[] = [];
    const clock = new SimulatedClock(0);
    const runner = createAllocRunner(spec, {
      clock,
      builtinHooks: false,
      taskHooks: (t) => [
        recordingTaskHook('probe', log, {
          prestart: async (_req, res, abort) => {
            if (t.name === 'stuck') return untilAborted(abort);
            res.state = { ran: t.name };
          },
        }, ['prestart', 'stop']),
      ],
    }).start();
    await clock.advance(1_000);
    await clock.advance(1);
    await runner.done;
    const after = log.filter((c) => (c.req as { task?: { name: string } }).task?.name === 'after');
    expect(after.map((c) => c.method)).toEqual(['stop']);
  });
});
