/**
 * Allocation JSON fields the stub takes from what the registry knows (src/api/alloc-json.ts): ids that are
 * empty strings when unknown, a DeploymentStatus only for service and system jobs with an update block,
 * and ports split into ReservedPorts and DynamicPorts by whether the job gave them a static value.
 */
import { describe, expect, it } from 'vitest';
import { allocJson, allocStatsJson, allocStubJson, type AllocView } from '../../src/api/alloc-json.ts';
import type { AllocSpec, TaskEvent } from '../../src/jobspec/types.ts';

function view(over: Partial<AllocView> = {}, spec: Partial<AllocSpec> = {}): AllocView {
  return {
    id: 'a1',
    spec: { id: 'a1', job: 'web', group: 'api', type: 'service', tasks: [{ name: 't', driver: 'mock', config: {} }], ...spec },
    jobId: 'web',
    namespace: 'default',
    group: 'api',
    index: 0,
    jobVersion: 0,
    desired: 'run',
    desiredDescription: '',
    createIndex: 1,
    modifyIndex: 2,
    allocModifyIndex: 2,
    createTime: 0,
    modifyTime: 1_000,
    state: { clientStatus: 'running', taskStates: {} } as unknown as AllocView['state'],
    ...over,
  };
}

describe('ids known or not', () => {
  it.each<[string, Partial<AllocView>, Record<string, unknown>]>([
    ['unknown: empty strings', {}, { EvalID: '', NodeID: '', NodeName: '', FollowupEvalID: '', PreviousAllocation: '', NextAllocation: '' }],
    ['known: as given', { evalId: 'e1', nodeId: 'n1', nodeName: 'node', previousAllocation: 'p', nextAllocation: 'n' }, { EvalID: 'e1', NodeID: 'n1', NodeName: 'node', PreviousAllocation: 'p', NextAllocation: 'n' }],
  ])('%s', (_what, over, fields) => {
    expect(allocStubJson(view(over))).toMatchObject(fields);
  });

  it.each<[string, Partial<AllocSpec>, string]>([
    ['in a deployment: its ID', { deploymentId: 'd1' }, 'd1'],
    ['outside one: empty', {}, ''],
  ])('the full form names the deployment the allocation counts in, %s', (_what, spec, id) => {
    expect(allocJson(view({}, spec), undefined)['DeploymentID']).toBe(id);
  });

  it("a task event's RestartReason is empty unless given", () => {
    const ev = { type: 'Started', time: 0, displayMessage: 'd' } as TaskEvent;
    const json = (e: TaskEvent) =>
      (allocStubJson(view({ state: { clientStatus: 'running', taskStates: { t: { state: 'running', failed: false, restarts: 0, events: [e] } } } as unknown as AllocView['state'] })).TaskStates as Record<string, { Events: Record<string, unknown>[] }>)['t']!.Events[0]!;
    expect(json(ev).RestartReason).toBe('');
    expect(json({ ...ev, restartReason: 'because' }).RestartReason).toBe('because');
  });
});

describe('DeploymentStatus', () => {
  const update = { update: { maxParallel: 1 } } as unknown as Partial<AllocSpec>;
  it.each<[string, Partial<AllocSpec>, boolean]>([
    ['a service job with an update block has one', { type: 'service', ...update }, true],
    ['a system job with an update block has one', { type: 'system', ...update }, true],
    ['a batch job with an update block has none', { type: 'batch', ...update }, false],
    ['a service job without an update block has none', { type: 'service' }, false],
  ])('%s', (_what, spec, has) => {
    const status = allocStubJson(view({}, spec)).DeploymentStatus;
    if (has) expect(status).toEqual({ Healthy: null, Timestamp: new Date(1_000).toISOString(), Canary: false, ModifyIndex: 2 });
    else expect(status).toBeNull();
  });
});

describe('AllocatedResources', () => {
  it('static ports are ReservedPorts, the others DynamicPorts, both in Shared.Ports', () => {
    const spec = {
      network: { ports: [{ label: 'http', static: 8080 }, { label: 'db' }] },
      ports: [
        { label: 'http', value: 8080, to: 80, hostIP: '10.0.0.1' },
        { label: 'db', value: 23456, to: 0, hostIP: '10.0.0.1' },
      ],
    } as unknown as Partial<AllocSpec>;
    const shared = (allocJson(view({}, spec), undefined).AllocatedResources as { Shared: { Networks: Record<string, unknown>[]; Ports: unknown[] } }).Shared;
    expect(shared.Networks).toHaveLength(1);
    expect(shared.Networks[0]).toMatchObject({
      IP: '10.0.0.1',
      ReservedPorts: [{ Label: 'http', Value: 8080, To: 80, HostNetwork: 'default', IgnoreCollision: false }],
      DynamicPorts: [{ Label: 'db', Value: 23456, To: 0, HostNetwork: 'default', IgnoreCollision: false }],
    });
    expect(shared.Ports).toEqual([
      { Label: 'http', Value: 8080, To: 80, HostIP: '10.0.0.1' },
      { Label: 'db', Value: 23456, To: 0, HostIP: '10.0.0.1' },
    ]);
  });

  it('without a network block every port is dynamic; without a host IP the IP is empty', () => {
    const spec = { ports: [{ label: 'http', value: 8080, to: 0 }] } as unknown as Partial<AllocSpec>;
    const network = (allocJson(view({}, spec), undefined).AllocatedResources as { Shared: { Networks: Record<string, unknown>[] } }).Shared.Networks[0]!;
    expect(network).toMatchObject({ IP: '', Device: '', CIDR: '', Hostname: '', ReservedPorts: [], DynamicPorts: [{ Label: 'http', Value: 8080, To: 0, HostNetwork: 'default', IgnoreCollision: false }] });
  });

  it('a host-mode network with an empty port list: Mode "host", no IP, no ports', () => {
    const spec = { ports: [] } as unknown as Partial<AllocSpec>;
    const shared = (allocJson(view({}, spec), undefined).AllocatedResources as { Shared: { Networks: Record<string, unknown>[]; Ports: unknown[] } }).Shared;
    expect(shared.Networks).toEqual([{ Mode: 'host', Device: '', CIDR: '', IP: '', Hostname: '', MBits: 0, DNS: null, CNI: null, ReservedPorts: [], DynamicPorts: [] }]);
    expect(shared.Ports).toEqual([]);
  });

  it('without ports there are none', () => {
    expect(allocJson(view(), undefined).AllocatedResources).toBeNull();
  });
});

describe('AllocResourceUsage', () => {
  it('says what it measured as Nomad does, and has no device stats', () => {
    const json = allocStatsJson({
      timestamp: 2,
      usage: { cpuPercent: 5, memoryRss: 100 },
      tasks: { t: { timestamp: 3, cpu: { percent: 5, userMs: 7, systemMs: 8, totalTicks: 9 }, memory: { rss: 100, swap: 4 } } },
    }) as { ResourceUsage: Record<string, Record<string, unknown> | unknown[]>; Tasks: Record<string, { ResourceUsage: Record<string, Record<string, unknown> | unknown[]> }> };
    for (const usage of [json.ResourceUsage, json.Tasks['t']!.ResourceUsage]) {
      expect((usage['MemoryStats'] as Record<string, unknown>)['Measured']).toEqual(['RSS']);
      expect((usage['CpuStats'] as Record<string, unknown>)['Measured']).toEqual(['Percent', 'System Mode', 'User Mode']);
      expect(usage['DeviceStats']).toEqual([]);
    }
    expect(json.Tasks['t']!.ResourceUsage['CpuStats']).toMatchObject({ SystemMode: 8, UserMode: 7, TotalTicks: 9, Percent: 5 });
    expect(json.Tasks['t']!.ResourceUsage['MemoryStats']).toMatchObject({ RSS: 100, Swap: 4, Usage: 100 });
  });
});
