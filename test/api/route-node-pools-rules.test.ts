/**
 * Node pools on one node (src/api/node-pools.ts, src/api/routes/node-pools.ts), rule by rule, through agents served
 * in process: the pools that exist (the built-in `all` and `default`, and the node's own, `--node-pool`), one pool,
 * its jobs and its nodes in Nomad's shapes; writes refused (Nomad's words for the built-ins); a job in a pool that
 * does not exist refused at registration, plan and validation in Nomad's words; a job in a pool the node is not in
 * registered and placed nowhere, as Nomad's scheduler reports it; a job in `all` or the node's pool placed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT } from './in-process-agent.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

afterAll(cleanUp);

const inPool = (id: string, pool?: string) => mockJob(id, undefined, pool === undefined ? {} : { NodePool: pool });

describe('an agent whose node is in the pool gpu', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  let node: Json;
  beforeAll(async () => {
    s = await serve(undefined, undefined, { api: { nodePool: 'gpu' } });
    [node] = (await call(s.socket, 'GET', '/v1/nodes')).json<Json[]>() as [Json];
  });
  const get = async (path: string) => {
    const res = await call(s.socket, 'GET', path);
    return { status: res.status, text: res.text, index: Number(res.headers['x-nomad-index']), body: res.status === 200 ? res.json<any>() : undefined }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };

  it('shows the pool on the node, its stub and the agent\'s client config', async () => {
    expect(node['NodePool']).toBe('gpu');
    expect((await get(`/v1/node/${node['ID']}`)).body['NodePool']).toBe('gpu');
    expect((await get('/v1/agent/self')).body['config']['Client']['NodePool']).toBe('gpu');
  });

  it('lists all, default and gpu by name, the node\'s created when the node registered', async () => {
    const { body, index } = await get('/v1/node/pools');
    expect(body).toEqual([
      { Name: 'all', Description: 'Node pool with all nodes in the cluster.', Meta: null, SchedulerConfiguration: null, CreateIndex: 1, ModifyIndex: 1 },
      { Name: 'default', Description: 'Default node pool.', Meta: null, SchedulerConfiguration: null, CreateIndex: 1, ModifyIndex: 1 },
      { Name: 'gpu', Description: '', Meta: null, SchedulerConfiguration: null, CreateIndex: node['CreateIndex'], ModifyIndex: node['CreateIndex'] },
    ]);
    expect(index).toBe(node['CreateIndex']);
  });

  it.each([
    ['d', ['default']],
    ['g', ['gpu']],
    ['a', ['all']],
    ['x', []],
  ])('lists by name prefix %j', async (prefix, names) => {
    expect((await get(`/v1/node/pools?prefix=${prefix}`)).body.map((p: Json) => p['Name'])).toEqual(names);
  });

  it('applies the list options (filter, per_page) to the pools', async () => {
    expect((await get('/v1/node/pools?filter=Description%20%3D%3D%20%22%22')).body.map((p: Json) => p['Name'])).toEqual(['gpu']);
    const res = await call(s.socket, 'GET', '/v1/node/pools?per_page=1');
    expect([res.json<Json[]>().map((p) => p['Name']), res.headers['x-nomad-nexttoken']]).toEqual([['all'], 'default']);
  });

  it.each([['all'], ['default'], ['gpu']])('reads the pool %s', async (name) => {
    const { status, body, index } = await get(`/v1/node/pool/${name}`);
    expect(status).toBe(200);
    expect(body['Name']).toBe(name);
    expect(index).toBe(body['ModifyIndex']);
  });

  it('answers 404 for a pool that does not exist, in Nomad\'s words', async () => {
    const res = await get('/v1/node/pool/cpu');
    expect([res.status, res.text]).toEqual([404, 'node pool not found']);
  });

  it.each([
    ['gpu', true], ['all', true], ['default', false], ['cpu', false],
  ])('lists the node among the nodes of %s: %s', async (name, listed) => {
    const { body } = await get(`/v1/node/pool/${name}/nodes`);
    expect(body.map((n: Json) => n['ID'])).toEqual(listed ? [node['ID']] : []);
    if (listed) expect(body[0]).toMatchObject({ NodePool: 'gpu', Status: 'ready', Datacenter: 'dc1' });
  });

  it('refuses a prefix on a pool\'s nodes, as Nomad does (it could name the pool or the nodes)', async () => {
    const res = await get('/v1/node/pool/gpu/nodes?prefix=ab');
    expect([res.status, res.text]).toEqual([400, 'prefix argument not allowed']);
  });

  it('places a job in the node\'s pool and a job in all', async () => {
    expect((await runJob(s, inPool('in-gpu', 'gpu'))).ClientStatus).toBe('running');
    expect((await runJob(s, inPool('in-all', 'all'))).ClientStatus).toBe('running');
  });

  it('registers a job in default (naming it or none) and places nothing: no node in the pool, as Nomad\'s scheduler records it', async () => {
    for (const [id, pool] of [['in-default', 'default'], ['no-pool', undefined]] as const) {
      const res = await call(s.socket, 'PUT', '/v1/jobs', inPool(id, pool));
      expect(res.status, res.text).toBe(200);
      const evaluation = (await call(s.socket, 'GET', `/v1/evaluation/${res.json<Json>()['EvalID']}`)).json<Json>();
      expect(evaluation['FailedTGAllocs']['g']).toMatchObject({ NodesEvaluated: 0, NodesFiltered: 0, NodesInPool: 0, NodesAvailable: {}, ConstraintFiltered: null, DimensionExhausted: null });
      expect((await call(s.socket, 'GET', `/v1/evaluation/${evaluation['BlockedEval']}`)).json<Json>()['Status']).toBe('blocked');
      expect((await get(`/v1/job/${id}/allocations`)).body).toEqual([]);
      expect((await get(`/v1/job/${id}`)).body['NodePool']).toBe('default');
    }
  });

  it('plans a job in another pool as a placement that fails', async () => {
    const plan = (await call(s.socket, 'PUT', '/v1/job/planned/plan', { ...inPool('planned', 'default'), Diff: true })).json<Json>();
    expect(plan['FailedTGAllocs']['g']).toMatchObject({ NodesEvaluated: 0, NodesInPool: 0 });
  });

  it('lists each pool\'s jobs (a job naming none is in default); none for a pool that does not exist', async () => {
    const ids = async (name: string) => (await get(`/v1/node/pool/${name}/jobs`)).body.map((j: Json) => j['ID']).sort();
    expect(await ids('gpu')).toEqual(['in-gpu']);
    expect(await ids('all')).toEqual(['in-all']);
    expect(await ids('default')).toEqual(['in-default', 'no-pool']);
    expect(await ids('cpu')).toEqual([]);
    expect((await get('/v1/node/pool/gpu/jobs')).body[0]).toMatchObject({ ID: 'in-gpu', Type: 'service', Status: 'running' });
  });

  it('refuses a job in a pool that does not exist at registration, plan and validation, in Nomad\'s words', async () => {
    const why = 'job "elsewhere" is in nonexistent node pool "cpu"';
    const reg = await call(s.socket, 'PUT', '/v1/jobs', inPool('elsewhere', 'cpu'));
    expect([reg.status, reg.text]).toEqual([400, why]);
    expect((await get('/v1/job/elsewhere')).status).toBe(404);
    const plan = await call(s.socket, 'PUT', '/v1/job/elsewhere/plan', inPool('elsewhere', 'cpu'));
    expect([plan.status, plan.text]).toEqual([400, why]);
    const validated = (await call(s.socket, 'PUT', '/v1/validate/job', inPool('elsewhere', 'cpu'))).json<Json>();
    expect(validated).toMatchObject({ ValidationErrors: [why], Error: why });
  });

  it.each([
    ['PUT', '/v1/node/pools', { Name: 'default' }, 400, 'modifying node pool "default" is not allowed'],
    ['POST', '/v1/node/pool/all', { Name: 'all' }, 400, 'modifying node pool "all" is not allowed'],
    ['DELETE', '/v1/node/pool/default', undefined, 400, 'deleting built-in node pool "default" is not allowed'],
    ['PUT', '/v1/node/pools', { Name: 'cpu', Description: 'x' }, 405, 'allocrun does not create, update or delete node pools'],
    ['DELETE', '/v1/node/pool/gpu', undefined, 405, 'start the agent with --node-pool NAME'],
  ] as const)('refuses %s %s: %i', async (method, path, body, status, text) => {
    const res = await call(s.socket, method, path, body);
    expect(res.status).toBe(status);
    expect(res.text).toContain(text);
    expect((await get('/v1/node/pools')).body.map((p: Json) => p['Name'])).toEqual(['all', 'default', 'gpu']);
  });
});

describe('an agent whose node is in default (no --node-pool)', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve();
  });

  it('has the built-in pools only, and its node in default', async () => {
    expect((await call(s.socket, 'GET', '/v1/node/pools')).json<Json[]>().map((p) => p['Name'])).toEqual(['all', 'default']);
    expect((await call(s.socket, 'GET', '/v1/nodes')).json<Json[]>()[0]!['NodePool']).toBe('default');
  });

  it('refuses a job in gpu, which no node made', async () => {
    const res = await call(s.socket, 'PUT', '/v1/jobs', inPool('gpu-job', 'gpu'));
    expect([res.status, res.text]).toEqual([400, 'job "gpu-job" is in nonexistent node pool "gpu"']);
  });
});
