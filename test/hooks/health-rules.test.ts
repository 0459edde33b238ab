/**
 * The health_watcher's rules as its pure parts state them, row by row (Nomad's allochealth tracker):
 * which task states make an allocation unhealthy, keep it waiting, or start the min_healthy_time wait;
 * what each task that held health back is told; and which allocations get a watcher at all.
 */
import { describe, expect, it } from 'vitest';
import { taskHealthVerdict, unhealthyReason, watchesDeploymentHealth, type TaskHealthVerdict, type UpdateStrategy } from '../../src/hooks/health-hook.ts';
import type { AllocSpec, AllocState, TaskSpec, TaskState } from '../../src/jobspec/types.ts';

const main: TaskSpec = { name: 'main', driver: 'mock', config: {} };
const pre: TaskSpec = { name: 'pre', driver: 'mock', config: {}, lifecycle: { hook: 'prestart' } };
const side: TaskSpec = { name: 'side', driver: 'mock', config: {}, lifecycle: { hook: 'prestart', sidecar: true } };
const poststart: TaskSpec = { name: 'poststart', driver: 'mock', config: {}, lifecycle: { hook: 'poststart' } };
const poststartSide: TaskSpec = { name: 'poststartSide', driver: 'mock', config: {}, lifecycle: { hook: 'poststart', sidecar: true } };
const post: TaskSpec = { name: 'post', driver: 'mock', config: {}, lifecycle: { hook: 'poststop' } };

const running = (startedAt: number): TaskState => ({ state: 'running', failed: false, restarts: 0, events: [], startedAt });
const pending: TaskState = { state: 'pending', failed: false, restarts: 0, events: [] };
const succeeded = (startedAt: number): TaskState => ({ state: 'dead', failed: false, restarts: 0, events: [], startedAt, finishedAt: startedAt + 1 });
const failed: TaskState = { state: 'dead', failed: true, restarts: 0, events: [], startedAt: 1, finishedAt: 2 };

const alloc = (taskStates: Record<string, TaskState>, clientStatus: AllocState['clientStatus'] = 'running'): AllocState => ({ clientStatus, taskStates });

describe('taskHealthVerdict', () => {
  it.each<[string, TaskSpec[], AllocState, TaskHealthVerdict]>([
    ['every task running: started, since the latest start', [main, side], alloc({ main: running(10), side: running(30) }), { kind: 'started', since: 30 }],
    ['a task still pending: waiting', [main, side], alloc({ main: running(10), side: pending }), { kind: 'waiting' }],
    ['no task state yet: waiting', [main], alloc({}), { kind: 'waiting' }],
    ['a failed task: unhealthy', [main, side], alloc({ main: running(10), side: failed }), { kind: 'unhealthy' }],
    ['a main task that finished, even successfully: unhealthy', [main], alloc({ main: succeeded(5) }), { kind: 'unhealthy' }],
    ['a prestart sidecar that finished, even successfully: unhealthy (it should run beside the mains)', [main, side], alloc({ main: running(10), side: succeeded(5) }), { kind: 'unhealthy' }],
    ['a poststart sidecar that finished, even successfully: unhealthy', [main, poststartSide], alloc({ main: running(10), poststartSide: succeeded(20) }), { kind: 'unhealthy' }],
    ['a running poststart sidecar counts its start', [main, poststartSide], alloc({ main: running(10), poststartSide: running(20) }), { kind: 'started', since: 20 }],
    ['a prestart task that finished successfully does not count against health', [pre, main], alloc({ pre: succeeded(5), main: running(10) }), { kind: 'started', since: 10 }],
    ['a prestart task that failed: unhealthy', [pre, main], alloc({ pre: failed, main: pending }), { kind: 'unhealthy' }],
    ['a poststart task that finished successfully is done, not waited for', [main, poststart], alloc({ main: running(10), poststart: succeeded(20) }), { kind: 'started', since: 10 }],
    ['a poststart task that failed: unhealthy', [main, poststart], alloc({ main: running(10), poststart: failed }), { kind: 'unhealthy' }],
    ['a pending poststop task does not hold health back', [main, post], alloc({ main: running(10), post: pending }), { kind: 'started', since: 10 }],
    ['a failed allocation with no task to blame: unhealthy', [main], alloc({ main: pending }, 'failed'), { kind: 'unhealthy' }],
  ])('%s', (_rule, tasks, state, expected) => {
    expect(taskHealthVerdict(tasks, state)).toEqual(expected);
  });
});

describe('unhealthyReason at the deadline', () => {
  const update: UpdateStrategy = { minHealthyTime: 10_000, healthyDeadline: 300_000 };
  const DEADLINE = 1_000_000;
  it.each<[string, TaskSpec, TaskState | undefined, string | undefined]>([
    ['a failed task', main, failed, 'Unhealthy because of failed task'],
    ['a task that never ran', main, pending, 'Task not running by healthy_deadline of 5m0s'],
    ['a dead main task', main, succeeded(5), 'Unhealthy because of dead task'],
    ['a dead sidecar', side, succeeded(5), 'Unhealthy because of dead task'],
    ['a prestart task that finished successfully: no blame', pre, succeeded(5), undefined],
    ['a task running for less than min_healthy_time', main, running(DEADLINE - 9_999), 'Task not running for min_healthy_time of 10s by healthy_deadline of 5m0s'],
    ['a task running for exactly min_healthy_time: no blame', main, running(DEADLINE - 10_000), undefined],
    ['a task with no state: no blame', main, undefined, undefined],
  ])('%s', (_rule, task, ts, expected) => {
    expect(unhealthyReason(task, ts, DEADLINE, update)).toBe(expected);
  });
});

describe('watchesDeploymentHealth', () => {
  const spec = (type: AllocSpec['type'], update?: UpdateStrategy): AllocSpec => ({ id: 'a', job: 'j', group: 'g', type, tasks: [main], ...(update && { update }) });
  const update: UpdateStrategy = { minHealthyTime: 10_000, healthyDeadline: 300_000 };
  it.each<[string, AllocSpec, boolean]>([
    ['a service job with an update block', spec('service', update), true],
    ['a system job with an update block', spec('system', update), true],
    ['a batch job, even with an update block', spec('batch', update), false],
    ['a service job without an update block', spec('service'), false],
    ['a service job whose health_check is manual', spec('service', { ...update, healthCheck: 'manual' }), false],
    ['a service job whose health_check is task_states', spec('service', { ...update, healthCheck: 'task_states' }), true],
  ])('%s: %s', (_what, s, expected) => {
    expect(watchesDeploymentHealth(s)).toBe(expected);
  });
});
