/**
 * Allocations in Nomad's API shape, field by field: Nomad's clients (the nomad CLI, the Go and Python
 * SDKs) read task event times, kill timeouts and start delays as nanoseconds, task state times as RFC 3339
 * with Nomad's zero time for "never", and allocation create/modify times as nanoseconds.
 */
import { describe, expect, it } from 'vitest';
import { allocJson, allocName, allocStatsJson, allocStubJson, type AllocView } from '../../src/api/alloc-json.ts';
import type { AllocSpec, TaskEvent, TaskState } from '../../src/jobspec/types.ts';

const T = Date.UTC(2026, 10, 26, 4, 0, 0, 123); // ms since the epoch

function view(over: Partial<AllocView> = {}, task: Partial<TaskState> = {}, spec: Partial<AllocSpec> = {}): AllocView {
  const taskState: TaskState = { state: 'running', failed: false, restarts: 0, events: [], ...task } as TaskState;
  return {
    id: 'a1b2c3d4-0000-4000-8000-000000000000',
    spec: { id: 'a1b2c3d4-0000-4000-8000-000000000000', job: 'web', group: 'api', type: 'service', tasks: [{ name: 't', driver: 'mock', config: {} }], ...spec },
    jobId: 'web',
    namespace: 'default',
    group: 'api',
    index: 2,
    jobVersion: 3,
    desired: 'run',
    desiredDescription: '',
    createIndex: 7,
    modifyIndex: 9,
    allocModifyIndex: 8,
    createTime: T,
    modifyTime: T + 5,
    state: { clientStatus: 'running', taskStates: { t: taskState } } as AllocView['state'],
    ...over,
  };
}

const eventOf = (e: Partial<TaskEvent>) => allocStubJson(view({}, { events: [{ type: 'Started', time: T, displayMessage: 'Task started by client', ...e } as TaskEvent] })).TaskStates as Record<string, { Events: Record<string, unknown>[] }>;

describe("task events in Nomad's units", () => {
  it.each([
    ['Time is nanoseconds since the epoch', { time: T }, 'Time', T * 1e6],
    ['KillTimeout is nanoseconds', { killTimeout: 5_000 }, 'KillTimeout', 5e9],
    ['StartDelay is nanoseconds', { startDelay: 15_000 }, 'StartDelay', 15e9],
    ['a missing KillTimeout is 0', {}, 'KillTimeout', 0],
    ['a missing StartDelay is 0', {}, 'StartDelay', 0],
    ['ExitCode and Signal default to 0', {}, 'ExitCode', 0],
    ['FailsTask defaults to false', {}, 'FailsTask', false],
    ['Message defaults to the empty string', {}, 'Message', ''],
    ['Details defaults to an empty map', {}, 'Details', {}],
  ])('%s', (_rule, e, field, expected) => {
    expect(eventOf(e).t!.Events[0]![field]).toEqual(expected);
  });

  it('keeps the event fields Nomad names: Type, DisplayMessage, ExitCode, Signal, RestartReason', () => {
    const [ev] = eventOf({ type: 'Terminated', exitCode: 143, signal: 15, displayMessage: 'Exit Code: 143, Signal: 15', restartReason: 'r' }).t!.Events;
    expect(ev).toMatchObject({ Type: 'Terminated', DisplayMessage: 'Exit Code: 143, Signal: 15', ExitCode: 143, Signal: 15, RestartReason: 'r' });
  });
});

describe("task state times in Nomad's form", () => {
  const states = (task: Partial<TaskState>) => (allocStubJson(view({}, task)).TaskStates as Record<string, Record<string, unknown>>).t!;
  it.each([
    ['StartedAt is RFC 3339', { startedAt: T }, 'StartedAt', '2026-11-26T04:00:00.123Z'],
    ['FinishedAt is RFC 3339', { finishedAt: T }, 'FinishedAt', '2026-11-26T04:00:00.123Z'],
    ['LastRestart is RFC 3339', { lastRestart: T }, 'LastRestart', '2026-11-26T04:00:00.123Z'],
    ['a task never started has Nomad\'s zero time', {}, 'StartedAt', '0001-01-01T00:00:00Z'],
    ['a task never finished has Nomad\'s zero time', {}, 'FinishedAt', '0001-01-01T00:00:00Z'],
    ['Restarts is the count', { restarts: 4 }, 'Restarts', 4],
    ['Failed is the flag', { failed: true }, 'Failed', true],
  ])('%s', (_rule, task, field, expected) => {
    expect(states(task)[field]).toEqual(expected);
  });
});

describe('allocation stubs', () => {
  it('name the allocation job.group[index] and carry the indexes, statuses and versions', () => {
    expect(allocStubJson(view())).toMatchObject({
      ID: 'a1b2c3d4-0000-4000-8000-000000000000',
      Name: 'web.api[2]',
      JobID: 'web',
      JobType: 'service',
      JobVersion: 3,
      TaskGroup: 'api',
      DesiredStatus: 'run',
      ClientStatus: 'running',
      ClientDescription: 'Tasks are running',
      CreateIndex: 7,
      ModifyIndex: 9,
      AllocModifyIndex: 8,
      PreviousAllocation: '',
      NextAllocation: '',
    });
    expect(allocName({ jobId: 'j', group: 'g', index: 0 })).toBe('j.g[0]');
  });

  it('give CreateTime and ModifyTime in nanoseconds', () => {
    expect(allocStubJson(view())).toMatchObject({ CreateTime: T * 1e6, ModifyTime: (T + 5) * 1e6 });
  });

  it.each([
    ['pending', 'No tasks have started'],
    ['running', 'Tasks are running'],
    ['complete', 'All tasks have completed'],
    ['failed', 'Failed tasks'],
  ] as const)('describe client status %s as Nomad does', (status, text) => {
    expect(allocStubJson(view({ state: { clientStatus: status, taskStates: {} } as unknown as AllocView['state'] })).ClientDescription).toBe(text);
  });

  it.each([
    ['a service job without an update block', { type: 'service' }, null],
    ['a batch job with an update block', { type: 'batch', update: { minHealthyTime: 10_000, healthyDeadline: 300_000 } }, null],
  ] as [string, Partial<AllocSpec>, null][])('have no DeploymentStatus for %s', (_what, spec, expected) => {
    expect(allocStubJson(view({}, {}, spec)).DeploymentStatus).toBe(expected);
  });

  it('give a deployment-tracked allocation a DeploymentStatus with Healthy null until the health check decides', () => {
    const spec = { type: 'service', update: { minHealthyTime: 10_000, healthyDeadline: 300_000 } } as Partial<AllocSpec>;
    expect(allocStubJson(view({}, {}, spec)).DeploymentStatus).toMatchObject({ Healthy: null, Canary: false, ModifyIndex: 9 });
    const decided = view({ state: { clientStatus: 'running', taskStates: {}, deploymentStatus: { healthy: true, timestamp: T } } as unknown as AllocView['state'] }, {}, spec);
    expect(allocStubJson(decided).DeploymentStatus).toMatchObject({ Healthy: true, Timestamp: '2026-11-26T04:00:00.123Z' });
  });

  it('link the allocation it replaced and the one that replaced it', () => {
    expect(allocStubJson(view({ previousAllocation: 'p', nextAllocation: 'n' }))).toMatchObject({ PreviousAllocation: 'p', NextAllocation: 'n' });
  });

  it('become the full allocation with its job', () => {
    expect(allocJson(view(), { ID: 'web' })).toMatchObject({ Name: 'web.api[2]', Job: { ID: 'web' } });
    expect(allocJson(view(), undefined).Job).toBeNull();
  });
});

describe('allocation stats', () => {
  it('give timestamps in nanoseconds and CPU and memory under Nomad\'s names', () => {
    const json = allocStatsJson({
      timestamp: T,
      usage: { cpuPercent: 12.5, memoryRss: 4096 },
      tasks: { t: { timestamp: T + 1, cpu: { percent: 12.5, userMs: 30, systemMs: 10, totalTicks: 99 }, memory: { rss: 4096, swap: 8 } } },
    });
    expect(json).toMatchObject({
      Timestamp: T * 1e6,
      ResourceUsage: { MemoryStats: { RSS: 4096 }, CpuStats: { Percent: 12.5 } },
      Tasks: { t: { Timestamp: (T + 1) * 1e6, ResourceUsage: { MemoryStats: { RSS: 4096, Swap: 8 }, CpuStats: { UserMode: 30, SystemMode: 10, TotalTicks: 99, Percent: 12.5 } } } },
    });
  });
});
