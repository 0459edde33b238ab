/**
 * The small routes clients probe (src/api/routes/{cluster,nodes,agent,operator}.ts), rule by rule, through
 * one served agent in process: the member and its address, the namespaces (`default` first, then by name,
 * each at its first job's index, by prefix), the one node and its allocations (404 for any other node), the
 * agent and status probes, and the snapshot's headers. nomad-cluster.test.ts has the members' tags.
 */
import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addrPort } from '../../src/api/routes/cluster.ts';
import { AgentStore, STORE_FILE } from '../../src/state/agent-store.ts';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, runJob, serve, type Served, SUITE_TIMEOUT, until } from './in-process-agent.ts';

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

  it('is the one alive server of region global and dc1, named host.global, tagged with its build and node ID', async () => {
    expect((await get('/v1/agent/members')).body).toEqual({
      ServerName: hostname(), ServerRegion: 'global', ServerDC: 'dc1',
      Members: [{
        Name: `${hostname()}.global`, Addr: s.api.socketPath, Port: 0, Status: 'alive',
        Tags: { region: 'global', dc: 'dc1', role: 'nomad', build: 'test', id: nodeId, bootstrap: '1', expect: '1', vsn: '1', raft_vsn: '3' },
        ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2, DelegateMin: 2, DelegateMax: 5, DelegateCur: 4,
      }],
    });
    expect((await get('/v1/agent/servers')).body).toEqual([s.api.socketPath]);
  });

  it.each([
    ['127.0.0.1:4646', { Addr: '127.0.0.1', Port: 4646 }],
    ['localhost:0', { Addr: 'localhost', Port: 0 }],
    ['[::1]:4646', { Addr: '::1', Port: 4646 }],
    ['[fe80::1]:80', { Addr: 'fe80::1', Port: 80 }],
    ['/tmp/d/agent.sock', { Addr: '/tmp/d/agent.sock', Port: 0 }],
    ['/tmp/d:1/agent.sock', { Addr: '/tmp/d:1/agent.sock', Port: 0 }],
    ['host:port', { Addr: 'host:port', Port: 0 }],
    ['x127.0.0.1:46', { Addr: 'x127.0.0.1', Port: 46 }],
    ['127.0.0.1:46x', { Addr: '127.0.0.1:46x', Port: 0 }],
    ['::1:4646', { Addr: '::1:4646', Port: 0 }],
  ])('splits the listen address %j as Serf reports a member: %j', (address, split) => {
    expect(addrPort(address)).toEqual(split);
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

  it('show default as Nomad\'s shared namespace, created at index 1', async () => {
    expect((await get('/v1/namespace/default')).body).toEqual({ Name: 'default', Description: 'Default shared namespace', Quota: '', Capabilities: null, NodePoolConfiguration: null, Meta: null, CreateIndex: 1, ModifyIndex: 1 });
  });

  it('take the index of the namespace\'s first job, whichever job is listed first', async () => {
    // Listed by ID, "b-first" comes after "a-later": the namespace was still created with "b-first".
    const first = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('b-first', undefined, { Namespace: 'ordered' }))).json<Json>();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('a-later', undefined, { Namespace: 'ordered' }));
    expect((await get('/v1/namespace/ordered')).body).toMatchObject({ CreateIndex: first['Index'], ModifyIndex: first['Index'] });
  });

  it('are listed whole without a prefix, none for a prefix nothing has; an unknown one is 404 in its words', async () => {
    const names = ((await get('/v1/namespaces')).body as Json[]).map((n) => n['Name']);
    expect(names[0]).toBe('default');
    expect(names.slice(1)).toEqual([...names.slice(1)].sort());
    expect(names).toEqual(expect.arrayContaining(['alpha', 'zeta']));
    expect((await get('/v1/namespaces?prefix=nothing')).body).toEqual([]);
    const missing = await get('/v1/namespace/nothing');
    expect([missing.status, missing.text]).toEqual([404, 'namespace not found']);
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

  it('is listed and read at its registration\'s index', async () => {
    const one = await get(`/v1/node/${nodeId}`);
    const list = await get('/v1/nodes');
    expect(Number(one.headers['x-nomad-index'])).toBe(one.body['CreateIndex']);
    expect(Number(list.headers['x-nomad-index'])).toBe(one.body['CreateIndex']);
    expect(list.body[0]['CreateIndex']).toBe(one.body['CreateIndex']);
  });

  it('answers its host stats without a node_id, with one naming it, and with an empty one', async () => {
    for (const q of ['', '?node_id=', `?node_id=${nodeId}`]) {
      const res = await get(`/v1/client/stats${q}`);
      expect([q, res.status]).toEqual([q, 200]);
      expect(res.body).toMatchObject({ Memory: expect.any(Object), CPU: expect.any(Array), Uptime: expect.any(Number) });
    }
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

  it('answer self as the leader, client and server of region global and dc1, named after the host, its node of no class, no meta, in the default pool', async () => {
    expect((await get('/v1/agent/self')).body).toEqual({
      config: { Region: 'global', Datacenter: 'dc1', NodeName: hostname(), DataDir: s.dataDir, Version: { Version: 'test' }, Client: { Enabled: true, NodeClass: '', NodePool: 'default', Meta: {} }, Server: { Enabled: true } },
      member: { Name: `${hostname()}.global`, Addr: s.api.socketPath, Port: 0, Tags: { region: 'global', dc: 'dc1', role: 'nomad', build: 'test' }, Status: 'alive' },
      stats: {
        nomad: { leader: 'true', known_regions: '1', server: 'true' },
        client: { known_servers: s.api.socketPath, num_allocations: String(s.api.registry.listAllocs().length), node_id: nodeId },
        runtime: { arch: process.arch, os: process.platform, version: process.version },
      },
    });
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

  it('is a store with every job, each snapshot a copy of its own', async () => {
    await runJob(s, mockJob('snapped'));
    const [one, two] = await Promise.all([snapshot(), snapshot()]);
    for (const body of [one, two]) {
      const dir = freshDir();
      await writeFile(join(dir, STORE_FILE), body);
      const copy = AgentStore.open(dir, { create: false });
      try {
        expect(copy.entries('jobs').values.length).toBe(s.store.entries('jobs').values.length);
        expect(copy.entries('jobs').values.length).toBeGreaterThan(0);
      } finally {
        await copy.close();
      }
    }
  });
});

/** The snapshot's bytes (call() reads text). */
const snapshot = () => new Promise<Buffer>((resolve, reject) => {
  const req = request({ socketPath: s.socket.socketPath, path: '/v1/operator/snapshot' }, async (res) => {
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    if (res.statusCode !== 200) reject(new Error(`snapshot: ${res.statusCode} ${Buffer.concat(chunks).toString()}`));
    else resolve(Buffer.concat(chunks));
  });
  req.on('error', reject);
  req.end();
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

  it('answers each check of an allocation by its ID, named after the allocation as Nomad names it', async () => {
    const job = mockJob('with-check');
    // A literal port: the check's address is this host; an hour's interval: it shows what it says before its first run.
    Object.assign(job.Job.TaskGroups[0]!, { Services: [{ Name: 'web', PortLabel: '1', Provider: 'nomad', Checks: [{ Name: 'up', Type: 'tcp', PortLabel: '1', Interval: 3_600e9, Timeout: 1e9 }] }] });
    const alloc = await runJob(s, job);
    const checks = (await get(`/v1/client/allocation/${alloc.ID}/checks`)).body as Json;
    const [id] = Object.keys(checks);
    expect(Object.keys(checks)).toHaveLength(1);
    expect(checks[id!]).toEqual({ ID: id, Mode: 'healthiness', Status: 'pending', Output: 'nomad: waiting to run', Timestamp: expect.any(Number), Group: 'with-check.g[0]', Service: 'web', Check: 'up' });
  });

  it('answers {} for an allocation that finished before this agent started (it has no runner)', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    const alloc = await runJob(first, mockJob('finished'));
    expect((await call(first.socket, 'DELETE', '/v1/job/finished')).status).toBe(200);
    await waitForAllocs(first.socket, '/v1/job/finished/allocations', (l) => l.every((a) => a.ClientStatus === 'complete'));
    // Its postrun hooks ran and its record says so: the next agent does not restore it.
    await first.agent.get(alloc.ID)!.done.catch(() => undefined);
    type Snap = { status?: string; value?: unknown };
    const finished = (r: unknown) => {
      const snap = (r as { snapshot?: { snapshot?: Snap } } | undefined)?.snapshot?.snapshot;
      return snap?.status === 'done' || snap?.value === 'terminal' || snap?.value === 'destroyed';
    };
    await until(async () => first.store.get('runners', alloc.ID), finished, 'the runner record finished');
    await first.stop();
    const again = await serve(dir);
    const res = await call(again.socket, 'GET', `/v1/client/allocation/${alloc.ID}/checks`);
    expect([res.status, res.text]).toEqual([200, '{}']);
  });

  it('answers an allocation\'s checks ({} without any), 404 for an unknown allocation', async () => {
    const alloc = await runJob(s, mockJob('checked'));
    expect((await get(`/v1/client/allocation/${alloc.ID}/checks`)).body).toEqual({});
    const missing = await get('/v1/client/allocation/ffffffff-none/checks');
    expect([missing.status, missing.text]).toEqual([404, 'alloc not found']);
  });
});
