/**
 * A poststart task that is still running (not a sidecar) is judged like a main task: its start counts
 * toward min_healthy_time; only one that finished successfully is done and left out (Nomad's
 * allochealth tracker).
 */
import { describe, expect, it } from 'vitest';
import { taskHealthVerdict } from '../../src/hooks/health-hook.ts';
import type { TaskSpec, TaskState } from '../../src/jobspec/types.ts';

const main: TaskSpec = { name: 'main', driver: 'mock', config: {} };
const poststart: TaskSpec = { name: 'poststart', driver: 'mock', config: {}, lifecycle: { hook: 'poststart' } };
const running = (startedAt: number): TaskState => ({ state: 'running', failed: false, restarts: 0, events: [], startedAt });

describe('a running poststart task', () => {
  it('counts its start: health waits for the later of the two', () => {
    expect(taskHealthVerdict([main, poststart], { clientStatus: 'running', taskStates: { main: running(10), poststart: running(20) } })).toEqual({ kind: 'started', since: 20 });
  });
});
