/**
 * `POST|PUT /v1/search/fuzzy` on one in-process agent, as Nomad's Search.FuzzySearch answers it (the web UI's
 * search box): names containing the text, ignoring case, for jobs and what they hold (groups, tasks, services,
 * drivers' commands) with their Scope, allocations, the node, namespaces and variables; evaluations by ID prefix;
 * Nomad's order (earliest match, then shortest, then alphabetical), its limits (20 objects read, 100 results per
 * context) and its refusal of a text under two characters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, getOk, mockJob, runJob, serveWithRoom, SUITE_TIMEOUT, type Served } from './in-process-agent.ts';

type Json = Record<string, any>;

/** A job of no allocations (so many stay cheap), of `groups` (name → its tasks' names), in `namespace`. */
const idle = (id: string, groups: Record<string, string[]> = { g: ['t'] }, namespace = 'default') => {
  const body = mockJob(id, {}, { Namespace: namespace });
  body.Job.TaskGroups = Object.entries(groups).map(([Name, tasks]) => ({ Name, Count: 0, Tasks: tasks.map((t) => ({ Name: t, Driver: 'mock', Config: { run_for: '1h' } })) }));
  return body;
};

describe('fuzzy search', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  const put = async (body: unknown) => {
    const res = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect(res.status, res.text).toBe(200);
    return res.json<Json>();
  };
  const fuzzy = async (Text: string, Context = 'all', query = '') => {
    const res = await call(s.socket, 'POST', `/v1/search/fuzzy${query}`, { Text, Context });
    expect(res.status, res.text).toBe(200);
    return res.json<Json>();
  };

  beforeAll(async () => {
    s = await serveWithRoom();
  });
  afterAll(cleanUp);

  it('finds a job by its name, its groups, tasks and services (group and task level) and its command, each with its scope', async () => {
    const body = idle('shop', { storefront: ['storetask'] });
    (body.Job as Json)['Name'] = 'My-Shop';
    const group = body.Job.TaskGroups[0] as Json;
    group['Services'] = [{ Name: 'store-api', Provider: 'nomad' }];
    group['Tasks'][0] = { Name: 'storetask', Driver: 'raw_exec', Config: { command: '/bin/store' }, Services: [{ Name: 'store-web', Provider: 'nomad' }] };
    await put(body);
    const found = await fuzzy('STORE', 'jobs');
    expect(found['Matches']).toEqual({
      groups: [{ ID: 'storefront', Scope: ['default', 'shop'] }],
      tasks: [{ ID: 'storetask', Scope: ['default', 'shop', 'storefront'] }],
      services: [{ ID: 'store-api', Scope: ['default', 'shop', 'storefront'] }, { ID: 'store-web', Scope: ['default', 'shop', 'storefront', 'storetask'] }],
      commands: [{ ID: '/bin/store', Scope: ['default', 'shop', 'storefront', 'storetask'] }],
    });
    // The jobs context is read, so its key is there though the job's own name did not match.
    expect(found['Truncations']).toEqual({ jobs: false });
    // A job matches by its name, in any case; its scope names its ID.
    expect((await fuzzy('sho', 'jobs'))['Matches']).toEqual({ jobs: [{ ID: 'My-Shop', Scope: ['default', 'shop'] }] });
  });

  it('finds an allocation by its name, the node by its name, a namespace and a variable by its path', async () => {
    const alloc = await runJob(s, mockJob('runner'));
    const [node] = await getOk<Json[]>(s, '/v1/nodes');
    expect((await call(s.socket, 'PUT', '/v1/var/fuzzy/secret', { Items: { a: '1' } })).status).toBe(200);
    expect((await fuzzy('runner.g', 'allocs'))['Matches']).toEqual({ allocs: [{ ID: 'runner.g[0]', Scope: ['default', alloc.ID] }] });
    const name = String(node!['Name']);
    expect((await fuzzy(name, 'nodes'))['Matches']).toEqual({ nodes: [{ ID: name, Scope: [node!['ID']] }] });
    // A node pool by its name, scoped by it, as Nomad's fuzzyMatchSingle gives it.
    expect((await fuzzy('FAUL', 'node_pools'))['Matches']).toEqual({ node_pools: [{ ID: 'default', Scope: ['default'] }] });
    // A namespace has no parent: no Scope.
    expect((await fuzzy('efaul', 'namespaces'))['Matches']).toEqual({ namespaces: [{ ID: 'default' }] });
    expect((await fuzzy('zzy/sec', 'vars'))['Matches']).toEqual({ vars: [{ ID: 'fuzzy/secret', Scope: ['default', 'fuzzy/secret'] }] });
  });

  it('matches evaluations by a prefix of their ID, as Nomad matches the contexts that have no names', async () => {
    const { EvalID } = await put(idle('evaluated'));
    const found = await fuzzy(EvalID.slice(0, 8), 'evals');
    expect(found['Matches']).toEqual({ evals: [{ ID: EvalID }] });
    expect(found['Truncations']).toEqual({ evals: false });
  });

  it('searches every context for `all`, with a Truncations key for each context read and each prefix-matched one', async () => {
    const found = await fuzzy('nothing-has-this');
    expect(found['Matches']).toEqual({ evals: [], deployment: [], scaling_policy: [], volumes: [] });
    expect(found['Truncations']).toEqual({ allocs: false, jobs: false, nodes: false, node_pools: false, evals: false, deployment: false, plugins: false, volumes: false, scaling_policy: false, vars: false, namespaces: false });
  });

  it('orders by where the text starts, then by length, then alphabetically', async () => {
    for (const id of ['ord-beta-kiwi', 'kiwi-long', 'kiwi', 'x-kiwi', 'kiwa', 'kiwi-b', 'kiwi-a']) await put(idle(id, { g: ['t'] }, 'ordering'));
    const found = await fuzzy('kiwi', 'jobs', '?namespace=ordering');
    expect(found['Matches']['jobs'].map((m: Json) => m['ID'])).toEqual(['kiwi', 'kiwi-a', 'kiwi-b', 'kiwi-long', 'x-kiwi', 'ord-beta-kiwi']);
  });

  it('searches the request\'s namespace, `*` for all', async () => {
    await put(idle('nsjob', { g: ['t'] }, 'elsewhere'));
    expect((await fuzzy('nsjob', 'jobs'))['Matches']).toEqual({});
    expect((await fuzzy('nsjob', 'jobs', '?namespace=elsewhere'))['Matches']).toEqual({ jobs: [{ ID: 'nsjob', Scope: ['elsewhere', 'nsjob'] }] });
    expect((await fuzzy('nsjob', 'jobs', '?namespace=*'))['Matches']['jobs']).toHaveLength(1);
  });

  it('reads at most 20 jobs, and marks the contexts the 20th matched truncated when more are left', async () => {
    for (let i = 0; i < 21; i++) await put(idle(`lim-${String(i).padStart(2, '0')}`, { g: ['t'] }, 'limits'));
    const found = await fuzzy('lim-', 'jobs', '?namespace=limits');
    expect(found['Matches']['jobs'].map((m: Json) => m['ID'])).toEqual(Array.from({ length: 20 }, (_, i) => `lim-${String(i).padStart(2, '0')}`));
    expect(found['Truncations']).toEqual({ jobs: true });
  });

  it('keeps at most 100 matches per context, and says it truncated them', async () => {
    const groups = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`many-group-${String(i).padStart(2, '0')}`, ['t']]));
    for (let j = 0; j < 5; j++) await put(idle(`results-${j}`, groups, 'results'));
    const found = await fuzzy('many-group', 'jobs', '?namespace=results');
    expect(found['Matches']['groups']).toHaveLength(100);
    expect(found['Truncations']).toEqual({ jobs: false, groups: true });
    const fewer = await fuzzy('many-group-2', 'jobs', '?namespace=results');
    expect([fewer['Matches']['groups'].length, fewer['Truncations']]).toEqual([5, { jobs: false }]);
  });

  it('answers at the newest index of the contexts searched, in the header and the body', async () => {
    const res = await call(s.socket, 'PUT', '/v1/search/fuzzy', { Text: 'any', Context: 'jobs' });
    const jobs = (await call(s.socket, 'GET', '/v1/jobs')).headers['x-nomad-index'];
    expect(res.headers['x-nomad-index']).toBe(jobs);
    expect(res.json<Json>()).toMatchObject({ Index: Number(jobs), KnownLeader: true, LastContact: 0 });
  });

  it('refuses a text under two characters in Nomad\'s words, a missing Text, and a context Nomad does not search', async () => {
    const short = await call(s.socket, 'POST', '/v1/search/fuzzy', { Text: 'a', Context: 'all' });
    expect([short.status, short.text]).toEqual([400, 'Text: fuzzy search query must be at least 2 characters, got 1']);
    const missing = await call(s.socket, 'POST', '/v1/search/fuzzy', { Context: 'all' });
    expect([missing.status, missing.text]).toEqual([400, 'Text: missing: the text names are matched against']);
    // Groups, tasks and services come from the jobs context: Nomad refuses them as contexts of their own.
    const groups = await call(s.socket, 'POST', '/v1/search/fuzzy', { Text: 'store', Context: 'groups' });
    expect([groups.status, groups.text]).toEqual([400, 'Context: context must be one of [allocs jobs nodes node_pools evals deployment plugins volumes scaling_policy vars namespaces] or \'all\' for all contexts; got "groups"']);
  });
});
