import { describe, expect, it } from 'vitest';
import { registrationsOf, serviceLookup } from '../../src/services/index.ts';
import type { ServiceSpec } from '../../src/jobspec/types.ts';

const alloc = { id: 'a1', job: 'web', namespace: 'prod', ports: [{ label: 'http', value: 23456, to: 0, hostIP: '10.0.0.5' }] };
const node = { id: 'n1', datacenter: 'dc1' };
const service = (extra: Partial<ServiceSpec>): ServiceSpec => ({ name: 'web', provider: 'nomad', addressMode: 'auto', onUpdate: 'require_healthy', ...extra });

describe('registrations of a workload\'s services', () => {
  it('registers at the allocated port\'s host address and value, with Nomad\'s ID', () => {
    const [r] = registrationsOf({ alloc, workload: 'server', services: [service({ port: 'http', tags: ['a'] })], env: {}, node });
    expect(r).toEqual({ ID: '_nomad-task-a1-server-web-http', ServiceName: 'web', Namespace: 'prod', NodeID: 'n1', Datacenter: 'dc1', JobID: 'web', AllocID: 'a1', Tags: ['a'], Address: '10.0.0.5', Port: 23456 });
  });

  it('takes a numeric port as it is, and an explicit address over the port\'s', () => {
    const [r] = registrationsOf({ alloc, workload: 'group-app', services: [service({ port: '8080', address: '${NOMAD_META_host}' })], env: { NOMAD_META_host: 'db.internal' }, node });
    expect(r).toMatchObject({ ID: '_nomad-task-a1-group-app-web-8080', Address: 'db.internal', Port: 8080 });
  });

  it('registers a service without a port at the host address, port 0', () => {
    const [r] = registrationsOf({ alloc: { ...alloc, ports: [] }, workload: 'server', services: [service({})], env: {}, node, hostIP: '127.0.0.1' });
    expect(r).toMatchObject({ ID: '_nomad-task-a1-server-web-', Address: '127.0.0.1', Port: 0 });
  });

  it('interpolates names and tags from the env given, an unset meta key empty and other unknown keys as written', () => {
    const [r] = registrationsOf({ alloc, workload: 'b', services: [service({ name: 'api-${NOMAD_TASK_NAME}', port: 'http', tags: ['v${NOMAD_META_version}', '${NOMAD_META_x}', '${nope}'] })], env: { NOMAD_TASK_NAME: 'b', NOMAD_META_version: '2' }, node });
    expect(r).toMatchObject({ ServiceName: 'api-b', ID: '_nomad-task-a1-b-api-b-http', Tags: ['v2', '', '${nope}'] });
    expect(serviceLookup({ A: '1' })('A')).toBe('1');
    expect(serviceLookup({})('NOMAD_META_missing')).toBe('');
    expect(serviceLookup({})('node.unique.id')).toBeUndefined();
  });
});
