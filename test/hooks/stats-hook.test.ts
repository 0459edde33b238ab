import { EMPTY, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ResourceUsage } from '../../src/drivers/controller.ts';
import { statsHook } from '../../src/hooks/stats-hook.ts';
import type { StatsSink } from '../../src/hooks/types.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';

const task: TaskSpec = { name: 'web', driver: 'mock', config: {} };
const never = new AbortController().signal;

function recordingSink() {
  const calls: string[] = [];
  const opens: (() => Observable<ResourceUsage>)[] = [];
  const sink: StatsSink = {
    track: (name, open) => {
      calls.push(`track:${name}`);
      opens.push(open);
    },
    untrack: (name) => void calls.push(`untrack:${name}`),
  };
  return { sink, calls, opens };
}

describe('the stats hook', () => {
  it('hands the driver stats to the sink at poststart, at its interval, without opening them itself', async () => {
    const { sink, calls, opens } = recordingSink();
    const intervals: number[] = [];
    await statsHook(sink, 250).poststart!({ env: {}, task, stats: (ms) => (intervals.push(ms), EMPTY) }, never);
    expect(calls).toEqual(['track:web']);
    expect(intervals).toEqual([]);
    opens[0]!();
    expect(intervals).toEqual([250]);
  });

  it('tracks nothing for a driver without stats', async () => {
    const { sink, calls } = recordingSink();
    await statsHook(sink).poststart!({ env: {}, task }, never);
    expect(calls).toEqual([]);
  });

  it('takes the task back from the sink when it exits and when the agent shuts down', async () => {
    const { sink, calls } = recordingSink();
    const hook = statsHook(sink);
    await hook.exited!({ task, exitCode: 0 }, never);
    await hook.shutdown!({ task }, never);
    expect(calls).toEqual(['untrack:web', 'untrack:web']);
  });

  it('has no stop hook, as Nomad\'s has none (one hook call less per task)', () => {
    expect(statsHook(recordingSink().sink).stop).toBeUndefined();
  });
});
