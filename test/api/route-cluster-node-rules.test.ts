/**
 * The small routes clients probe (src/api/routes/{cluster,nodes,agent,operator}.ts), rule by rule, through
 * one served agent in process: the member and its address, the namespaces (`default` first, then by name,
 * each at its first job's index, by prefix), the one node and its allocations (404 for any other node), the
 * agent and status probes, and the snapshot's headers. nomad-cluster.test.ts has the members' tags.
 */
import { existsSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
let nodeId: string;
beforeAll(async () => {
  s = await serve();
  nodeId = String(s.store.get('meta', 'nodeId'));
});
afterAll(cleanUp);

const get = async (path: string) => {
  const res = await call(s.socket, 'GET', path);
  return { status: res.status, text: res.text, headers: res.headers, body: res.status === 200 ? res.json<any>() : undefined };
};

describe('the member', { timeout: SUITE_TIMEOUT }, () => {
  it('is at the agent\'s address, a socket as an address without a port, with Serf\'s protocol versions', async () => {
    const [member] = (await get('/v1/agent/members')).body['Members'] as Json[];
    expect(member).toMatchObject({
      Addr: s.api.socketPath, Port: 0, ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2, DelegateMin: 2, DelegateMax: 5, DelegateCur: 4,
      Tags: { build: 'test', bootstrap: '1', expect: '1', vsn: '1', raft_vsn: '3' },
    });
  });
});

describe('the namespaces', { timeout: SUITE_TIMEOUT }, () => {
  it('are default first, then the others by name, each created at the index of its first job', async () => {
    const zeta = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('z1', undefined, { Namespace: 'zeta' }))).json<Json>();
    const alpha = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('a1', undefined, { Namespace: 'alpha' }))).json<Json>();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('a2', undefined, { Namespace: 'alpha' }));
    const { body, headers } = await get('/v1/namespaces');
    expect((body as Json[]).map((n) => [n['Name'], n['CreateIndex'], n['ModifyIndex']])).toEqual([['default', 1, 1], ['alpha', alpha['Index'], alpha['Index']], ['zeta', zeta['Index'], zeta['Index']]]);
    expect(body[1]).toEqual({ Name: 'alpha', Description: '', Quota: '', Capabilities: null, NodePoolConfiguration: null, Meta: null, CreateIndex: alpha['Index'], ModifyIndex: alpha['Index'] });
    expect(Number(headers['x-nomad-index'])).toBe(s.api.registry.jobsIndex);
  });

  it('are listed by prefix', async () => {
    expect(((await get('/v1/namespaces?prefix=al')).body as Json[]).map((n) => n['Name'])).toEqual(['alpha']);
    expect(((await get('/v1/namespaces?prefix=d')).body as Json[]).map((n) => n['Name'])).toEqual(['default']);
  });

  it('read one at the jobs\' index', async () => {
    const one = await get('/v1/namespace/zeta');
    expect(one.body['Name']).toBe('zeta');
    expect(Number(one.headers['x-nomad-index'])).toBe(s.api.registry.jobsIndex);
  });
});

describe('the node', { timeout: SUITE_TIMEOUT }, () => {
  it('is the one node listed, by prefix, with its attributes only when ?os=true', async () => {
    const all = (await get('/v1/nodes')).body as Json[];
    expect(all.map((n) => n['ID'])).toEqual([nodeId]);
    expect((await get(`/v1/nodes?prefix=${nodeId.slice(0, 4)}`)).body).toHaveLength(1);
    expect((await get(`/v1/nodes?prefix=${nodeId.slice(0, 4)}x`)).body).toEqual([]);
    expect(all[0]).not.toHaveProperty('Attributes');
    expect(((await get('/v1/nodes?os=true')).body as Json[])[0]!['Attributes']).toMatchObject({ 'os.name': expect.any(String) });
  });

  it('is read by its ID; any other ID is 404 "node not found", for the node, its allocations and its stats', async () => {
    expect((await get(`/v1/node/${nodeId}`)).body['ID']).toBe(nodeId);
    for (const path of ['/v1/node/other', '/v1/node/other/allocations', '/v1/client/stats?node_id=other']) {
      const res = await get(path);
      expect([path, res.status, res.text]).toEqual([path, 404, 'node not found']);
    }
    expect((await get('/v1/client/stats?node_id=')).status).toBe(200);
    expect((await get(`/v1/client/stats?node_id=${nodeId}`)).status).toBe(200);
  });

  it('lists every allocation in full, at the allocations\' index', async () => {
    const alloc = await runJob(s, mockJob('on-node'));
    const res = await get(`/v1/node/${nodeId}/allocations`);
    expect((res.body as Json[]).find((a) => a['ID'] === alloc.ID)).toMatchObject({ JobID: 'on-node', Job: { ID: 'on-node' } });
    expect(Number(res.headers['x-nomad-index'])).toBe(s.api.registry.allocsIndex);
  });
});

describe('the agent probes', { timeout: SUITE_TIMEOUT }, () => {
  it('answer self with the data dir, the version and the allocations counted', async () => {
    const self = (await get('/v1/agent/self')).body;
    expect(self['config']).toMatchObject({ Region: 'global', Datacenter: 'dc1', DataDir: s.dataDir, Version: { Version: 'test' }, Client: { Enabled: true }, Server: { Enabled: true } });
    expect(self['member']).toMatchObject({ Addr: s.api.socketPath, Port: 0, Status: 'alive', Tags: { build: 'test' } });
    expect(self['stats']['client']['num_allocations']).toBe(String(s.api.registry.listAllocs().length));
    expect(self['stats']['runtime']).toEqual({ arch: process.arch, os: process.platform, version: process.version });
  });

  it('answer health, the leader as a JSON string, the peers and the one region', async () => {
    expect((await get('/v1/agent/health')).body).toEqual({ client: { ok: true, message: 'ok' }, server: { ok: true, message: 'ok' } });
    const leader = await get('/v1/status/leader');
    expect(leader.headers['content-type']).toMatch(/^application\/json/);
    expect(leader.text).toBe(JSON.stringify(s.api.socketPath));
    expect((await get('/v1/status/peers')).body).toEqual([s.api.socketPath]);
    expect((await get('/v1/regions')).body).toEqual(['global']);
  });
});

describe('the snapshot', { timeout: SUITE_TIMEOUT }, () => {
  it('is sent as octet-stream at the agent\'s index, its copy beside the store removed once sent', async () => {
    const res = await call(s.socket, 'GET', '/v1/operator/snapshot');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(Number(res.headers['x-nomad-index'])).toBeGreaterThanOrEqual(s.api.registry.jobsIndex);
    expect(res.text.length).toBeGreaterThan(0);
    const second = await call(s.socket, 'GET', '/v1/operator/snapshot');
    expect(second.status).toBe(200);
    const left = () => readdirSync(s.dataDir).filter((f) => f.startsWith('snapshot-'));
    for (let i = 0; i < 100 && left().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(left()).toEqual([]);
    expect(existsSync(s.dataDir)).toBe(true);
  });
});

describe('metrics and checks', { timeout: SUITE_TIMEOUT }, () => {
  it('answers metrics as JSON with no format or an empty one, as Prometheus text when asked, and refuses any other format', async () => {
    for (const q of ['', '?format=']) expect((await get(`/v1/metrics${q}`)).body).toHaveProperty('Gauges');
    const prom = await call(s.socket, 'GET', '/v1/metrics?format=prometheus');
    expect(prom.headers['content-type']).toMatch(/^text\/plain/);
    expect(prom.text).toContain('nomad_client_allocations_running');
    const bad = await get('/v1/metrics?format=xml');
    expect([bad.status, bad.text]).toEqual([400, 'format "xml": this agent answers JSON (no format) or "prometheus"']);
  });

  it('answers an allocation\'s checks ({} without any), 404 for an unknown allocation', async () => {
    const alloc = await runJob(s, mockJob('checked'));
    expect((await get(`/v1/client/allocation/${alloc.ID}/checks`)).body).toEqual({});
    const missing = await get('/v1/client/allocation/ffffffff-none/checks');
    expect([missing.status, missing.text]).toEqual([404, 'alloc not found']);
  });
});
