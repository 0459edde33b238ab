/**
 * Periodic jobs on the agent, as Nomad's periodic launcher runs them, on a driven clock: children at the cron
 * times, prohibit_overlap, force, a stopped parent, and agent restarts between launches (no double launch, one
 * launch made up after downtime, no forced launch lost).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { call } from './agent-process.ts';
import { cleanUp, freshDir, serve, until, type Served } from './in-process-agent.ts';

const START = Date.UTC(2026, 0, 1, 0, 0, 0);
const MIN = 60_000;

/** A periodic batch job of mock tasks running `runFor`. */
const periodicJob = (id: string, periodic: Record<string, unknown>, runFor = '10ms') => ({
  Job: {
    ID: id, Type: 'batch', Periodic: { Enabled: true, SpecType: 'cron', ...periodic },
    TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: runFor } }] }],
  },
});

interface Stub { ID: string; ParentID: string; Periodic: boolean; Status: string; JobSummary: { Children: Record<string, number> } }

const jobs = async (s: Served): Promise<Stub[]> => (await call(s.socket, 'GET', '/v1/jobs')).json() as Stub[];
const childrenOf = async (s: Served, id: string) => (await jobs(s)).filter((j) => j.ParentID === id).map((j) => j.ID).sort();
const at = (ms: number) => Math.floor(ms / 1000);

async function register(s: Served, body: unknown): Promise<{ EvalID: string }> {
  const res = await call(s.socket, 'PUT', '/v1/jobs', body);
  expect(res.status, res.text).toBe(200);
  return res.json() as { EvalID: string };
}

/** Waits until the launcher has dealt with every launch up to now: the job's next launch is the one given. */
const nextLaunchIs = (s: Served, id: string, due: number | undefined) =>
  until(async () => s.api.periodic.nextLaunchOf(id), (n) => n === due, `the next launch of ${id} to be ${due === undefined ? 'none' : new Date(due).toISOString()}`);

describe('periodic jobs on a driven clock', () => {
  const clock = new SimulatedClock(START, { fileCallWaitMs: 0 });
  let s: Served;
  beforeAll(async () => {
    s = await serve(freshDir(), undefined, { api: { clock } });
  });
  afterAll(cleanUp);

  it('registers a periodic job without placing anything or answering an evaluation', async () => {
    const res = await register(s, periodicJob('tick', { Specs: ['*/5 * * * *'] }));
    expect(res.EvalID).toBe('');
    expect(await childrenOf(s, 'tick')).toEqual([]);
    expect((await call(s.socket, 'GET', '/v1/job/tick/allocations')).json()).toEqual([]);
    const stub = (await jobs(s)).find((j) => j.ID === 'tick')!;
    expect(stub).toMatchObject({ Periodic: true, ParentID: '', Status: 'running' });
    expect(s.api.periodic.nextLaunchOf('tick')).toBe(START + 5 * MIN);
  });

  it("plans a periodic job with its next launch on the agent's clock (Nomad's NextPeriodicLaunch), placing nothing", async () => {
    const res = await call(s.socket, 'POST', '/v1/job/planned/plan', periodicJob('planned', { Specs: ['0 * * * *'] }));
    expect(res.status, res.text).toBe(200);
    const plan = res.json() as { NextPeriodicLaunch: string; Annotations: { DesiredTGUpdates: Record<string, { Place: number }> } };
    expect(plan.NextPeriodicLaunch).toBe('2026-01-01T01:00:00Z');
    expect(plan.Annotations.DesiredTGUpdates['g']!.Place).toBe(0);
  });

  it('launches a child batch job at each cron time, with ParentID and no periodic block', async () => {
    await clock.advance(5 * MIN);
    await until(() => childrenOf(s, 'tick'), (c) => c.length === 1, 'the first child');
    const childId = `tick/periodic-${at(START + 5 * MIN)}`;
    expect(await childrenOf(s, 'tick')).toEqual([childId]);
    const child = (await call(s.socket, 'GET', `/v1/job/${encodeURIComponent(childId)}`)).json() as Record<string, unknown>;
    expect(child).toMatchObject({ ID: childId, Name: childId, ParentID: 'tick', Type: 'batch' });
    expect(child['Periodic']).toBeUndefined();
    await until(async () => (await call(s.socket, 'GET', `/v1/job/${encodeURIComponent(childId)}/allocations`)).json() as { ClientStatus: string }[], (a) => a.length === 1 && a[0]!.ClientStatus === 'complete', 'the child to run to completion');
    await nextLaunchIs(s, 'tick', START + 10 * MIN);
    await clock.advance(5 * MIN);
    await until(() => childrenOf(s, 'tick'), (c) => c.length === 2, 'the second child');
    expect(await childrenOf(s, 'tick')).toContain(`tick/periodic-${at(START + 10 * MIN)}`);
    // The parent's summary counts its children, in its list stub too (which moves with each child's status).
    await until(async () => (await jobs(s)).find((j) => j.ID === 'tick')!.JobSummary.Children, (c) => c['Dead'] === 2, 'both children dead in the parent\'s stub');
    const summary = (await call(s.socket, 'GET', '/v1/job/tick/summary')).json() as { Children: Record<string, number> };
    expect(summary.Children).toEqual({ Pending: 0, Running: 0, Dead: 2 });
  });

  it('skips a launch while an earlier child still runs when prohibit_overlap is set', async () => {
    await register(s, periodicJob('nolap', { Specs: ['*/5 * * * *'], ProhibitOverlap: true }, '1h'));
    const now = clock.now();
    const first = Math.ceil((now + 1) / (5 * MIN)) * 5 * MIN;
    await clock.advance(first - now);
    await until(() => childrenOf(s, 'nolap'), (c) => c.length === 1, 'the first child');
    await until(async () => (await jobs(s)).find((j) => j.ParentID === 'nolap')?.Status, (st) => st === 'running', 'the child to run');
    await nextLaunchIs(s, 'nolap', first + 5 * MIN);
    await clock.advance(5 * MIN);
    await nextLaunchIs(s, 'nolap', first + 10 * MIN);
    expect(await childrenOf(s, 'nolap')).toEqual([`nolap/periodic-${at(first)}`]);
  });

  it('force launches a child now, even over prohibit_overlap, and answers its evaluation', async () => {
    const res = await call(s.socket, 'PUT', '/v1/job/nolap/periodic/force');
    expect(res.status, res.text).toBe(200);
    const body = res.json() as { EvalID: string; EvalCreateIndex: number; Index: number };
    expect(body.EvalID).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.EvalCreateIndex).toBeGreaterThan(0);
    const evaluation = (await call(s.socket, 'GET', `/v1/evaluation/${body.EvalID}`)).json() as { JobID: string; TriggeredBy: string };
    expect(evaluation).toMatchObject({ JobID: `nolap/periodic-${at(clock.now())}`, TriggeredBy: 'periodic-job' });
    expect(await childrenOf(s, 'nolap')).toHaveLength(2);
  });

  it('refuses to force a job that is not periodic, or unknown, and to evaluate a periodic one, with Nomad\'s words', async () => {
    expect(await register(s, { Job: { ID: 'plain', Type: 'batch', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '10ms' } }] }] } })).toBeTruthy();
    const plain = await call(s.socket, 'POST', '/v1/job/plain/periodic/force');
    expect([plain.status, plain.text]).toEqual([400, "can't force launch non-periodic job"]);
    const unknown = await call(s.socket, 'POST', '/v1/job/nope/periodic/force');
    expect([unknown.status, unknown.text]).toEqual([404, 'job not found']);
    const evaluated = await call(s.socket, 'POST', '/v1/job/nolap/evaluate', {});
    expect([evaluated.status, evaluated.text]).toEqual([400, "can't evaluate periodic job"]);
  });

  it('launches nothing more once the parent is stopped, and refuses to force it', async () => {
    const before = await childrenOf(s, 'tick');
    expect((await call(s.socket, 'DELETE', '/v1/job/tick')).status).toBe(200);
    await nextLaunchIs(s, 'tick', undefined);
    await clock.advance(30 * MIN);
    expect(await childrenOf(s, 'tick')).toEqual(before);
    expect((await jobs(s)).find((j) => j.ID === 'tick')!.Status).toBe('dead');
    const forced = await call(s.socket, 'PUT', '/v1/job/tick/periodic/force');
    expect(forced.status).toBe(400);
    expect(forced.text).toContain("can't force run non-tracked job \"tick\"");
  });
});

describe('periodic jobs across agent restarts', () => {
  afterAll(cleanUp);

  it('makes up one missed launch after downtime, never one per missed launch, and never twice', async () => {
    const dir = freshDir();
    const first = await serve(dir, undefined, { api: { clock: new SimulatedClock(START, { fileCallWaitMs: 0 }) } });
    await register(first, periodicJob('daily', { Specs: ['*/5 * * * *'] }));
    await first.stop();
    // Down for an hour: eleven launches missed; one is made, at the restart.
    const later = START + 61 * MIN;
    const second = await serve(dir, undefined, { api: { clock: new SimulatedClock(later, { fileCallWaitMs: 0 }) } });
    expect(await childrenOf(second, 'daily')).toEqual([`daily/periodic-${at(later)}`]);
    expect(second.api.periodic.nextLaunchOf('daily')).toBe(START + 65 * MIN);
    await second.stop();
    // Back at once, before the next launch time: that launch is not made again.
    const third = await serve(dir, undefined, { api: { clock: new SimulatedClock(later + 1_000, { fileCallWaitMs: 0 }) } });
    expect(await childrenOf(third, 'daily')).toEqual([`daily/periodic-${at(later)}`]);
    await third.stop();
  });

  it('keeps an acknowledged forced launch across a restart and launches nothing for it again', async () => {
    const dir = freshDir();
    const first = await serve(dir, undefined, { api: { clock: new SimulatedClock(START + 30_000, { fileCallWaitMs: 0 }) } });
    await register(first, periodicJob('forced', { Specs: ['0 * * * *'] }));
    const res = await call(first.socket, 'PUT', '/v1/job/forced/periodic/force');
    expect(res.status, res.text).toBe(200);
    await first.stop();
    const second = await serve(dir, undefined, { api: { clock: new SimulatedClock(START + 40_000, { fileCallWaitMs: 0 }) } });
    expect(await childrenOf(second, 'forced')).toEqual([`forced/periodic-${at(START + 30_000)}`]);
    expect(second.api.periodic.nextLaunchOf('forced')).toBe(START + 60 * MIN);
    await until(async () => (await call(second.socket, 'GET', `/v1/job/${encodeURIComponent(`forced/periodic-${at(START + 30_000)}`)}/allocations`)).json() as unknown[], (a) => a.length === 1, 'the forced child\'s allocation');
  });
});
