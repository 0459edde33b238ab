/**
 * Rescheduling failed allocations (src/api/reschedule-policy.ts, reschedule-timer.ts, the registry's rescheduleLater
 * and followUp), as Nomad's scheduler does on one node. First the arithmetic, table-tested (NextDelay, eligibility,
 * the tracker, batching); then agents in process whose follow-up timers run on a simulated clock (mock tasks that
 * fail on the wall clock): a failure gets a pending follow-up evaluation at fail time + delay, processed at that time
 * into a replacement with its tracker and links; attempts run out; system jobs and `attempts = 0` never; a stop, a
 * purge or a new version leave the follow-up nothing to place; an agent restarted after `WaitUntil` places once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { attemptsInInterval, batchFollowups, nextDelay, nextReschedule, reschedulePolicyOf, trackerAfter, type ReschedulePolicy, type RescheduleEvent } from '../../src/api/reschedule-policy.ts';
import { canonicalJob } from '../../src/api/job-canonical.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { call } from './agent-process.ts';
import { cleanUp, freshDir, serve, type Served, SUITE_TIMEOUT, until } from './in-process-agent.ts';

type Json = Record<string, any>;

const S = 1000;
const MIN = 60 * S;
const policy = (p: Partial<ReschedulePolicy>): ReschedulePolicy => ({ attempts: 0, interval: 0, delay: 5 * S, delayFunction: 'constant', maxDelay: 0, unlimited: true, ...p });
/** Events of past attempts with these delays (ms), each at `at` (ms). */
const events = (delays: number[], at = 0): RescheduleEvent[] => delays.map((d) => ({ RescheduleTime: at * 1e6, PrevAllocID: 'p', PrevNodeID: 'n', Delay: d * 1e6 }));

describe('the next delay (Nomad\'s Allocation.NextDelay)', () => {
  it.each<[string, Partial<ReschedulePolicy>, number[], number]>([
    ['constant: always the delay', { delay: 10 * S }, [10 * S, 10 * S], 10 * S],
    ['the first attempt waits the delay, whatever the function', { delay: 30 * S, delayFunction: 'exponential', maxDelay: 3600 * S }, [], 30 * S],
    ['exponential: twice the last', { delay: 30 * S, delayFunction: 'exponential', maxDelay: 3600 * S }, [30 * S, 60 * S], 120 * S],
    ['exponential: capped by max_delay', { delay: 30 * S, delayFunction: 'exponential', maxDelay: 90 * S }, [30 * S, 60 * S], 90 * S],
    ['fibonacci: the sum of the last two', { delay: 5 * S, delayFunction: 'fibonacci', maxDelay: 3600 * S }, [5 * S, 5 * S, 10 * S], 15 * S],
    ['fibonacci: one past attempt waits the delay again', { delay: 5 * S, delayFunction: 'fibonacci', maxDelay: 3600 * S }, [5 * S], 5 * S],
    ['fibonacci: starts over after a reset', { delay: 5 * S, delayFunction: 'fibonacci', maxDelay: 20 * S }, [20 * S, 5 * S], 5 * S],
  ])('%s', (_what, p, delays, expected) => {
    // Failed right after the last attempt: no reset.
    expect(nextDelay(policy(p), events(delays), 1)).toBe(expected);
  });

  it('once capped, a failure longer after the last attempt than max_delay starts over from the delay', () => {
    const p = policy({ delay: 30 * S, delayFunction: 'exponential', maxDelay: 90 * S });
    expect(nextDelay(p, events([60 * S], 0), 90 * S)).toBe(90 * S);
    expect(nextDelay(p, events([60 * S], 0), 90 * S + 1)).toBe(30 * S);
  });
});

describe('whether a failed allocation may be rescheduled (RescheduleEligible, NextRescheduleTime)', () => {
  it.each<[string, Partial<ReschedulePolicy>, RescheduleEvent[], number, boolean]>([
    ['unlimited: always', {}, events([5 * S, 5 * S, 5 * S, 5 * S, 5 * S, 5 * S]), 10 * S, true],
    ['attempts left: the first', { unlimited: false, attempts: 1, interval: 3600 * S }, [], 10 * S, true],
    ['attempts used within the interval: no', { unlimited: false, attempts: 1, interval: 3600 * S }, events([5 * S], 0), 10 * S, false],
    ['attempts used before the interval: yes again', { unlimited: false, attempts: 1, interval: 3600 * S }, events([5 * S], 0), 3600 * S + 1, true],
    ['attempts = 0 and not unlimited: never', { unlimited: false, attempts: 0, interval: 3600 * S }, [], 10 * S, false],
    ['a delay as long as the interval: no', { unlimited: false, attempts: 3, interval: 20 * S, delayFunction: 'exponential', delay: 10 * S, maxDelay: 60 * S }, events([10 * S], 0), 10 * S, false],
  ])('%s', (_what, p, past, failedAt, eligible) => {
    expect(nextReschedule(policy(p), past, failedAt).eligible).toBe(eligible);
  });

  it('is due at the fail time plus the next delay', () => {
    expect(nextReschedule(policy({ delay: 7 * S }), [], 100 * S)).toEqual({ at: 107 * S, delay: 7 * S, eligible: true });
  });

  it('counts the attempts within the interval before the failure', () => {
    const past = [...events([5 * S], 0), ...events([5 * S], 50 * S)];
    expect(attemptsInInterval(policy({ interval: 60 * S }), past, 70 * S)).toBe(1);
  });
});

describe('the replacement\'s tracker (updateRescheduleTracker)', () => {
  it('carries the attempts within the interval and adds this one', () => {
    const p = policy({ unlimited: false, attempts: 3, interval: 60 * S });
    const t = trackerAfter(p, { id: 'old', nodeId: 'node', tracker: { Events: [...events([5 * S], 0), ...events([5 * S], 50 * S)] } }, 100 * S, 5 * S);
    expect(t.Events).toEqual([...events([5 * S], 50 * S), { RescheduleTime: 100 * S * 1e6, PrevAllocID: 'old', PrevNodeID: 'node', Delay: 5 * S * 1e6 }]);
  });

  it('keeps an unlimited policy\'s last five attempts', () => {
    const t = trackerAfter(policy({}), { id: 'old', nodeId: 'node', tracker: { Events: events([1, 2, 3, 4, 5, 6, 7].map((n) => n * S)) } }, 10 * S, 8 * S);
    expect(t.Events.map((e) => e.Delay / 1e6)).toEqual([3, 4, 5, 6, 7, 8].map((n) => n * S));
  });
});

describe('follow-up evaluations (createRescheduleLaterEvals)', () => {
  it('share one evaluation for failures due within 5s of the first of a batch', () => {
    const batches = batchFollowups([{ at: 10 * S }, { at: 1 * S }, { at: 5 * S }, { at: 6 * S + 1 }]);
    expect(batches.map((b) => [b.at, b.members.map((m) => m.at)])).toEqual([[1 * S, [1 * S, 5 * S]], [6 * S + 1, [6 * S + 1, 10 * S]]]);
  });

  it('read the group\'s policy: the type\'s default, the job\'s block, the group\'s; none for a system job', () => {
    const job = canonicalJob({ ID: 'j', Type: 'service', Reschedule: { Delay: 10e9, DelayFunction: 'constant' }, TaskGroups: [{ Name: 'a' }, { Name: 'b', ReschedulePolicy: { Delay: 20e9 } }] });
    expect(reschedulePolicyOf(job, 'a')).toEqual({ attempts: 0, interval: 0, delay: 10 * S, delayFunction: 'constant', maxDelay: 3600 * S, unlimited: true });
    expect(reschedulePolicyOf(job, 'b')?.delay).toBe(20 * S);
    expect(reschedulePolicyOf(canonicalJob({ ID: 'j', Type: 'batch', TaskGroups: [{ Name: 'a' }] }), 'a')).toEqual({ attempts: 1, interval: 24 * 3600 * S, delay: 5 * S, delayFunction: 'constant', maxDelay: 0, unlimited: false });
    expect(reschedulePolicyOf(canonicalJob({ ID: 'j', Type: 'system', TaskGroups: [{ Name: 'a' }] }), 'a')).toBeUndefined();
  });
});

afterAll(cleanUp);

/** An agent whose follow-up timers run on `clock`, with room for any number of mock allocations. */
async function agentOn(clock: SimulatedClock, dir = freshDir()): Promise<Served> {
  const s = await serve(dir, undefined, { api: { clock } });
  s.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 1_000_000 };
  return s;
}

/** A job of one group whose mock task fails at once and is not restarted; `reschedule` its group's ReschedulePolicy. */
function failing(id: string, type: string, reschedule?: Json, meta: Json = {}, config: Json = { run_for: '10ms', exit_code: 1 }): Json {
  return {
    Job: {
      ID: id, Type: type, Meta: { v: '0', ...meta },
      TaskGroups: [{ Name: 'g', Count: 1, RestartPolicy: { Attempts: 0, Mode: 'fail' }, ...(reschedule && { ReschedulePolicy: reschedule }), Tasks: [{ Name: 't', Driver: 'mock', Config: config }] }],
    },
  };
}

function client(s: Served) {
  const get = async <T = Json>(path: string): Promise<T> => {
    const res = await call(s.socket, 'GET', path);
    expect(res.status, res.text).toBe(200);
    return res.json<T>();
  };
  const send = async (method: string, path: string, body?: unknown) => {
    const res = await call(s.socket, method, path, body);
    expect(res.status, res.text).toBe(200);
    return res.json<Json>();
  };
  const allocs = (job: string) => get<Json[]>(`/v1/job/${job}/allocations`);
  const alloc = (id: string) => get(`/v1/allocation/${id}`);
  const evaluation = (id: string) => get(`/v1/evaluation/${id}`);
  /** Waits until job `job` has `n` allocations and every one has failed and been looked at (a follow-up named, or none due). */
  const failedAll = (job: string, n: number) => until(() => allocs(job), (l) => l.length === n && l.every((a) => a['ClientStatus'] === 'failed'), `${n} failed allocations of ${job}`);
  const followupOf = async (id: string) => (await until(() => alloc(id), (a) => a['FollowupEvalID'] !== '', `a follow-up of ${id}`))['FollowupEvalID'] as string;
  return { get, send, allocs, alloc, evaluation, failedAll, followupOf };
}

/** Lets what the agent does on its own settle (a noticed failure's write): a few wall-clock polls. */
const settle = () => new Promise((r) => setTimeout(r, 300));

describe('an agent rescheduling failed allocations', { timeout: SUITE_TIMEOUT }, () => {
  it('gives a failed allocation a pending follow-up at fail time + delay, and at that time a replacement with its tracker and links', async () => {
    const clock = new SimulatedClock(Date.UTC(2026, 0, 1));
    const s = await agentOn(clock);
    const c = client(s);
    await c.send('PUT', '/v1/jobs', failing('web', 'service', { Attempts: 2, Interval: 3600e9, Delay: 10e9, DelayFunction: 'constant', Unlimited: false }));
    const [first] = await c.failedAll('web', 1);
    const followup = await c.followupOf(first!['ID']);
    const e = await c.evaluation(followup);
    expect(e).toMatchObject({ Status: 'pending', TriggeredBy: 'alloc-failure', StatusDescription: 'created for delayed rescheduling', JobID: 'web', WaitUntil: new Date(clock.now() + 10 * S).toISOString() });
    await clock.advance(10 * S - 1);
    await settle();
    expect(await c.allocs('web')).toHaveLength(1);
    await clock.advance(1);
    const [, second] = await c.failedAll('web', 2);
    expect((await c.evaluation(followup))['Status']).toBe('complete');
    const old = await c.alloc(first!['ID']);
    // Nomad leaves the failed allocation desired to run; its replacement is named on it.
    expect(old).toMatchObject({ DesiredStatus: 'run', ClientStatus: 'failed', NextAllocation: second!['ID'] });
    const next = await c.alloc(second!['ID']);
    expect(next['PreviousAllocation']).toBe(first!['ID']);
    expect(next['RescheduleTracker']['Events']).toEqual([{ RescheduleTime: clock.now() * 1e6, PrevAllocID: first!['ID'], PrevNodeID: old['NodeID'], Delay: 10e9 }]);
    // Its own failure: the second attempt, then none left.
    const followup2 = await c.followupOf(second!['ID']);
    await clock.advance(10 * S);
    const [, , third] = await c.failedAll('web', 3);
    expect((await c.evaluation(followup2))['Status']).toBe('complete');
    expect((await c.alloc(third!['ID']))['RescheduleTracker']['Events'].map((ev: Json) => ev['PrevAllocID'])).toEqual([first!['ID'], second!['ID']]);
    await settle();
    expect((await c.alloc(third!['ID']))['FollowupEvalID']).toBe('');
    await clock.advance(60 * MIN);
    expect(await c.allocs('web')).toHaveLength(3);
    await s.stop();
  });

  it('waits by the service default: exponential from 30s', async () => {
    const clock = new SimulatedClock(Date.UTC(2026, 0, 1));
    const s = await agentOn(clock);
    const c = client(s);
    await c.send('PUT', '/v1/jobs', failing('svc', 'service'));
    const [first] = await c.failedAll('svc', 1);
    const start = clock.now();
    expect((await c.evaluation(await c.followupOf(first!['ID'])))['WaitUntil']).toBe(new Date(start + 30 * S).toISOString());
    await clock.advance(30 * S);
    const [, second] = await c.failedAll('svc', 2);
    expect((await c.evaluation(await c.followupOf(second!['ID'])))['WaitUntil']).toBe(new Date(start + 30 * S + 60 * S).toISOString());
    await s.stop();
  });

  it('reschedules a batch job once by its default (attempts 1, 5s)', async () => {
    const clock = new SimulatedClock(Date.UTC(2026, 0, 1));
    const s = await agentOn(clock);
    const c = client(s);
    await c.send('PUT', '/v1/jobs', failing('once', 'batch'));
    const [first] = await c.failedAll('once', 1);
    expect((await c.evaluation(await c.followupOf(first!['ID'])))['WaitUntil']).toBe(new Date(clock.now() + 5 * S).toISOString());
    await clock.advance(5 * S);
    const [, second] = await c.failedAll('once', 2);
    await settle();
    expect((await c.alloc(second!['ID']))['FollowupEvalID']).toBe('');
    await clock.advance(60 * MIN);
    expect(await c.allocs('once')).toHaveLength(2);
    await s.stop();
  });

  it.each<[string, string, Json | undefined]>([
    ['a system job: never', 'system', undefined],
    ['attempts = 0, not unlimited: never', 'service', { Attempts: 0, Unlimited: false }],
  ])('%s', async (_what, type, reschedule) => {
    const clock = new SimulatedClock(Date.UTC(2026, 0, 1));
    const s = await agentOn(clock);
    const c = client(s);
    await c.send('PUT', '/v1/jobs', failing('never', type, reschedule));
    const [first] = await c.failedAll('never', 1);
    await settle();
    expect((await c.alloc(first!['ID']))['FollowupEvalID']).toBe('');
    expect((await c.get<Json[]>('/v1/job/never/evaluations')).filter((e) => e['Status'] === 'pending')).toEqual([]);
    await clock.advance(60 * MIN);
    expect(await c.allocs('never')).toHaveLength(1);
    await s.stop();
  });

  it.each<[string, (c: ReturnType<typeof client>) => Promise<unknown>, number]>([
    ['a stop', (c) => c.send('DELETE', '/v1/job/gone'), 1],
    // Purged, its allocations stay listed until they are collected, as in Nomad.
    ['a purge', (c) => c.send('DELETE', '/v1/job/gone?purge=true'), 1],
    // The new version replaces the failed allocation at once (a destructive update): the follow-up has nothing left.
    ['a new version', (c) => c.send('PUT', '/v1/jobs', failing('gone', 'service', { Delay: 10e9, DelayFunction: 'constant' }, { v: '1' }, { run_for: '1h' })), 2],
  ])('%s leaves a pending follow-up nothing to place: it completes at its time, placing nothing', async (_what, act, allocsAfter) => {
    const clock = new SimulatedClock(Date.UTC(2026, 0, 1));
    const s = await agentOn(clock);
    const c = client(s);
    await c.send('PUT', '/v1/jobs', failing('gone', 'service', { Delay: 10e9, DelayFunction: 'constant' }));
    const [first] = await c.failedAll('gone', 1);
    const followup = await c.followupOf(first!['ID']);
    await act(c);
    await until(() => c.allocs('gone'), (l) => l.length === allocsAfter, `${allocsAfter} allocations`);
    await clock.advance(10 * S);
    await until(() => c.evaluation(followup), (e) => e['Status'] === 'complete', 'the follow-up complete');
    await settle();
    const after = await c.allocs('gone');
    expect(after).toHaveLength(allocsAfter);
    expect(after.filter((a) => a['PreviousAllocation'] === first!['ID'] && a['RescheduleTracker'] !== null)).toEqual([]);
    await s.stop();
  });

  it('an agent stopped before WaitUntil and started after it places the replacement at once, and once', async () => {
    const start = Date.UTC(2026, 0, 1);
    const dir = freshDir();
    const s1 = await agentOn(new SimulatedClock(start), dir);
    const c1 = client(s1);
    await c1.send('PUT', '/v1/jobs', failing('back', 'service', { Delay: 10e9, DelayFunction: 'constant' }));
    const [first] = await c1.failedAll('back', 1);
    const followup = await c1.followupOf(first!['ID']);
    await s1.stop();
    // Started before WaitUntil: it waits the rest.
    const early = new SimulatedClock(start + 5 * S);
    const s2 = await agentOn(early, dir);
    const c2 = client(s2);
    await settle();
    expect(await c2.allocs('back')).toHaveLength(1);
    expect((await c2.evaluation(followup))['Status']).toBe('pending');
    await s2.stop();
    // Started after it: placed at once.
    const s3 = await agentOn(new SimulatedClock(start + 60 * S), dir);
    const c3 = client(s3);
    await until(() => c3.allocs('back'), (l) => l.length === 2, 'the replacement');
    expect((await c3.evaluation(followup))['Status']).toBe('complete');
    await s3.stop();
    // And never again.
    const s4 = await agentOn(new SimulatedClock(start + 120 * S), dir);
    const c4 = client(s4);
    await settle();
    const replaced = (await c4.allocs('back')).filter((a) => a['PreviousAllocation'] === first!['ID']);
    expect(replaced).toHaveLength(1);
    await s4.stop();
  });
});
