/**
 * Datacenters at placement with the node's datacenter given (`allocrun agent --dc`, ServeOptions.datacenter):
 * Nomad's datacenter globs row by row (go-glob: only `*` is special) against src/jobspec/constraints.ts, the
 * failed-placement metric counting the node in its own datacenter, then one agent in process whose node is in
 * `east-1`, which places only jobs whose datacenters name it, plans and blocks the others, keeps an allocation
 * whose new version leaves its datacenter (or does not fit) running until a replacement can be placed, and shows
 * its datacenter wherever Nomad's API does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedTGAllocs } from '../../src/api/blocked-evals.ts';
import { datacenterMatches } from '../../src/jobspec/constraints.ts';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT, until } from './in-process-agent.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('datacenter globs, as Nomad matches them (go-glob: only * is special)', () => {
  it.each([
    ['dc1', 'dc1', true],
    ['dc1', 'dc10', false],
    ['*', '', true],
    ['dc*', 'dc', true],
    ['dc*', 'east-dc1', false],
    ['*-1', 'east-1', true],
    ['e*t*1', 'east-1', true],
    ['e*t*1', 'east', false],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['*a*a', 'xa', false],
    ['dc?', 'dc1', false],
    ['dc[12]', 'dc1', false],
    ['d.1', 'dc1', false],
  ])('%j against %j: %s', (pattern, dc, matches) => {
    expect(datacenterMatches([pattern], dc)).toBe(matches);
  });
});

describe('a failed placement\'s metric names the node\'s own datacenter', () => {
  it.each([
    ['exhausted', { dimension: 'memory' }],
    ['filtered by a constraint', { dimension: '', filter: { constraint: '${attr.kernel.name} = windows' } }],
  ])('%s', (_name, how) => {
    const metric = failedTGAllocs([{ evalId: 'e', group: 'g', datacenter: 'east-1', reason: 'r', tasks: [], ...how }])!['g'];
    expect(metric).toMatchObject({ NodesEvaluated: 1, NodesInPool: 1 });
    expect(metric!['NodesAvailable']).toEqual({ 'east-1': 1 });
  });
});

describe('an agent whose node is in east-1', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(undefined, undefined, { api: { datacenter: 'east-1' } });
    s.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 1_000_000 };
  });
  afterAll(cleanUp);

  const inDcs = (id: string, Datacenters?: string[]) => mockJob(id, undefined, Datacenters ? { Datacenters } : {});
  const evalOf = async (id: string): Promise<Json> => (await call(s.socket, 'GET', `/v1/evaluation/${id}`)).json<Json>();

  it.each([
    ['names it', ['east-1']],
    ['names it among others', ['dc1', 'east-1']],
    ['matches it by a glob', ['east-*']],
    ['names none (Nomad\'s default, everywhere)', undefined],
  ])('places a job whose datacenters %s', async (_name, dcs) => {
    const id = `placed-${dcs?.join('-').replace(/\*/g, 'any') ?? 'default'}`;
    const alloc = await runJob(s, inDcs(id, dcs));
    expect(alloc.ClientStatus).toBe('running');
  });

  it.each([
    ['names another datacenter', ['dc1']],
    ['has a glob that does not match it', ['west-*']],
  ])('places nothing of a job that %s: no node eligible, as Nomad\'s scheduler records it', async (_name, dcs) => {
    const id = `elsewhere-${dcs[0]!.replace(/\*/g, 'any')}`;
    const res = await call(s.socket, 'PUT', '/v1/jobs', inDcs(id, dcs));
    expect(res.status, res.text).toBe(200);
    const evaluation = await evalOf(res.json<Json>()['EvalID']);
    expect(evaluation['Status']).toBe('complete');
    expect(evaluation['FailedTGAllocs']['g']).toMatchObject({ NodesEvaluated: 0, NodesInPool: 0, NodesAvailable: {}, DimensionExhausted: null, ResourcesExhausted: null, CoalescedFailures: 0 });
    expect(evaluation['QueuedAllocations']).toEqual({ g: 1 });
    expect((await evalOf(evaluation['BlockedEval']))['Status']).toBe('blocked');
    expect((await call(s.socket, 'GET', `/v1/job/${id}/allocations`)).json()).toEqual([]);
    expect((await call(s.socket, 'GET', `/v1/job/${id}/summary`)).json<Json>()['Summary']['g']['Queued']).toBe(1);
  });

  it('plans a job in another datacenter as a placement that fails, every instance coalesced into the first', async () => {
    const body = inDcs('planned-elsewhere', ['dc1']);
    body.Job.TaskGroups[0]!.Count = 3;
    const plan = (await call(s.socket, 'PUT', '/v1/job/planned-elsewhere/plan', { ...body, Diff: true })).json<Json>();
    expect(plan['Annotations']['DesiredTGUpdates']['g']).toMatchObject({ Place: 3 });
    expect(plan['FailedTGAllocs']['g']).toMatchObject({ NodesEvaluated: 0, NodesAvailable: {}, CoalescedFailures: 2 });
  });

  it('is the node\'s, the agent\'s and the member\'s datacenter in the API', async () => {
    const [node] = (await call(s.socket, 'GET', '/v1/nodes')).json<Json[]>();
    expect(node!['Datacenter']).toBe('east-1');
    expect((await call(s.socket, 'GET', `/v1/node/${node!['ID']}`)).json<Json>()['Datacenter']).toBe('east-1');
    const self = (await call(s.socket, 'GET', '/v1/agent/self')).json<Json>();
    expect([self['config']['Datacenter'], self['member']['Tags']['dc']]).toEqual(['east-1', 'east-1']);
    const members = (await call(s.socket, 'GET', '/v1/agent/members')).json<Json>();
    expect([members['ServerDC'], members['Members'][0]['Tags']['dc']]).toEqual(['east-1', 'east-1']);
  });

  it('registers its allocations\' services in it, as the node the tasks see (node.datacenter)', async () => {
    const body = mockJob('svc-dc');
    Object.assign(body.Job.TaskGroups[0]!, { Services: [{ Name: 'dcsvc', Provider: 'nomad' }] });
    await runJob(s, body);
    const [reg] = await until(async () => (await call(s.socket, 'GET', '/v1/service/dcsvc')).json<Json[]>(), (l) => l.length === 1, 'the service registered');
    expect(reg!['Datacenter']).toBe('east-1');
  });
  it('replaces nothing when a new version leaves the node\'s datacenter: the allocation keeps running, the replacement waits blocked', async () => {
    const first = await runJob(s, inDcs('moving'));
    const moved = inDcs('moving', ['west-1']);
    const plan = (await call(s.socket, 'PUT', '/v1/job/moving/plan', { ...moved, Diff: true })).json<Json>();
    expect(plan['Annotations']['DesiredTGUpdates']['g']).toMatchObject({ Place: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 1, Ignore: 0 });
    expect(plan['FailedTGAllocs']['g']).toMatchObject({ NodesEvaluated: 0, NodesAvailable: {} });
    const res = (await call(s.socket, 'PUT', '/v1/jobs', moved)).json<Json>();
    const evaluation = await evalOf(res['EvalID']);
    expect(evaluation['FailedTGAllocs']['g']).toMatchObject({ NodesEvaluated: 0 });
    expect((await evalOf(evaluation['BlockedEval']))['Status']).toBe('blocked');
    const [still, ...others] = (await call(s.socket, 'GET', '/v1/job/moving/allocations')).json<Json[]>();
    expect(others).toEqual([]);
    expect(still).toMatchObject({ ID: first.ID, DesiredStatus: 'run', ClientStatus: 'running', JobVersion: 0 });
    // Back in a datacenter the node is in: the allocation is taken to the new version in place, the wait is over.
    const back = (await call(s.socket, 'PUT', '/v1/jobs', inDcs('moving', ['east-*']))).json<Json>();
    const [kept] = await until(async () => (await call(s.socket, 'GET', '/v1/job/moving/allocations')).json<Json[]>(), (l) => l[0]?.['JobVersion'] === 2, 'the allocation at version 2');
    expect(kept).toMatchObject({ ID: first.ID, DesiredStatus: 'run' });
    expect((await evalOf(back['EvalID']))['FailedTGAllocs'] ?? null).toBeNull();
    expect((await evalOf(evaluation['BlockedEval']))['Status']).toBe('canceled');
  });

  it('keeps an allocation whose replacement does not fit (Nomad\'s PopUpdate), where it used to be stopped for nothing', async () => {
    const sized = (mb: number) => {
      const b = mockJob('outgrows');
      (b.Job.TaskGroups[0]!.Tasks[0] as Json)['Resources'] = { MemoryMB: mb };
      return b;
    };
    const first = await runJob(s, sized(16));
    const room = s.api.registry.capacity;
    s.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 100 };
    try {
      const res = (await call(s.socket, 'PUT', '/v1/jobs', sized(200))).json<Json>();
      expect((await evalOf(res['EvalID']))['FailedTGAllocs']['g']).toMatchObject({ DimensionExhausted: { memory: 1 } });
      const allocs = (await call(s.socket, 'GET', '/v1/job/outgrows/allocations')).json<Json[]>();
      expect(allocs.map((a) => [a['ID'], a['DesiredStatus'], a['JobVersion']])).toEqual([[first.ID, 'run', 0]]);
    } finally {
      s.api.registry.capacity = room;
    }
  });
});
