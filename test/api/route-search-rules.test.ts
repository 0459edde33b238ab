/**
 * `POST|PUT /v1/search` on one in-process agent, as Nomad's Search.PrefixSearch answers it (what `nomad status
 * <prefix>` reads): the IDs starting with the prefix in each context and in `all`, at most 20 per context with
 * `Truncations` set beyond, the request's namespace (`*` for all), Nomad's even-length hex rule for the UUID
 * contexts, its refusal of an unknown context, and a client token's read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Endpoint } from './agent-process.ts';
import { cleanUp, getOk, mockJob, runJob, serve, SUITE_TIMEOUT, type Served } from './in-process-agent.ts';

type Json = Record<string, any>;

const TOKEN = 'search-rules-agent-token';

/** A job of no allocations (so many stay cheap), in `namespace`. */
const idle = (id: string, namespace = 'default') => {
  const body = mockJob(id, { t: { run_for: '1h' } }, { Namespace: namespace });
  body.Job.TaskGroups[0] = { ...body.Job.TaskGroups[0]!, Count: 0 };
  return body;
};

describe('prefix search', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  let tcp: Endpoint & { host: string; port: number };
  let web: { alloc: string; evalId: string; deployment: string; policy: string; node: string };

  const put = async (body: unknown) => {
    const res = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect(res.status, res.text).toBe(200);
    return res.json<Json>();
  };
  const search = async (Prefix: string, Context: string, query = '', to: Endpoint = s.socket, method = 'POST') => {
    const res = await call(to, method, `/v1/search${query}`, { Prefix, Context });
    expect(res.status, res.text).toBe(200);
    return res;
  };
  const matches = async (Prefix: string, Context: string, query = '') => (await search(Prefix, Context, query)).json<Json>();

  beforeAll(async () => {
    s = await serve(undefined, undefined, { api: { http: '127.0.0.1:0', token: TOKEN } });
    s.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 1_000_000 };
    tcp = { host: '127.0.0.1', port: Number(new URL(s.api.url!).port) };
    // web: a running allocation, a deployment (its group has an update block) and a scaling policy.
    const body = mockJob('web');
    Object.assign(body.Job.TaskGroups[0]!, { Update: { MinHealthyTime: 1e6, HealthyDeadline: 300e9 }, Scaling: { Min: 1, Max: 3 } });
    const alloc = await runJob(s, body);
    const [evaluation] = await getOk<Json[]>(s, '/v1/job/web/evaluations');
    const [policy] = await getOk<Json[]>(s, '/v1/scaling/policies?job=web');
    const [node] = await getOk<Json[]>(s, '/v1/nodes');
    web = { alloc: alloc.ID, evalId: evaluation!['ID'], deployment: (await getOk(s, '/v1/job/web/deployment'))['ID'], policy: policy!['ID'], node: node!['ID'] };
    expect((await call(s.socket, 'PUT', '/v1/var/web/config', { Items: { a: '1' } })).status).toBe(200);
    expect((await call(s.socket, 'PUT', '/v1/var/other/config?namespace=prod', { Items: { a: '1' } })).status).toBe(200);
    await put(idle('api', 'prod'));
  });
  afterAll(cleanUp);

  it('finds an object of each context by a prefix of its ID, with Truncations false', async () => {
    const cases: [string, string, string][] = [
      ['jobs', 'we', 'web'],
      ['allocs', web.alloc.slice(0, 8), web.alloc],
      ['evals', web.evalId.slice(0, 8), web.evalId],
      ['deployment', web.deployment.slice(0, 8), web.deployment],
      ['scaling_policy', web.policy.slice(0, 8), web.policy],
      ['nodes', web.node.slice(0, 8), web.node],
      ['namespaces', 'def', 'default'],
      ['vars', 'web/', 'web/config'],
      ['node_pools', 'def', 'default'],
    ];
    for (const [context, prefix, id] of cases) {
      expect(await matches(prefix, context), context).toMatchObject({ Matches: { [context]: [id] }, Truncations: { [context]: false } });
    }
  });

  it('answers a context with no match as null, as Go encodes a nil list, and plugins and volumes as none', async () => {
    expect((await matches('nothing-here', 'jobs'))['Matches']).toEqual({ jobs: null });
    expect(await matches('', 'plugins')).toMatchObject({ Matches: { plugins: null }, Truncations: { plugins: false } });
    expect(await matches('', 'volumes')).toMatchObject({ Matches: { volumes: null }, Truncations: { volumes: false } });
  });

  it('searches every context for `all`, leaving out the UUID contexts a prefix that is not hex cannot be looked up in', async () => {
    const byName = await matches('web', 'all');
    // "web" rounds down to "we", not hex: allocs, evals, deployments and nodes are not searched (no key), as in Nomad.
    expect(Object.keys(byName['Matches']).sort()).toEqual(['jobs', 'namespaces', 'node_pools', 'plugins', 'scaling_policy', 'vars', 'volumes']);
    expect(byName['Matches']).toMatchObject({ jobs: ['web'], vars: ['web/config'] });
    // One odd character rounds down to nothing: every context is searched.
    expect(Object.keys((await matches('w', 'all'))['Matches']).sort()).toEqual(['allocs', 'deployment', 'evals', 'jobs', 'namespaces', 'node_pools', 'nodes', 'plugins', 'scaling_policy', 'vars', 'volumes']);
    // An odd-length hex prefix is looked up rounded down and matched whole.
    const alloc = await matches(web.alloc.slice(0, 7), 'all');
    expect(alloc['Matches']['allocs']).toEqual([web.alloc]);
  });

  it('stops at 20 IDs per context, in ID order, and says it truncated them', async () => {
    for (let i = 0; i < 21; i++) await put(idle(`many-${String(i).padStart(2, '0')}`));
    const cut = await matches('many-', 'jobs');
    expect(cut['Matches']['jobs']).toEqual(Array.from({ length: 20 }, (_, i) => `many-${String(i).padStart(2, '0')}`));
    expect(cut['Truncations']).toEqual({ jobs: true });
    expect(await matches('many-2', 'jobs')).toMatchObject({ Matches: { jobs: ['many-20'] }, Truncations: { jobs: false } });
  });

  it('lists every ID of a context for an empty prefix', async () => {
    expect((await matches('', 'namespaces'))['Matches']['namespaces']).toEqual(['default', 'prod']);
    expect((await matches('', 'nodes'))['Matches']['nodes']).toEqual([web.node]);
    // Node pools: the built-ins (this agent's node is in `default`), by name.
    expect((await matches('', 'node_pools'))['Matches']['node_pools']).toEqual(['all', 'default']);
  });

  it('searches the request\'s namespace: default unless the query (or the body) names one, `*` for all', async () => {
    expect((await matches('api', 'jobs'))['Matches']['jobs']).toBeNull();
    expect((await matches('api', 'jobs', '?namespace=prod'))['Matches']['jobs']).toEqual(['api']);
    expect((await matches('', 'vars', '?namespace=prod'))['Matches']['vars']).toEqual(['other/config']);
    const all = await matches('', 'vars', '?namespace=*');
    expect(all['Matches']['vars']).toEqual(['web/config', 'other/config']);
    const viaBody = await call(s.socket, 'PUT', '/v1/search', { Prefix: 'api', Context: 'jobs', Namespace: 'prod' });
    expect(viaBody.json<Json>()['Matches']['jobs']).toEqual(['api']);
    // Namespaces themselves belong to none: every one is found whatever the request's namespace.
    expect((await matches('pr', 'namespaces'))['Matches']['namespaces']).toEqual(['prod']);
  });

  it('answers at the newest index of the contexts searched, in the header and the body', async () => {
    const res = await search('', 'all');
    const jobs = Number((await call(s.socket, 'GET', '/v1/jobs')).headers['x-nomad-index']);
    const allocs = Number((await call(s.socket, 'GET', '/v1/allocations')).headers['x-nomad-index']);
    const index = Number(res.headers['x-nomad-index']);
    expect(index).toBeGreaterThanOrEqual(Math.max(jobs, allocs));
    expect(res.json<Json>()).toMatchObject({ Index: index, KnownLeader: true, LastContact: 0 });
    expect(Number((await search('', 'jobs')).headers['x-nomad-index'])).toBe(jobs);
  });

  it('refuses an unknown context in Nomad\'s words, and a missing Prefix or Context, naming the field', async () => {
    const unknown = await call(s.socket, 'POST', '/v1/search', { Prefix: 'a', Context: 'quotas' });
    expect([unknown.status, unknown.text]).toEqual([400, 'Context: context must be one of [allocs jobs nodes node_pools evals deployment plugins volumes scaling_policy vars namespaces] or \'all\' for all contexts; got "quotas"']);
    const noPrefix = await call(s.socket, 'POST', '/v1/search', { Context: 'jobs' });
    expect([noPrefix.status, noPrefix.text]).toEqual([400, 'Prefix: missing: the prefix IDs are matched against ("" matches every ID)']);
    const noContext = await call(s.socket, 'POST', '/v1/search', { Prefix: 'a' });
    expect(noContext.status).toBe(400);
    expect(noContext.text).toMatch(/^Context: missing: the context to search: context must be one of \[allocs .*\] or 'all' for all contexts$/);
    expect((await call(s.socket, 'POST', '/v1/search', { Prefix: 3, Context: 'jobs' })).text).toBe('Prefix: must be a string');
    // Field names match case-insensitively, as Go decodes them.
    expect((await call(s.socket, 'POST', '/v1/search', { prefix: 'we', context: 'jobs' })).json<Json>()['Matches']).toEqual({ jobs: ['web'] });
  });

  it('answers a client token with read what it answers the agent, and no token not at all', async () => {
    const created = await call(s.socket, 'POST', '/v1/acl/token', { Name: 'reader', Type: 'client', Policies: ['read'] });
    const secret = created.json<Json>()['SecretID'] as string;
    const asReader = (await search('', 'all', '', { ...tcp, token: secret }, 'PUT')).json<Json>();
    expect(asReader['Matches']).toEqual((await matches('', 'all'))['Matches']);
    expect((await call(tcp, 'POST', '/v1/search', { Prefix: '', Context: 'all' })).status).toBe(403);
    expect((await call({ ...tcp, token: 'not-a-token' }, 'POST', '/v1/search', { Prefix: '', Context: 'all' })).status).toBe(403);
  });
});
