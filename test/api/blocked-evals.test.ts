/**
 * Evaluations that cannot place everything, as Nomad's scheduler records them: the node's capacity rules
 * alone, the evaluation outcomes alone, then through a served agent's registry (in process, mock tasks).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BLOCKED_DESCRIPTION, failedAfterAttempts, failureSummary, MAX_PLAN_DESCRIPTION, planAttempts, settleEvaluations } from '../../src/api/blocked-evals.ts';
import { cpus, totalmem } from 'node:os';
import type { EvalRecord, PlacementFailure } from '../../src/api/job-registry.ts';
import { askOf, fitResources, hostCapacity, resourcesUsed, type ResourceHolder } from '../../src/api/node-capacity.ts';
import { PortAllocator } from '../../src/api/port-allocator.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';
import { call, freePort, waitForAllocs, type Alloc } from './agent-process.ts';
import { placementFailureLines } from '../../src/cli/placement-failures.ts';
import { cleanUp, serve, until, type Served } from './in-process-agent.ts';

afterEach(cleanUp);

const task = (resources?: Record<string, unknown>): TaskSpec => ({ name: 't', driver: 'mock', config: {}, ...(resources && { resources }) });
const holder = (id: string, resources: Record<string, unknown>, over: Partial<ResourceHolder> = {}): ResourceHolder => ({
  id, desired: 'run', spec: { tasks: [task(resources)] }, lastState: { clientStatus: 'running' }, ...over,
});

describe('the node\'s capacity', () => {
  it('adds up what every task of a group asks for, counting a task without resources as nothing', () => {
    expect(askOf({ tasks: [task({ cpu: 100, memoryMB: 64 }), task({ cores: 1, memoryMB: 36 }), task()] })).toEqual({ cpu: 100, cores: 1, memoryMB: 100 });
    expect(askOf({ tasks: [task({ cpu: 'x', memoryMB: -5, cores: Number.NaN })] })).toEqual({ cpu: 0, cores: 0, memoryMB: 0 });
  });

  it('counts no ask that is not a finite positive number', () => {
    expect(askOf({ tasks: [task({ cpu: Infinity, cores: 0, memoryMB: '64' })] })).toEqual({ cpu: 0, cores: 0, memoryMB: 0 });
  });

  it('reads the host as Nomad\'s fingerprint does: the clock times the cores, the cores, all memory in MB', () => {
    const all = cpus();
    expect(hostCapacity()).toEqual({ cpu: Math.round(all[0]?.speed ?? 0) * all.length, cores: all.length, memoryMB: Math.floor(totalmem() / 1024 / 1024) });
    expect(hostCapacity().memoryMB).toBeGreaterThan(0);
  });

  it('counts only live allocations, the last listed for an id winning', () => {
    const used = resourcesUsed([
      holder('a', { memoryMB: 100, cpu: 50 }),
      holder('b', { memoryMB: 1000 }, { desired: 'stop' }),
      holder('c', { memoryMB: 1000 }, { lastState: { clientStatus: 'complete' } }),
      holder('d', { memoryMB: 1000 }, { lastState: { clientStatus: 'failed' } }),
      holder('e', { memoryMB: 1000 }),
      holder('e', { memoryMB: 10, cores: 2 }),
      holder('f', { memoryMB: 1 }, { lastState: { clientStatus: 'pending' } }),
    ]);
    expect(used).toEqual({ cpu: 50, cores: 2, memoryMB: 111 });
  });

  it('fits an ask that fills the node exactly and refuses one unit more, naming the dimension and what is free', () => {
    const node = { cpu: 2000, cores: 2, memoryMB: 1000 };
    expect(fitResources({ cpu: 0, cores: 0, memoryMB: 600 }, { cpu: 0, cores: 0, memoryMB: 400 }, node)).toEqual({ ok: true });
    expect(fitResources({ cpu: 0, cores: 0, memoryMB: 601 }, { cpu: 0, cores: 0, memoryMB: 400 }, node)).toEqual({
      ok: false, dimension: 'memory', reason: 'memory exhausted: the group asks for 601 MB; 600 MB of the node\'s 1000 MB are free',
    });
    expect(fitResources({ cpu: 2001, cores: 0, memoryMB: 0 }, { cpu: 0, cores: 0, memoryMB: 0 }, node)).toMatchObject({ ok: false, dimension: 'cpu', reason: 'cpu exhausted: the group asks for 2001 MHz; 2000 MHz of the node\'s 2000 MHz are free' });
    expect(fitResources({ cpu: 0, cores: 1, memoryMB: 0 }, { cpu: 0, cores: 2, memoryMB: 0 }, node)).toMatchObject({ ok: false, dimension: 'cores', reason: 'cores exhausted: the group asks for 1 cores; 0 cores of the node\'s 2 cores are free' });
  });

  it('checks cpu, then cores, then memory, as Nomad\'s AllocsFit does', () => {
    const node = { cpu: 100, cores: 1, memoryMB: 100 };
    expect(fitResources({ cpu: 200, cores: 2, memoryMB: 200 }, { cpu: 0, cores: 0, memoryMB: 0 }, node)).toMatchObject({ dimension: 'cpu' });
    expect(fitResources({ cpu: 100, cores: 2, memoryMB: 200 }, { cpu: 0, cores: 0, memoryMB: 0 }, node)).toMatchObject({ dimension: 'cores' });
    expect(fitResources({ cpu: 100, cores: 1, memoryMB: 200 }, { cpu: 0, cores: 0, memoryMB: 0 }, node)).toMatchObject({ dimension: 'memory' });
  });

  it('holds no CPU ask to a host that does not report its clock, and nothing to an ask of zero', () => {
    expect(fitResources({ cpu: 5000, cores: 0, memoryMB: 0 }, { cpu: 0, cores: 0, memoryMB: 0 }, { cpu: 0, cores: 1, memoryMB: 1 })).toEqual({ ok: true });
    expect(fitResources({ cpu: 0, cores: 0, memoryMB: 0 }, { cpu: 9, cores: 9, memoryMB: 9 }, { cpu: 1, cores: 1, memoryMB: 1 })).toEqual({ ok: true });
  });
});

describe('an evaluation\'s outcome', () => {
  const evaluation = (over: Partial<EvalRecord> = {}): EvalRecord => ({
    ID: 'e1', Namespace: 'default', Priority: 50, Type: 'service', TriggeredBy: 'job-register', JobID: 'j', JobModifyIndex: 7,
    Status: 'complete', StatusDescription: '', CreateIndex: 7, ModifyIndex: 7, CreateTime: 1, ModifyTime: 1, ...over,
  });
  const failure = (group: string, dimension = 'memory', evalId = 'e1'): PlacementFailure => ({ evalId, group, dimension, reason: `${dimension} is short`, tasks: [{ name: 't', cpu: 0, memoryMB: 0 }] });

  it('says what could not be placed per group, in words, one sentence per group', () => {
    expect(failureSummary([failure('a', 'memory'), failure('a', 'cpu'), failure('b', 'cores')])).toBe(
      'failed to place 2 allocations of group "a": memory is short; failed to place 1 allocation of group "b": cores is short',
    );
  });

  it('completes with the failures and makes a blocked evaluation pointing back at it', () => {
    const e = evaluation();
    const { evals, blocked } = settleEvaluations([e], [failure('g'), failure('g', 'cpu'), failure('h'), failure('x', 'cpu', 'other')], () => undefined, 9, 99);
    expect(evals).toHaveLength(2);
    const b = evals[1]!;
    expect(e).toMatchObject({ Status: 'complete', StatusDescription: '', BlockedEval: b.ID, QueuedAllocations: { g: 2, h: 1 } });
    // Nomad keeps the first failure's metric and coalesces the rest (scheduler/generic_sched.go, computePlacements):
    // g's second failure (cpu) is counted in CoalescedFailures, not in DimensionExhausted.
    expect(e.FailedTGAllocs).toMatchObject({ g: { DimensionExhausted: { memory: 1 }, CoalescedFailures: 1, NodesEvaluated: 1, NodesExhausted: 1 }, h: { DimensionExhausted: { memory: 1 }, CoalescedFailures: 0 } });
    expect((e.FailedTGAllocs as Record<string, { DimensionExhausted: unknown }>)['g']!.DimensionExhausted).toEqual({ memory: 1 });
    expect(b).toEqual({
      ID: expect.stringMatching(/^[0-9a-f-]{36}$/), Namespace: 'default', Priority: 50, Type: 'service', TriggeredBy: 'queued-allocs', JobID: 'j', JobModifyIndex: 7,
      Status: 'blocked', StatusDescription: BLOCKED_DESCRIPTION, PreviousEval: 'e1', FailedTGAllocs: e.FailedTGAllocs, QueuedAllocations: { g: 2, h: 1 },
      CreateIndex: 9, ModifyIndex: 9, CreateTime: 99, ModifyTime: 99,
    });
    expect(BLOCKED_DESCRIPTION).toBe('created to place remaining allocations');
    expect(blocked).toEqual(new Map([['j', b.ID]]));
  });

  it('cancels the job\'s older blocked evaluation when a newer one is made, in Nomad\'s words', () => {
    const old = evaluation({ ID: 'b0', Status: 'blocked', TriggeredBy: 'queued-allocs', StatusDescription: BLOCKED_DESCRIPTION });
    const { evals } = settleEvaluations([evaluation()], [failure('g')], (job) => (job === 'j' ? old : undefined), 9, 99);
    expect(evals.map((e) => [e.ID === 'b0' ? 'old' : e.TriggeredBy, e.Status])).toEqual([['job-register', 'complete'], ['old', 'canceled'], ['queued-allocs', 'blocked']]);
    expect(evals[1]).toMatchObject({ StatusDescription: 'existing blocked evaluation exists for job "j"', ModifyIndex: 9, ModifyTime: 99, CreateIndex: 7 });
    expect(old.Status).toBe('blocked');
  });

  it('cancels the job\'s blocked evaluation when a later one places everything', () => {
    const old = evaluation({ ID: 'b0', Status: 'blocked', TriggeredBy: 'queued-allocs' });
    const { evals, blocked } = settleEvaluations([evaluation()], [], () => old, 9, 99);
    expect(evals[1]).toMatchObject({ ID: 'b0', Status: 'canceled', StatusDescription: 'canceled: evaluation e1 placed every allocation of job "j"' });
    expect(evals[0]).toMatchObject({ Status: 'complete' });
    expect(evals[0]!.BlockedEval).toBeUndefined();
    expect(blocked).toEqual(new Map([['j', undefined]]));
    // An evaluation already settled is not canceled again.
    expect(settleEvaluations([evaluation()], [], () => ({ ...old, Status: 'complete' }), 9, 99).evals).toHaveLength(1);
  });

  it('keeps a blocked evaluation processed again blocked while it still cannot place, with the new failures and no new evaluation', () => {
    const b = evaluation({ ID: 'b0', Status: 'blocked', TriggeredBy: 'queued-allocs', StatusDescription: BLOCKED_DESCRIPTION, QueuedAllocations: { g: 2 } });
    const { evals, blocked } = settleEvaluations([b], [failure('g', 'cores', 'b0')], () => b, 9, 99);
    expect(evals).toEqual([b]);
    expect(b).toMatchObject({ Status: 'blocked', StatusDescription: BLOCKED_DESCRIPTION, QueuedAllocations: { g: 1 }, FailedTGAllocs: { g: { DimensionExhausted: { cores: 1 } } } });
    expect(blocked).toEqual(new Map([['j', 'b0']]));
  });

  it('fails an evaluation whose plan could not be written Nomad\'s number of times, with a blocked one to try again', () => {
    expect([planAttempts('service'), planAttempts('batch'), planAttempts('system')]).toEqual([5, 2, 5]);
    const b = evaluation({ ID: 'b0', Status: 'blocked', TriggeredBy: 'queued-allocs', StatusDescription: BLOCKED_DESCRIPTION, QueuedAllocations: { g: 1 }, FailedTGAllocs: { g: { NodesExhausted: 1 } } });
    const [failed, again] = failedAfterAttempts(b, 5, 12, 120);
    expect(failed).toEqual({ ...b, Status: 'failed', StatusDescription: 'maximum attempts reached (5)', BlockedEval: again.ID, ModifyIndex: 12, ModifyTime: 120 });
    expect(again).toEqual({
      ID: expect.stringMatching(/^[0-9a-f-]{36}$/), Namespace: 'default', Priority: 50, Type: 'service', TriggeredBy: 'max-plan-attempts', JobID: 'j', JobModifyIndex: 7,
      Status: 'blocked', StatusDescription: MAX_PLAN_DESCRIPTION, PreviousEval: 'b0', QueuedAllocations: { g: 1 }, FailedTGAllocs: { g: { NodesExhausted: 1 } },
      CreateIndex: 12, ModifyIndex: 12, CreateTime: 120, ModifyTime: 120,
    });
    expect(MAX_PLAN_DESCRIPTION).toBe('created due to placement conflicts');
    expect(b.Status).toBe('blocked');
    const [, bare] = failedAfterAttempts(evaluation(), 2, 1, 1);
    expect(bare).not.toHaveProperty('FailedTGAllocs');
    expect(bare).not.toHaveProperty('QueuedAllocations');
  });

  it('completes a blocked evaluation processed again once it places everything', () => {
    const b = evaluation({ ID: 'b0', Status: 'blocked', TriggeredBy: 'queued-allocs', StatusDescription: BLOCKED_DESCRIPTION, FailedTGAllocs: { g: {} }, QueuedAllocations: { g: 1 } });
    const { evals, blocked } = settleEvaluations([b], [], () => b, 9, 99);
    expect(evals).toEqual([b]);
    expect(b).toMatchObject({ Status: 'complete', StatusDescription: '', QueuedAllocations: {} });
    expect(b.FailedTGAllocs).toBeUndefined();
    expect(blocked).toEqual(new Map([['j', undefined]]));
  });
});

/** A one-group service job of one mock task asking for `memory` MB (and any network ports). */
const sized = (id: string, memory: number, ports?: { Label: string; Value?: number }[]) => ({
  Job: {
    ID: id, Type: 'service',
    TaskGroups: [{
      Name: 'g', Count: 1,
      ...(ports && { Networks: [{ Mode: 'host', DynamicPorts: ports.filter((p) => p.Value === undefined).map((p) => ({ Label: p.Label })), ReservedPorts: ports.filter((p) => p.Value !== undefined) }] }),
      Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' }, Resources: { MemoryMB: memory } }],
    }],
  },
});
const liveOnes = (n: number) => (l: Alloc[]) => l.filter((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running').length === n;
const evalOf = async (s: Served, id: string) => (await call(s.socket, 'GET', `/v1/evaluation/${id}`)).json();

/** A served agent on a node of 1000 MB, its registry's log kept. */
async function smallNode(): Promise<{ s: Served; log: string[] }> {
  const s = await serve();
  const log: string[] = [];
  s.api.registry.capacity = { cpu: 0, cores: 2, memoryMB: 1000 };
  s.api.registry.log = (line) => log.push(line);
  return { s, log };
}

async function register(s: Served, body: unknown): Promise<{ EvalID: string }> {
  const res = await call(s.socket, 'PUT', '/v1/jobs', body);
  expect(res.status, res.text).toBe(200);
  return res.json();
}

describe('blocked evaluations through the agent', { timeout: 60_000 }, () => {
  it('places nothing where a constraint or the datacenters leave the node out, and says which (ConstraintFiltered)', async () => {
    const { s } = await smallNode();
    const job = (id: string, extra: Record<string, unknown>) => ({ Job: { ...sized(id, 10).Job, ...extra } });
    const { EvalID } = await register(s, job('win', { Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'windows', Operand: '=' }] }));
    expect(await evalOf(s, EvalID)).toMatchObject({ QueuedAllocations: { g: 1 }, FailedTGAllocs: { g: { NodesEvaluated: 1, NodesFiltered: 1, NodesExhausted: 0, ConstraintFiltered: { '${attr.kernel.name} = windows': 1 }, DimensionExhausted: null } } });
    const dc = await register(s, job('far', { Datacenters: ['eu-west-1'] }));
    expect(await evalOf(s, dc.EvalID)).toMatchObject({ FailedTGAllocs: { g: { NodesEvaluated: 0, ConstraintFiltered: null } } });
    await register(s, job('here', { Datacenters: ['dc*'], Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }] }));
    await waitForAllocs(s.socket, '/v1/job/here/allocations', liveOnes(1));
    for (const id of ['win', 'far']) expect((await call(s.socket, 'GET', `/v1/job/${id}/allocations`)).json()).toEqual([]);
  });

  it('blocks a group whose memory does not fit beside what runs, and places it once that is stopped', async () => {
    const { s, log } = await smallNode();
    await register(s, sized('big', 600));
    await waitForAllocs(s.socket, '/v1/job/big/allocations', liveOnes(1));
    const { EvalID } = await register(s, sized('second', 600));

    const evaluation = await evalOf(s, EvalID);
    expect(evaluation).toMatchObject({ Status: 'complete', TriggeredBy: 'job-register', QueuedAllocations: { g: 1 }, FailedTGAllocs: { g: { DimensionExhausted: { memory: 1 }, NodesExhausted: 1 } } });
    const blocked = await evalOf(s, evaluation.BlockedEval);
    expect(blocked).toMatchObject({ Status: 'blocked', TriggeredBy: 'queued-allocs', StatusDescription: 'created to place remaining allocations', PreviousEval: EvalID, JobModifyIndex: evaluation.JobModifyIndex });
    expect(log).toEqual(['job "second": failed to place 1 allocation of group "g": memory exhausted: the group asks for 600 MB; 400 MB of the node\'s 1000 MB are free']);
    expect((await call(s.socket, 'GET', '/v1/job/second/allocations')).json()).toEqual([]);
    expect((await call(s.socket, 'GET', '/v1/job/second/summary')).json().Summary.g).toMatchObject({ Queued: 1, Running: 0, Starting: 0 });

    // Stopping the job that holds the memory frees it: the blocked evaluation itself places the allocation.
    await call(s.socket, 'DELETE', '/v1/job/big');
    const [placed] = await waitForAllocs(s.socket, '/v1/job/second/allocations', liveOnes(1));
    expect((placed as Alloc & { EvalID: string }).EvalID).toBe(blocked.ID);
    expect(await evalOf(s, blocked.ID)).toMatchObject({ Status: 'complete', StatusDescription: '', FailedTGAllocs: null });
    expect((await call(s.socket, 'GET', `/v1/evaluation/${blocked.ID}/allocations`)).json()).toMatchObject([{ ID: placed!.ID }]);
    const evals = (await call(s.socket, 'GET', '/v1/job/second/evaluations')).json() as { ID: string; Status: string }[];
    expect(evals.map((e) => [e.ID, e.Status])).toEqual([[blocked.ID, 'complete'], [EvalID, 'complete']]);
  });

  it('keeps a blocked evaluation blocked, the same one, while what frees is still not enough', async () => {
    const { s } = await smallNode();
    await register(s, sized('small', 100));
    await register(s, sized('big', 500));
    await waitForAllocs(s.socket, '/v1/allocations', liveOnes(2));
    const first = await evalOf(s, (await register(s, sized('second', 600))).EvalID);
    const blocked = await evalOf(s, first.BlockedEval);

    // 100 MB frees: 500 free, still short of 600. The blocked evaluation is processed again and stays blocked.
    await call(s.socket, 'DELETE', '/v1/job/small');
    const again = await until(() => evalOf(s, blocked.ID), (e) => e.ModifyIndex > blocked.ModifyIndex, 'the blocked evaluation processed again');
    expect(again).toMatchObject({ Status: 'blocked', FailedTGAllocs: { g: { DimensionExhausted: { memory: 1 } } } });
    expect((await call(s.socket, 'GET', '/v1/job/second/evaluations')).json()).toHaveLength(2);

    await call(s.socket, 'DELETE', '/v1/job/big');
    await waitForAllocs(s.socket, '/v1/job/second/allocations', liveOnes(1));
    expect(await evalOf(s, blocked.ID)).toMatchObject({ Status: 'complete' });
  });

  it('cancels a job\'s blocked evaluation when a new version blocks again, and when the job is stopped', async () => {
    const { s } = await smallNode();
    await register(s, sized('big', 900));
    await waitForAllocs(s.socket, '/v1/job/big/allocations', liveOnes(1));
    const v0 = await evalOf(s, (await register(s, sized('second', 200))).EvalID);
    // (300 MB is Nomad's default ask, which the API drops as unsaid: 350 is an ask.)
    const v1 = await evalOf(s, (await register(s, sized('second', 350))).EvalID);
    expect(v1.BlockedEval).not.toBe(v0.BlockedEval);
    expect(await evalOf(s, v0.BlockedEval)).toMatchObject({ Status: 'canceled', StatusDescription: 'existing blocked evaluation exists for job "second"' });
    expect(await evalOf(s, v1.BlockedEval)).toMatchObject({ Status: 'blocked' });

    const stop = (await call(s.socket, 'DELETE', '/v1/job/second')).json();
    expect(await evalOf(s, stop.EvalID)).toMatchObject({ Status: 'complete', TriggeredBy: 'job-deregister', FailedTGAllocs: null });
    expect(await evalOf(s, v1.BlockedEval)).toMatchObject({ Status: 'canceled', StatusDescription: `canceled: evaluation ${stop.EvalID} placed every allocation of job "second"` });
  });

  it('never gives two registrations committed at the same time the same memory', async () => {
    const { s } = await smallNode();
    const answers = await Promise.all([register(s, sized('a', 600)), register(s, sized('b', 600))]);
    const evaluations = await Promise.all(answers.map((r) => evalOf(s, r.EvalID)));
    expect(evaluations.filter((e) => e.BlockedEval).length).toBe(1);
    await waitForAllocs(s.socket, '/v1/allocations', liveOnes(1));
    expect((await call(s.socket, 'GET', '/v1/allocations')).json()).toHaveLength(1);
  });

  it('blocks a group that finds no free dynamic port with Nomad\'s dynamic port dimension', async () => {
    const { s, log } = await smallNode();
    s.api.registry.ports = new PortAllocator({ minDynamicPort: 29001, maxDynamicPort: 29001 });
    await register(s, sized('one', 10, [{ Label: 'http' }]));
    await waitForAllocs(s.socket, '/v1/job/one/allocations', liveOnes(1));
    const evaluation = await evalOf(s, (await register(s, sized('two', 10, [{ Label: 'http' }]))).EvalID);
    expect(evaluation.FailedTGAllocs.g.DimensionExhausted).toEqual({ 'network: dynamic port selection failed': 1 });
    expect(await evalOf(s, evaluation.BlockedEval)).toMatchObject({ Status: 'blocked' });
    expect(log.at(-1)).toBe('job "two": failed to place 1 allocation of group "g": no free dynamic port for port "http": all of 29001-29001 are held');
  });

  it('reports a group of three sharing one static port as Nomad does: the first failure\'s metric, the second coalesced', async () => {
    const { s } = await smallNode();
    const port = await freePort();
    const job = (id: string) => {
      const body = sized(id, 10, [{ Label: 'http', Value: port }]);
      body.Job.TaskGroups[0]!.Count = 3;
      return body;
    };
    const dimension = `network: reserved port collision http=${port}`;
    // Nomad's computePlacements (scheduler/generic_sched.go) keeps the first failure's AllocMetric and only adds
    // to CoalescedFailures for the next: one node exhausted once, not once per failed allocation.
    const expected = {
      NodesEvaluated: 1, NodesExhausted: 1, NodesAvailable: { dc1: 1 }, DimensionExhausted: { [dimension]: 1 }, CoalescedFailures: 1,
      ResourcesExhausted: { t: expect.objectContaining({ CPU: 0, MemoryMB: 0 }) }, AllocationTime: expect.any(Number),
    };
    const plan = (await call(s.socket, 'PUT', '/v1/job/three/plan', job('three'))).json();
    expect(plan.FailedTGAllocs.g).toMatchObject(expected);
    expect(plan.FailedTGAllocs.g.DimensionExhausted).toEqual({ [dimension]: 1 });

    const evaluation = await evalOf(s, (await register(s, job('three'))).EvalID);
    expect(evaluation).toMatchObject({ QueuedAllocations: { g: 2 }, FailedTGAllocs: { g: expected } });
    expect(evaluation.FailedTGAllocs.g.DimensionExhausted).toEqual({ [dimension]: 1 });
    expect(evaluation.FailedTGAllocs.g.AllocationTime).toBeGreaterThan(0);
    expect(await evalOf(s, evaluation.BlockedEval)).toMatchObject({ FailedTGAllocs: { g: expected } });
    // What `job run` prints from it (command/monitor.go): two unplaced, the node exhausted once.
    expect(placementFailureLines(evaluation).slice(1, -1)).toEqual([
      '    Task Group "g" (failed to place 2 allocations):',
      '      * Resources exhausted on 1 nodes',
      `      * Dimension "${dimension}" exhausted on 1 nodes`,
    ]);
  });

  it('answers a plan that would not fit with the place and the failure, writing nothing', async () => {
    const { s } = await smallNode();
    await register(s, sized('big', 900));
    await waitForAllocs(s.socket, '/v1/job/big/allocations', liveOnes(1));
    const plan = (await call(s.socket, 'PUT', '/v1/job/second/plan', sized('second', 200))).json();
    expect(plan.Annotations.DesiredTGUpdates.g).toMatchObject({ Place: 1 });
    expect(plan.FailedTGAllocs).toMatchObject({ g: { DimensionExhausted: { memory: 1 } } });
    expect((await call(s.socket, 'GET', '/v1/evaluations')).json().map((e: { JobID: string }) => e.JobID)).toEqual(['big']);
  });

  it('fails a blocked evaluation whose placements the store refuses five times, and a new blocked one places them later', async () => {
    let refusing = false;
    let refused = 0;
    // Refused: a write of allocations that is no job's registration or stop, i.e. the blocked evaluation's plan.
    const faults = {
      beforeCommit: (tables: readonly string[]) => {
        if (!refusing || !tables.includes('allocs') || tables.includes('jobs')) return;
        refused++;
        throw new Error('injected: disk refused');
      },
    };
    const s = await serve(undefined, undefined, { faults });
    const log: string[] = [];
    s.api.registry.capacity = { cpu: 0, cores: 2, memoryMB: 1000 };
    s.api.registry.log = (line) => log.push(line);
    await register(s, sized('tiny', 50));
    await register(s, sized('big', 600));
    await waitForAllocs(s.socket, '/v1/allocations', liveOnes(2));
    const first = await evalOf(s, (await register(s, sized('second', 600))).EvalID);

    refusing = true;
    await call(s.socket, 'DELETE', '/v1/job/big');
    const failed = await until(() => evalOf(s, first.BlockedEval), (e) => e.Status === 'failed', 'the blocked evaluation to fail');
    expect(refused).toBe(5);
    expect(failed).toMatchObject({ StatusDescription: 'maximum attempts reached (5)', BlockedEval: expect.any(String) });
    const again = await evalOf(s, failed.BlockedEval);
    expect(again).toMatchObject({ Status: 'blocked', TriggeredBy: 'max-plan-attempts', StatusDescription: 'created due to placement conflicts', PreviousEval: failed.ID });
    expect(log.at(-1)).toMatch(/^evaluation [0-9a-f-]{36} of job "second" failed: its plan could not be written 5 times \(cannot commit to .*injected: disk refused\); blocked evaluation [0-9a-f-]{36} will try again when capacity frees$/);
    expect((await call(s.socket, 'GET', '/v1/job/second/allocations')).json()).toEqual([]);

    // The store takes writes again; the next capacity change processes the new blocked evaluation.
    refusing = false;
    await call(s.socket, 'DELETE', '/v1/job/tiny');
    const [placed] = await waitForAllocs(s.socket, '/v1/job/second/allocations', liveOnes(1));
    expect((placed as Alloc & { EvalID: string }).EvalID).toBe(again.ID);
    expect(await evalOf(s, again.ID)).toMatchObject({ Status: 'complete' });
  });

  it('settles a blocked evaluation kept in the store when the agent starts again with room for it', async () => {
    const { s } = await smallNode();
    await register(s, sized('big', 900));
    await waitForAllocs(s.socket, '/v1/job/big/allocations', liveOnes(1));
    const first = await evalOf(s, (await register(s, sized('second', 200))).EvalID);
    await s.stop();

    // The next agent has the whole host: the start's reconcile places the job and the old blocked evaluation is done with.
    const next = await serve(s.dataDir);
    await waitForAllocs(next.socket, '/v1/job/second/allocations', liveOnes(1));
    const blocked = await evalOf(next, first.BlockedEval);
    expect(blocked.Status).toBe('canceled');
    expect(blocked.StatusDescription).toMatch(/^canceled: evaluation [0-9a-f-]{36} placed every allocation of job "second"$/);
  });
});
