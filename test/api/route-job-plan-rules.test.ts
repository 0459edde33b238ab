/**
 * `POST /v1/job/:id/plan` and `/v1/job/:id/evaluate` (src/api/routes/job-plan.ts), rule by rule, through one
 * served agent in process (mock tasks; each test its own job IDs): Nomad's JobPlanResponse and
 * JobRegisterResponse field by field, both methods, what each body may hold, and each refusal in its words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, runJob, type Served, SUITE_TIMEOUT, serveWithRoom } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

describe('plan', { timeout: SUITE_TIMEOUT }, () => {
  it.each(['PUT', 'POST'])('%s answers Nomad\'s JobPlanResponse: no diff unless asked, no evaluation, at the agent\'s index', async (method) => {
    const id = `planned-${method.toLowerCase()}`;
    const res = await call(s.socket, method, `/v1/job/${id}/plan`, mockJob(id));
    expect(res.status, res.text).toBe(200);
    const answer = res.json<Json>();
    expect(answer).toEqual({
      JobModifyIndex: 0, CreatedEvals: null, Diff: null,
      Annotations: { DesiredTGUpdates: { g: { Ignore: 0, Place: 1, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0 } }, PreemptedAllocs: null },
      FailedTGAllocs: null, NextPeriodicLaunch: '0001-01-01T00:00:00Z', Warnings: '', Index: answer['Index'],
    });
    expect((await call(s.socket, 'GET', `/v1/job/${id}`)).status).toBe(404);
  });

  it('answers at the index the agent is at: the newest write\'s', async () => {
    const reg = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('indexed'))).json<Json>();
    await waitForAllocs(s.socket, '/v1/job/indexed/allocations', (l) => l[0]?.ClientStatus === 'running');
    const jobs = await call(s.socket, 'GET', '/v1/allocations');
    const answer = (await call(s.socket, 'POST', '/v1/job/indexed/plan', mockJob('indexed'))).json<Json>();
    expect(answer['Index']).toBeGreaterThanOrEqual(Number(jobs.headers['x-nomad-index']));
    expect(answer['Index']).toBeGreaterThanOrEqual(reg['Index']);
    expect(answer['JobModifyIndex']).toBe(reg['JobModifyIndex']);
  });

  it('answers the groups that would not fit in FailedTGAllocs', async () => {
    const body = mockJob('huge');
    (body.Job.TaskGroups[0]!.Tasks[0] as Json)['Resources'] = { MemoryMB: 2_000_000 };
    const answer = (await call(s.socket, 'POST', '/v1/job/huge/plan', body)).json<Json>();
    expect(answer['FailedTGAllocs']).toMatchObject({ g: { DimensionExhausted: { memory: 1 } } });
    expect(answer['Annotations']['DesiredTGUpdates']['g']['Place']).toBe(1);
  });

  it('answers the loader\'s warnings', async () => {
    const body = mockJob('warned');
    Object.assign(body.Job.TaskGroups[0]!, { Spreads: [{ Attribute: '${node.datacenter}', Weight: 50 }] });
    const answer = (await call(s.socket, 'POST', '/v1/job/warned/plan', body)).json<Json>();
    expect(answer['Warnings']).not.toBe('');
  });

  it.each([
    ['a body without Job', {}, /Job/],
    ['an empty job ID', { Job: { ID: '' } }, /must not be empty/],
    ['a Diff that is not a boolean', { ...mockJob('p'), Diff: 'yes' }, /Diff/],
  ])('refuses %s with 400 naming it', async (_what, body, message) => {
    const res = await call(s.socket, 'POST', '/v1/job/p/plan', body);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(message);
  });

  it('refuses a body whose job is not the path\'s, in its words', async () => {
    const res = await call(s.socket, 'POST', '/v1/job/a/plan', mockJob('b'));
    expect([res.status, res.text]).toEqual([400, 'Job ID does not match: "b" in the body, "a" in the path']);
  });
});

describe('evaluate', { timeout: SUITE_TIMEOUT }, () => {
  it.each(['PUT', 'POST'])('%s answers Nomad\'s JobRegisterResponse, with or without a body', async (method) => {
    const id = `evaluated-${method.toLowerCase()}`;
    await runJob(s, mockJob(id));
    for (const body of [undefined, {}, { JobID: id }, { EvalOptions: { ForceReschedule: null } }]) {
      const res = await call(s.socket, method, `/v1/job/${id}/evaluate`, body);
      expect(res.status, res.text).toBe(200);
      const answer = res.json<Json>();
      expect(answer).toEqual({ EvalID: expect.stringMatching(/^[0-9a-f-]{36}$/), EvalCreateIndex: answer['Index'], JobModifyIndex: expect.any(Number), Warnings: '', Index: answer['Index'], KnownLeader: true, LastContact: 0 });
    }
  });

  it('refuses a body naming another job, in its words, and evaluates nothing', async () => {
    await runJob(s, mockJob('mine'));
    const before = s.api.registry.evalsIndex;
    const res = await call(s.socket, 'POST', '/v1/job/mine/evaluate', { JobID: 'theirs' });
    expect([res.status, res.text]).toEqual([400, 'JobID does not match: "theirs" in the body, "mine" in the path']);
    expect(s.api.registry.evalsIndex).toBe(before);
  });

  it('answers 404 "job not found" for an unknown job', async () => {
    const res = await call(s.socket, 'POST', '/v1/job/nobody/evaluate', {});
    expect([res.status, res.text]).toEqual([404, 'job not found']);
  });

  it('refuses options of the wrong kind with 400 naming them', async () => {
    await runJob(s, mockJob('typed'));
    const res = await call(s.socket, 'POST', '/v1/job/typed/evaluate', { EvalOptions: { ForceReschedule: 'yes' } });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/ForceReschedule/);
  });
});
