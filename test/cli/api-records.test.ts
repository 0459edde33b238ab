/**
 * The CLI reads the agent's allocations back into the records its views print: whatever the agent writes
 * in Nomad's units (event times and create/modify times in nanoseconds, task times RFC 3339, Nomad's zero
 * time for "never"), the CLI must read back as the milliseconds the allocation had, so `alloc status` over
 * the API shows the same times as `status` over a data dir.
 */
import { describe, expect, it } from 'vitest';
import { allocJson, type AllocView } from '../../src/api/alloc-json.ts';
import { placementOfApiAlloc, recordOfApiAlloc, type ApiAllocation } from '../../src/cli/api-records.ts';
import { formatAllocDetail } from '../../src/cli/status.ts';
import type { AllocSpec, TaskState } from '../../src/jobspec/types.ts';

const T = Date.UTC(2026, 10, 26, 4, 0, 0, 123);

const spec: AllocSpec = {
  id: 'a1b2c3d4-0000-4000-8000-000000000000', job: 'web', group: 'api', type: 'batch',
  tasks: [
    { name: 'init', driver: 'raw_exec', config: {}, lifecycle: { hook: 'prestart' } },
    { name: 'side', driver: 'raw_exec', config: {}, lifecycle: { hook: 'prestart', sidecar: true } },
    { name: 'main', driver: 'mock', config: {}, leader: true },
  ],
};

const states: Record<string, TaskState> = {
  init: { state: 'dead', failed: false, restarts: 0, startedAt: T + 10, finishedAt: T + 20, events: [{ type: 'Started', time: T + 10, displayMessage: 'Task started by client' }, { type: 'Terminated', time: T + 20, displayMessage: 'Exit Code: 0' }] },
  side: { state: 'running', failed: false, restarts: 2, lastRestart: T + 40, startedAt: T + 41, events: [{ type: 'Restarting', time: T + 40, displayMessage: 'Task restarting in 1s', message: 'restart policy' }] },
  main: { state: 'pending', failed: false, restarts: 0, events: [] },
};

const view: AllocView = {
  id: spec.id, spec, jobId: 'web', namespace: 'default', group: 'api', index: 0, jobVersion: 0, desired: 'run', desiredDescription: '',
  createIndex: 1, modifyIndex: 2, allocModifyIndex: 2, createTime: T, modifyTime: T + 99, state: { clientStatus: 'running', taskStates: states },
};

/** The job JSON the agent puts beside an allocation (the fields the CLI reads). */
const job = {
  Type: 'batch',
  TaskGroups: [{ Name: 'api', Tasks: [
    { Name: 'init', Driver: 'raw_exec', Lifecycle: { Hook: 'prestart', Sidecar: false } },
    { Name: 'side', Driver: 'raw_exec', Lifecycle: { Hook: 'prestart', Sidecar: true } },
    { Name: 'main', Driver: 'mock', Leader: true },
  ] }],
};

describe('an allocation read back from the API', () => {
  const record = recordOfApiAlloc(JSON.parse(JSON.stringify(allocJson(view, job))) as ApiAllocation);

  it('has the times the allocation had, in milliseconds', () => {
    expect([record.createdAt, record.updatedAt]).toEqual([T, T + 99]);
    expect(record.state.taskStates.init).toMatchObject({ startedAt: T + 10, finishedAt: T + 20 });
    expect(record.state.taskStates.init!.events.map((e) => e.time)).toEqual([T + 10, T + 20]);
    expect(record.state.taskStates.side).toMatchObject({ lastRestart: T + 40, startedAt: T + 41, restarts: 2 });
  });

  it("reads Nomad's zero time as never", () => {
    const main = record.state.taskStates.main!;
    for (const k of ['startedAt', 'finishedAt', 'lastRestart'] as const) expect(main).not.toHaveProperty(k);
  });

  it('keeps the events, states and statuses as they were', () => {
    expect(record.state.clientStatus).toBe('running');
    expect(record.state.taskStates.side!.events).toEqual([{ type: 'Restarting', time: T + 40, displayMessage: 'Task restarting in 1s', message: 'restart policy' }]);
    expect(Object.fromEntries(Object.entries(record.state.taskStates).map(([n, s]) => [n, [s.state, s.failed]]))).toEqual({ init: ['dead', false], side: ['running', false], main: ['pending', false] });
  });

  it('has the tasks of its group with their lifecycle and leader, from the job', () => {
    expect(record.spec).toMatchObject({ id: spec.id, job: 'web', group: 'api', type: 'batch', desiredStatus: 'run' });
    expect(record.spec.tasks).toEqual([
      { name: 'init', driver: 'raw_exec', config: {}, lifecycle: { hook: 'prestart' } },
      { name: 'side', driver: 'raw_exec', config: {}, lifecycle: { hook: 'prestart', sidecar: true } },
      { name: 'main', driver: 'mock', config: {}, leader: true },
    ]);
  });

  it('a list stub without its job still names its tasks, from their states', () => {
    const stub = recordOfApiAlloc(JSON.parse(JSON.stringify({ ...allocJson(view, undefined), Job: null })) as ApiAllocation);
    expect(stub.spec.tasks.map((t) => t.name)).toEqual(['init', 'side', 'main']);
    expect(stub.spec.type).toBe('batch');
  });

  it("keeps the ports it holds, so alloc status shows Nomad's Allocation Addresses (they were missing)", () => {
    const withPorts: AllocSpec = {
      ...spec, network: { mode: 'host', ports: [{ label: 'http' }, { label: 'admin', static: 9901 }] },
      ports: [{ label: 'http', value: 24001, to: 0, hostIP: '127.0.0.1' }, { label: 'admin', value: 9901, to: 8080, hostIP: '127.0.0.1' }],
    };
    const read = recordOfApiAlloc(JSON.parse(JSON.stringify(allocJson({ ...view, spec: withPorts }, job))) as ApiAllocation);
    const text = formatAllocDetail(read, { now: T + 1000 });
    expect(text).toContain([
      'Allocation Addresses (mode = "host")',
      'Label  Dynamic  Address',
      'http   yes      127.0.0.1:24001',
      'admin  no       127.0.0.1:9901 -> 8080',
    ].join('\n'));
    expect(formatAllocDetail(record, { now: T + 1000 })).not.toContain('Allocation Addresses');
  });

  it("names the instance as Nomad's alloc status does (job.group[index])", () => {
    const third = recordOfApiAlloc(JSON.parse(JSON.stringify(allocJson({ ...view, index: 2 }, job))) as ApiAllocation);
    expect(formatAllocDetail(third, { now: T + 1000 }).split('\n').slice(0, 3)).toEqual([`ID             = ${spec.id}`, 'Name           = web.api[2]', 'Job ID         = web']);
  });

  it("with what the agent says, has the rest of Nomad's header: Eval ID, Node ID and Name, Job Version, descriptions", () => {
    const placed = { ...view, evalId: 'e1e2e3e4-0000-4000-8000-000000000000', nodeId: 'a9b8c7d6-0000-4000-8000-000000000000', nodeName: 'box', jobVersion: 3, desiredDescription: 'alloc is being updated due to job update' };
    const api = JSON.parse(JSON.stringify(allocJson(placed, job))) as ApiAllocation;
    const lines = formatAllocDetail(recordOfApiAlloc(api), { now: T + 1000, placement: placementOfApiAlloc(api) }).split('\n');
    expect(lines.slice(0, 13)).toEqual([
      `ID                  = ${spec.id}`,
      'Eval ID             = e1e2e3e4',
      'Name                = web.api[0]',
      'Node ID             = a9b8c7d6',
      'Node Name           = box',
      'Job ID              = web',
      'Job Version         = 3',
      'Job Type            = batch',
      'Namespace           = default',
      'Task Group          = api',
      'Client Status       = running',
      'Client Description  = Tasks are running',
      'Desired Status      = run',
    ]);
    expect(lines[13]).toBe('Desired Description = alloc is being updated due to job update');
  });
});
