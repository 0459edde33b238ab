/**
 * The job routes (src/api/routes/jobs.ts), rule by rule, through a served agent in process (mock tasks):
 * registration by each method and path, the ID and EnforceIndex checks, parse and validate, the reads and
 * their blocking-query headers, versions, and stop and purge. Nomad's own answers are the reference
 * (command/agent/job_endpoint.go).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT } from './in-process-agent.ts';

afterEach(cleanUp);

const job = async (s: Served, id: string) => call(s.socket, 'GET', `/v1/job/${id}`);

describe('registering a job', { timeout: SUITE_TIMEOUT }, () => {
  it.each([
    ['PUT', '/v1/jobs'],
    ['POST', '/v1/jobs'],
    ['PUT', '/v1/job/web'],
    ['POST', '/v1/job/web'],
  ])('%s %s registers the job and answers its evaluation and indexes, as the leader', async (method, path) => {
    const s = await serve();
    const res = await call(s.socket, method, path, mockJob('web'));
    expect(res.status, res.text).toBe(200);
    const answer = res.json();
    expect(answer).toEqual({ EvalID: expect.stringMatching(/^[0-9a-f-]{36}$/), EvalCreateIndex: answer.Index, JobModifyIndex: answer.Index, Warnings: '', Index: answer.Index, KnownLeader: true, LastContact: 0 });
    expect(answer.Index).toBeGreaterThan(0);
    expect((await job(s, 'web')).json()).toMatchObject({ ID: 'web', Version: 0, JobModifyIndex: answer.Index });
    expect((await call(s.socket, 'GET', `/v1/evaluation/${answer.EvalID}`)).json()).toMatchObject({ JobID: 'web', TriggeredBy: 'job-register' });
  });

  it('refuses a body whose Job.ID is not the path\'s job, naming both, and registers neither', async () => {
    const s = await serve();
    const res = await call(s.socket, 'PUT', '/v1/job/one', mockJob('two'));
    expect([res.status, res.text]).toEqual([400, 'Job ID does not match name: "two" in the body, "one" in the path']);
    expect((await job(s, 'one')).status).toBe(404);
    expect((await job(s, 'two')).status).toBe(404);
  });

  it('refuses an invalid job with every problem, one a line, without file positions, and registers nothing', async () => {
    const s = await serve();
    const body = mockJob('bad');
    Object.assign(body.Job.TaskGroups[0]!.Tasks[0]!, { Driver: 'nosuch', KillTimeout: 'soon' });
    const res = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect(res.status).toBe(400);
    const lines = res.text.split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.some((l) => l.includes('nosuch'))).toBe(true);
    expect(lines.some((l) => /kill_?timeout/i.test(l))).toBe(true);
    for (const l of lines) expect(l).not.toMatch(/^\d+:\d+: /);
    expect((await job(s, 'bad')).status).toBe(404);
  });

  it('answers the loader\'s warnings as one text, without file positions', async () => {
    const s = await serve();
    const body = mockJob('warned');
    // A field the loader does not know is a warning, not an error.
    Object.assign(body.Job.TaskGroups[0]!, { Spreads: [{ Attribute: '${node.datacenter}', Weight: 50 }] });
    const res = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect(res.status, res.text).toBe(200);
    const warnings = res.json().Warnings as string;
    expect(warnings).not.toBe('');
    expect(warnings).not.toMatch(/^\d+:\d+: /m);
  });
});

describe('EnforceIndex', { timeout: SUITE_TIMEOUT }, () => {
  it('registers a new job at JobModifyIndex 0 (or none), and refuses any other index: the job does not exist', async () => {
    const s = await serve();
    const stale = await call(s.socket, 'PUT', '/v1/jobs', { ...mockJob('fresh'), EnforceIndex: true, JobModifyIndex: 5 });
    expect([stale.status, stale.text]).toEqual([400, 'Enforcing job modify index 5: job does not exist']);
    expect((await job(s, 'fresh')).status).toBe(404);
    expect((await call(s.socket, 'PUT', '/v1/jobs', { ...mockJob('fresh'), EnforceIndex: true })).status).toBe(200);
    expect((await call(s.socket, 'PUT', '/v1/jobs', { ...mockJob('other'), EnforceIndex: true, JobModifyIndex: 0 })).status).toBe(200);
  });

  it('updates an existing job only at its current JobModifyIndex, naming the current one otherwise', async () => {
    const s = await serve();
    const first = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'))).json<{ JobModifyIndex: number }>();
    const changed = mockJob('web', { t: { run_for: '2h' } });
    for (const given of [first.JobModifyIndex - 1, first.JobModifyIndex + 1]) {
      const res = await call(s.socket, 'PUT', '/v1/jobs', { ...changed, EnforceIndex: true, JobModifyIndex: given });
      expect([res.status, res.text]).toEqual([400, `Enforcing job modify index ${given}: job exists with conflicting job modify index: ${first.JobModifyIndex}`]);
    }
    // Index 0 means "only if it does not exist": Nomad says the job already exists, not which index it has.
    for (const zero of [{ EnforceIndex: true }, { EnforceIndex: true, JobModifyIndex: 0 }]) {
      const missing = await call(s.socket, 'PUT', '/v1/jobs', { ...changed, ...zero });
      expect([missing.status, missing.text]).toEqual([400, 'Enforcing job modify index 0: job already exists']);
    }
    expect((await job(s, 'web')).json().Version).toBe(0);
    const ok = await call(s.socket, 'PUT', '/v1/jobs', { ...changed, EnforceIndex: true, JobModifyIndex: first.JobModifyIndex });
    expect(ok.status, ok.text).toBe(200);
    expect((await job(s, 'web')).json().Version).toBe(1);
  });

  it('is not checked when EnforceIndex is false, whatever JobModifyIndex says', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    const res = await call(s.socket, 'PUT', '/v1/jobs', { ...mockJob('web', { t: { run_for: '2h' } }), EnforceIndex: false, JobModifyIndex: 12345 });
    expect(res.status, res.text).toBe(200);
    expect((await job(s, 'web')).json().Version).toBe(1);
  });
});

describe('parse and validate', { timeout: SUITE_TIMEOUT }, () => {
  const hcl = 'job "p" {\n  group "g" {\n    task "t" {\n      driver = "mock"\n      config {\n        run_for = "1h"\n      }\n    }\n  }\n}\n';

  it('POST /v1/jobs/parse answers the file\'s job as API JSON; with Canonicalize, with Nomad\'s defaults filled', async () => {
    const s = await serve();
    const plain = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: hcl });
    expect(plain.status, plain.text).toBe(200);
    expect(plain.json()).toMatchObject({ ID: 'p', Name: 'p', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' } }] }] });
    expect(plain.json().Region).toBeUndefined();
    const canonical = (await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true })).json();
    expect(canonical).toMatchObject({ ID: 'p', Region: 'global', Namespace: 'default', Type: 'service', Priority: 50 });
    expect((await job(s, 'p')).status).toBe(404);
  });

  it('POST /v1/jobs/parse refuses a file with its problems at their line and column', async () => {
    const s = await serve();
    const res = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: 'job "x" {\n  group "g" {\n    task "t" {\n      driver = "nosuch"\n    }\n  }\n}\n' });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/^4:\d+: .*nosuch/);
  });

  it('POST /v1/jobs/parse evaluates the job\'s variables with Variables (var-file content), ignoring undeclared names as Nomad\'s agent does', async () => {
    const s = await serve();
    const withVars = `variable "run_for" {\n  default = "1h"\n}\n${hcl.replace('"1h"', 'var.run_for')}`;
    const byDefault = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: withVars });
    expect(byDefault.json(), byDefault.text).toMatchObject({ TaskGroups: [{ Tasks: [{ Config: { run_for: '1h' } }] }] });
    const given = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: withVars, Variables: 'run_for = "5m"\nother = 1\n' });
    expect(given.json(), given.text).toMatchObject({ TaskGroups: [{ Tasks: [{ Config: { run_for: '5m' } }] }] });
    const hcl1 = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: hcl, HCLv1: true });
    expect(hcl1.status).toBe(400);
    expect(hcl1.text).toContain('HCLv1: allocrun parses job files as HCL2 only');
  });

  it.each(['PUT', 'POST'])('%s /v1/validate/job answers a valid job with no errors and its warnings, and registers nothing', async (method) => {
    const s = await serve();
    const res = await call(s.socket, method, '/v1/validate/job', mockJob('v'));
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toEqual({ DriverConfigValidated: true, ValidationErrors: [], Error: '', Warnings: '' });
    expect((await job(s, 'v')).status).toBe(404);
  });

  it('/v1/validate/job answers an invalid job with 200, each problem in ValidationErrors and all of them in Error', async () => {
    const s = await serve();
    const body = mockJob('v');
    Object.assign(body.Job.TaskGroups[0]!.Tasks[0]!, { Driver: 'nosuch', KillTimeout: 'soon' });
    const res = await call(s.socket, 'PUT', '/v1/validate/job', body);
    expect(res.status).toBe(200);
    const answer = res.json<{ DriverConfigValidated: boolean; ValidationErrors: string[]; Error: string; Warnings: string }>();
    expect(answer.DriverConfigValidated).toBe(false);
    expect(answer.ValidationErrors.length).toBeGreaterThanOrEqual(2);
    expect(answer.Error).toBe(answer.ValidationErrors.join('\n'));
    expect(answer.Warnings).toBe('');
    const registered = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect(registered.text.split('\n')).toEqual(answer.ValidationErrors);
  });
});

describe('reading jobs', { timeout: SUITE_TIMEOUT }, () => {
  // Every read of an unknown job, as Nomad answers it, is route-unknown-job-rules' table.
  it('answers 404 "job not found" for an unknown job\'s read, summary and stop, and "job versions not found" for its versions', async () => {
    const s = await serve();
    for (const [method, path, text] of [['GET', '/v1/job/nope', 'job not found'], ['GET', '/v1/job/nope/summary', 'job not found'], ['GET', '/v1/job/nope/versions', 'job versions not found'], ['DELETE', '/v1/job/nope', 'job not found']] as const) {
      const res = await call(s.socket, method, path);
      expect([method, path, res.status, res.text]).toEqual([method, path, 404, text]);
    }
  });

  it('answers a job, its summary and its versions at the job\'s index, with the leader headers', async () => {
    const s = await serve();
    await runJob(s, mockJob('web'));
    const jobRes = await job(s, 'web');
    const index = jobRes.json().ModifyIndex as number;
    expect(jobRes.headers).toMatchObject({ 'x-nomad-index': String(index), 'x-nomad-knownleader': 'true', 'x-nomad-lastcontact': '0' });
    const summary = await call(s.socket, 'GET', '/v1/job/web/summary');
    expect(Number(summary.headers['x-nomad-index'])).toBe(summary.json().ModifyIndex);
    expect(summary.json()).toMatchObject({ JobID: 'web', Summary: { g: { Running: 1 } } });
    const versions = await call(s.socket, 'GET', '/v1/job/web/versions');
    expect(versions.headers['x-nomad-index']).toBe(String(index));
  });

  it('lists versions newest first, each the job as it was, with the read\'s index and no diffs', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web', { t: { run_for: '2h' } }));
    const latest = (await job(s, 'web')).json();
    const res = (await call(s.socket, 'GET', '/v1/job/web/versions')).json();
    expect(res).toMatchObject({ Diffs: null, Index: latest.ModifyIndex, KnownLeader: true, LastContact: 0 });
    expect(res.Versions.map((v: { Version: number }) => v.Version)).toEqual([1, 0]);
    expect(res.Versions.map((v: { TaskGroups: { Tasks: { Config: { run_for: string } }[] }[] }) => v.TaskGroups[0]!.Tasks[0]!.Config.run_for)).toEqual(['2h', '1h']);
  });

  it('lists a job\'s allocations at the newest index of those allocations, not of another job\'s', async () => {
    const s = await serve();
    const web = await runJob(s, mockJob('web'));
    await runJob(s, mockJob('db'));
    const res = await call(s.socket, 'GET', '/v1/job/web/allocations');
    expect(res.json().map((a: { ID: string }) => a.ID)).toEqual([web.ID]);
    const full = (await call(s.socket, 'GET', `/v1/allocation/${web.ID}`)).json();
    expect(res.headers['x-nomad-index']).toBe(String(full.ModifyIndex));
    // A job without allocations answers at index 1, never 0 (Nomad's clients treat 0 as "no index").
    await call(s.socket, 'PUT', '/v1/jobs', { Job: { ...mockJob('none').Job, TaskGroups: [{ ...mockJob('none').Job.TaskGroups[0]!, Count: 0 }] } });
    const none = await call(s.socket, 'GET', '/v1/job/none/allocations');
    expect([none.json(), none.headers['x-nomad-index']]).toEqual([[], '1']);
  });

  it('lists jobs at the newest index of the jobs and their summaries, each stub with its summary as it is now', async () => {
    const s = await serve();
    // Listed once before the allocation runs: the stub made then must not be answered again after.
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web', { t: { run_for: '1h', start_block_for: '300ms' } }));
    expect((await call(s.socket, 'GET', '/v1/jobs')).json()[0].JobSummary.Summary.g.Running).toBe(0);
    await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l[0]?.ClientStatus === 'running');
    const res = await call(s.socket, 'GET', '/v1/jobs');
    const summary = (await call(s.socket, 'GET', '/v1/job/web/summary')).json();
    const jobIndex = (await job(s, 'web')).json().ModifyIndex as number;
    // The allocation's start moved the summary after the registration wrote the job.
    expect(summary.ModifyIndex).toBeGreaterThan(jobIndex);
    expect(res.headers['x-nomad-index']).toBe(String(summary.ModifyIndex));
    expect(res.json()).toMatchObject([{ ID: 'web', ModifyIndex: jobIndex, Status: 'running', JobSummary: { Summary: { g: { Running: 1 } } } }]);
  });
});

describe('stopping and purging a job', { timeout: SUITE_TIMEOUT }, () => {
  it('DELETE stops the job and answers its deregistration evaluation; the job stays readable', async () => {
    const s = await serve();
    await runJob(s, mockJob('web'));
    const res = await call(s.socket, 'DELETE', '/v1/job/web');
    expect(res.status, res.text).toBe(200);
    const answer = res.json();
    expect(answer).toEqual({ EvalID: expect.stringMatching(/^[0-9a-f-]{36}$/), EvalCreateIndex: answer.Index, JobModifyIndex: answer.Index, Warnings: '', Index: answer.Index });
    expect((await call(s.socket, 'GET', `/v1/evaluation/${answer.EvalID}`)).json()).toMatchObject({ TriggeredBy: 'job-deregister' });
    await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l[0]?.ClientStatus === 'complete');
    expect((await job(s, 'web')).json()).toMatchObject({ Stop: true, Status: 'dead' });
  });

  it('DELETE ?purge=true forgets the job; ?purge=false keeps it', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    expect((await call(s.socket, 'DELETE', '/v1/job/web?purge=false')).status).toBe(200);
    expect((await job(s, 'web')).status).toBe(200);
    expect((await call(s.socket, 'DELETE', '/v1/job/web?purge=true')).status).toBe(200);
    expect((await job(s, 'web')).status).toBe(404);
  });
});
