/**
 * Datacenters honoured at placement (src/api/datacenters.ts, the registry's place): Nomad's glob rules as rows,
 * the metric of a group no node is eligible for, then one agent in process whose node is in `east-1` (the
 * agent's `--dc`), which places only jobs whose datacenters name it, plans the others as failed placements,
 * and shows its datacenter wherever Nomad's API does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedTGAllocs } from '../../src/api/blocked-evals.ts';
import { datacenterMatches, datacentersOf, inAnyDatacenter } from '../../src/api/datacenters.ts';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT, until } from './in-process-agent.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('datacenter globs, as Nomad matches them (go-glob: only * is special)', () => {
  it.each([
    ['dc1', 'dc1', true],
    ['dc1', 'dc2', false],
    ['dc1', 'dc10', false],
    ['*', 'anything', true],
    ['*', '', true],
    ['dc*', 'dc1', true],
    ['dc*', 'dc', true],
    ['dc*', 'east-dc1', false],
    ['*-1', 'east-1', true],
    ['*-1', 'east-2', false],
    ['e*t*1', 'east-1', true],
    ['e*t*1', 'east', false],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['*a*a', 'xa', false],
    ['ab*b', 'ab', false],
    ['dc?', 'dc1', false],
    ['dc[12]', 'dc1', false],
    ['', '', true],
    ['', 'dc1', false],
  ])('%j against %j: %s', (pattern, dc, matches) => {
    expect(datacenterMatches(pattern, dc)).toBe(matches);
  });

  it.each([
    [{}, ['*']],
    [{ Datacenters: [] }, ['*']],
    [{ Datacenters: null }, ['*']],
    [{ Datacenters: ['dc1', 'dc2'] }, ['dc1', 'dc2']],
  ])('a job %j runs in %j', (job, dcs) => {
    expect(datacentersOf(job)).toEqual(dcs);
  });

  it('a node is eligible when any of the job\'s datacenters matches it', () => {
    expect(inAnyDatacenter(['dc2', 'east-*'], 'east-1')).toBe(true);
    expect(inAnyDatacenter(['dc2', 'west-*'], 'east-1')).toBe(false);
  });
});

describe('the metric of a group no node is eligible for', () => {
  it('evaluates nothing, has nothing in the pool or in any datacenter, exhausts nothing, and coalesces the rest', () => {
    const tasks = [{ name: 't', cpu: 100, memoryMB: 300 }];
    const metric = failedTGAllocs([
      { evalId: 'e', group: 'g', datacenter: 'east-1', reason: 'no node', tasks, allocationTime: 700 },
      { evalId: 'e', group: 'g', datacenter: 'east-1', reason: 'no node', tasks, allocationTime: 9 },
    ])!['g'];
    expect(metric).toEqual({
      NodesEvaluated: 0, NodesFiltered: 0, NodesInPool: 0, NodesAvailable: {}, ClassFiltered: null, ConstraintFiltered: null,
      NodesExhausted: 0, ClassExhausted: null, DimensionExhausted: null, QuotaExhausted: null, ResourcesExhausted: null,
      Scores: null, ScoreMetaData: null, AllocationTime: 700, CoalescedFailures: 1,
    });
  });

  it('a node that was evaluated and exhausted is counted in its own datacenter', () => {
    const metric = failedTGAllocs([{ evalId: 'e', group: 'g', dimension: 'memory', datacenter: 'east-1', reason: 'memory', tasks: [] }])!['g'];
    expect(metric).toMatchObject({ NodesEvaluated: 1, NodesInPool: 1, NodesAvailable: { 'east-1': 1 } });
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
});
