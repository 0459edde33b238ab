import { describe, expect, it } from 'vitest';
import { StateIndex } from '../../src/api/state-index.ts';
import { makeAllocServiceId, ServiceRegistry, workloadName, type ServiceChanges, type ServiceRegistrationInput } from '../../src/services/index.ts';

const reg = (alloc: string, workload: string, name: string, port: number, extra: Partial<ServiceRegistrationInput> = {}): ServiceRegistrationInput => ({
  ID: makeAllocServiceId(alloc, workload, name, 'http'),
  ServiceName: name,
  Namespace: 'default',
  NodeID: 'node-1',
  Datacenter: 'dc1',
  JobID: 'web',
  AllocID: alloc,
  Tags: ['v1'],
  Address: '127.0.0.1',
  Port: port,
  ...extra,
});

describe('the service registry', () => {
  it('builds IDs as Nomad\'s MakeAllocServiceID, with group-<group> for group services', () => {
    expect(makeAllocServiceId('a1', workloadName('app'), 'web', 'http')).toBe('_nomad-task-a1-group-app-web-http');
    expect(makeAllocServiceId('a1', workloadName('app', 'server'), 'web', 'http')).toBe('_nomad-task-a1-server-web-http');
  });

  it('lists a service\'s instances by name, ordered by ID, with create and modify indexes', () => {
    const r = new ServiceRegistry();
    r.sync('b', 'group-app', [reg('b', 'group-app', 'web', 2001)]);
    r.sync('a', 'group-app', [reg('a', 'group-app', 'web', 2000), reg('a', 'group-app', 'db', 3000)]);
    expect(r.list('web').map((s) => [s.AllocID, s.Port, s.CreateIndex, s.ModifyIndex])).toEqual([['a', 2000, 2, 2], ['b', 2001, 1, 1]]);
    expect(r.index).toBe(2);
    expect(r.list('nothing')).toEqual([]);
  });

  it('updates a changed registration in place, keeping its CreateIndex, and takes no index for an unchanged one', () => {
    const r = new ServiceRegistry();
    r.sync('a', 'server', [reg('a', 'server', 'web', 2000)]);
    expect(r.sync('a', 'server', [reg('a', 'server', 'web', 2000)])).toBeUndefined();
    expect(r.index).toBe(1);
    r.sync('a', 'server', [reg('a', 'server', 'web', 2000, { Tags: ['v2'] })]);
    expect(r.list('web')).toMatchObject([{ Tags: ['v2'], CreateIndex: 1, ModifyIndex: 2 }]);
  });

  it('removes what a workload no longer registers, and only that workload\'s', () => {
    const r = new ServiceRegistry();
    r.sync('a', 'server', [reg('a', 'server', 'web', 2000), reg('a', 'server', 'admin', 9901)]);
    r.sync('a', 'group-app', [reg('a', 'group-app', 'app', 2000)]);
    r.sync('a', 'server', [reg('a', 'server', 'web', 2000)]);
    expect(r.byAlloc('a').map((s) => s.ServiceName).sort()).toEqual(['app', 'web']);
    r.deregisterWorkload('a', 'server');
    expect(r.byAlloc('a').map((s) => s.ServiceName)).toEqual(['app']);
    r.deregisterAlloc('a');
    expect(r.byAlloc('a')).toEqual([]);
    expect(r.deregisterAlloc('a')).toBeUndefined();
  });

  it('lists names per namespace with the union of their tags', () => {
    const r = new ServiceRegistry();
    r.sync('a', 'x', [reg('a', 'x', 'web', 1, { Tags: ['b', 'a'] })]);
    r.sync('b', 'x', [reg('b', 'x', 'web', 2, { Tags: ['c', 'a'] })]);
    r.sync('c', 'x', [reg('c', 'x', 'api', 3, { Namespace: 'prod', Tags: [] })]);
    expect(r.names()).toEqual([{ Namespace: 'default', Services: [{ ServiceName: 'web', Tags: ['a', 'b', 'c'] }] }]);
    expect(r.names('*').map((n) => n.Namespace)).toEqual(['default', 'prod']);
    expect(r.list('api')).toEqual([]);
    expect(r.list('api', 'prod')).toHaveLength(1);
    expect(r.byJob('web', '*')).toHaveLength(3);
  });

  it('removes one registration by ID and says whether there was one', () => {
    const r = new ServiceRegistry();
    const input = reg('a', 'x', 'web', 1);
    r.sync('a', 'x', [input]);
    expect(r.remove(input.ID)).toBe(true);
    expect(r.remove(input.ID)).toBe(false);
    expect(r.list('web')).toEqual([]);
    // The workload no longer owns it: a later sync of nothing changes nothing.
    expect(r.sync('a', 'x', [])).toBeUndefined();
  });

  it('streams each write with its index, deregistrations included', () => {
    const r = new ServiceRegistry();
    const seen: ServiceChanges[] = [];
    r.changes$.subscribe((c) => seen.push(c));
    r.sync('a', 'x', [reg('a', 'x', 'web', 1)]);
    r.deregisterAlloc('a');
    expect(seen.map((c) => [c.index, c.changes.map((x) => `${x.type} ${x.registration.ServiceName}`)])).toEqual([
      [1, ['ServiceRegistration web']],
      [2, ['ServiceDeregistration web']],
    ]);
  });

  it('takes the agent\'s index once attached, restamping what was registered before', () => {
    const r = new ServiceRegistry();
    r.sync('a', 'x', [reg('a', 'x', 'web', 1)]);
    const index = new StateIndex(40);
    const woke: number[] = [];
    index.changed$.subscribe((i) => woke.push(i));
    r.useIndex(index);
    expect(r.list('web')).toMatchObject([{ CreateIndex: 41, ModifyIndex: 41 }]);
    r.sync('b', 'x', [reg('b', 'x', 'web', 2)]);
    expect(r.index).toBe(42);
    expect(woke).toEqual([41, 42]);
  });
});
