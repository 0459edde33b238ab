/**
 * Issue 26: the calls Nomad's clients make on a one-node cluster beyond jobs and allocations, in process over
 * the agent's socket: members and servers, namespaces, `job plan` (diff and per-group annotations, planned as
 * registration plans, never written), `job eval`, and deployments read from the allocations' health.
 */
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { call, stream, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, runJob, serve, until } from './in-process-agent.ts';

afterEach(cleanUp);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('members, servers and namespaces', { timeout: 60_000 }, () => {
  it('answers the agent as the one member and the one server', async () => {
    const s = await serve();
    const members = (await call(s.socket, 'GET', '/v1/agent/members')).json();
    expect(members).toMatchObject({ ServerName: hostname(), ServerRegion: 'global', ServerDC: 'dc1' });
    expect(members.Members).toHaveLength(1);
    expect(members.Members[0]).toMatchObject({ Name: `${hostname()}.global`, Status: 'alive', Tags: { region: 'global', dc: 'dc1', role: 'nomad', id: s.store.get('meta', 'nodeId') } });
    expect((await call(s.socket, 'GET', '/v1/agent/servers')).json()).toEqual([s.api.socketPath]);
    // `nomad node status -self` finds its node here.
    expect((await call(s.socket, 'GET', '/v1/agent/self')).json().stats.client.node_id).toBe(s.store.get('meta', 'nodeId'));
  });

  it('lists default and every namespace a job was registered in, and 404s an unknown one', async () => {
    const s = await serve();
    expect((await call(s.socket, 'GET', '/v1/namespaces')).json().map((n: Json) => n.Name)).toEqual(['default']);
    await runJob(s, mockJob('a', undefined, { Namespace: 'ops' }));
    const list = (await call(s.socket, 'GET', '/v1/namespaces')).json();
    expect(list.map((n: Json) => n.Name)).toEqual(['default', 'ops']);
    expect(list[0].Description).toBe('Default shared namespace');
    expect((await call(s.socket, 'GET', '/v1/namespace/ops')).json()).toMatchObject({ Name: 'ops', Quota: '' });
    const missing = await call(s.socket, 'GET', '/v1/namespace/nope');
    expect([missing.status, missing.text]).toEqual([404, 'namespace not found']);
  });
});

describe('job plan', { timeout: 60_000 }, () => {
  const plan = async (s: Awaited<ReturnType<typeof serve>>, body: ReturnType<typeof mockJob>) => {
    const res = await call(s.socket, 'POST', `/v1/job/${body.Job.ID}/plan`, { ...body, Diff: true });
    expect(res.status, res.text).toBe(200);
    return res.json();
  };
  const withCount = (body: ReturnType<typeof mockJob>, count: number) => ({ Job: { ...body.Job, TaskGroups: [{ ...body.Job.TaskGroups[0]!, Count: count }] } });

  it('plans a new job as Added with every instance placed, and writes nothing', async () => {
    const s = await serve();
    const before = (await call(s.socket, 'GET', '/v1/jobs')).headers['x-nomad-index'];
    const p = await plan(s, withCount(mockJob('new'), 2));
    expect(p.Annotations.DesiredTGUpdates).toEqual({ g: { Ignore: 0, Place: 2, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0 } });
    expect(p.Diff).toMatchObject({ Type: 'Added', ID: 'new', TaskGroups: [{ Type: 'Added', Name: 'g', Updates: { create: 2 }, Tasks: [{ Type: 'Added', Name: 't', Annotations: ['forces create'] }] }] });
    expect(p.JobModifyIndex).toBe(0);
    expect((await call(s.socket, 'GET', '/v1/job/new')).status).toBe(404);
    expect((await call(s.socket, 'GET', '/v1/evaluations')).json()).toEqual([]);
    expect((await call(s.socket, 'GET', '/v1/jobs')).headers['x-nomad-index']).toBe(before);
    expect(s.agent.list()).toEqual([]);
  });

  it('plans the job read back unchanged as None, every allocation ignored', async () => {
    const s = await serve();
    await runJob(s, mockJob('same'));
    const read = (await call(s.socket, 'GET', '/v1/job/same')).json();
    const p = await plan(s, { Job: read } as ReturnType<typeof mockJob>);
    expect(p.Diff.Type).toBe('None');
    expect(p.Annotations.DesiredTGUpdates.g).toMatchObject({ Ignore: 1, Place: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0 });
    expect(p.JobModifyIndex).toBe(read.JobModifyIndex);
  });

  it('plans a count change: the new instances placed, the field Edited with old and new values', async () => {
    const s = await serve();
    await runJob(s, mockJob('grow'));
    const p = await plan(s, withCount(mockJob('grow'), 3));
    expect(p.Annotations.DesiredTGUpdates.g).toMatchObject({ Ignore: 1, Place: 2 });
    expect(p.Diff.Type).toBe('Edited');
    // Nomad's annotateCountChange: a growing count forces creates, a shrinking one destroys.
    expect(p.Diff.TaskGroups[0].Fields).toEqual([{ Type: 'Edited', Name: 'Count', Old: '1', New: '3', Annotations: ['forces create'] }]);
    const shrink = await plan(s, withCount(mockJob('grow'), 0));
    expect(shrink.Annotations.DesiredTGUpdates.g).toMatchObject({ Stop: 1, Ignore: 0 });
    expect(shrink.Diff.TaskGroups[0].Fields).toEqual([{ Type: 'Edited', Name: 'Count', Old: '1', New: '0', Annotations: ['forces destroy'] }]);
  });

  it('plans a meta change as destructive and a kill timeout change in place, as registration then does', async () => {
    const s = await serve();
    const first = await runJob(s, mockJob('upd', undefined, { Meta: { tag: 'a' } }));
    const meta = await plan(s, mockJob('upd', undefined, { Meta: { tag: 'b' } }));
    expect(meta.Annotations.DesiredTGUpdates.g).toMatchObject({ DestructiveUpdate: 1, Ignore: 0 });
    expect(meta.Diff.Fields).toEqual([{ Type: 'Edited', Name: 'Meta[tag]', Old: 'a', New: 'b', Annotations: null }]);
    expect(meta.Diff.TaskGroups[0].Updates).toEqual({ 'create/destroy update': 1 });

    const timeout = mockJob('upd', undefined, { Meta: { tag: 'a' } });
    (timeout.Job.TaskGroups[0]!.Tasks[0] as Json).KillTimeout = 9e9;
    const inPlace = await plan(s, timeout);
    expect(inPlace.Annotations.DesiredTGUpdates.g).toMatchObject({ InPlaceUpdate: 1, DestructiveUpdate: 0 });
    expect(inPlace.Diff.TaskGroups[0].Tasks[0]).toMatchObject({ Type: 'Edited', Annotations: ['forces in-place update'], Fields: [{ Name: 'KillTimeout', Old: '5000000000', New: '9000000000' }] });

    // What the plan said is what registration does: the meta change replaces the allocation.
    expect((await call(s.socket, 'PUT', '/v1/jobs', mockJob('upd', undefined, { Meta: { tag: 'b' } }))).status).toBe(200);
    const allocs = await waitForAllocs(s.socket, '/v1/job/upd/allocations', (l) => l.some((a) => a.ID !== first.ID && a.ClientStatus === 'running'));
    expect(allocs.find((a) => a.ID !== first.ID)).toMatchObject({ PreviousAllocation: first.ID });
  });

  it('refuses a body whose job is not the one in the path, and an invalid job, naming the field', async () => {
    const s = await serve();
    const other = await call(s.socket, 'POST', '/v1/job/a/plan', mockJob('b'));
    expect(other.status).toBe(400);
    expect(other.text).toContain('"b" in the body, "a" in the path');
    const bad = mockJob('a');
    (bad.Job.TaskGroups[0]!.Tasks[0] as Json).Driver = 'nope';
    const invalid = await call(s.socket, 'POST', '/v1/job/a/plan', bad);
    expect(invalid.status).toBe(400);
    expect(invalid.text).toMatch(/driver/);
  });
});

describe('job evaluate', { timeout: 60_000 }, () => {
  it('records a new evaluation of the job and changes nothing when nothing is missing', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('ev'));
    const res = await call(s.socket, 'POST', '/v1/job/ev/evaluate', { JobID: 'ev', EvalOptions: { ForceReschedule: false } });
    expect(res.status, res.text).toBe(200);
    const { EvalID, EvalCreateIndex } = res.json();
    expect((await call(s.socket, 'GET', `/v1/evaluation/${EvalID}`)).json()).toMatchObject({ ID: EvalID, JobID: 'ev', TriggeredBy: 'job-register', Status: 'complete', CreateIndex: EvalCreateIndex });
    expect(s.store.get('evals', EvalID)).toMatchObject({ ID: EvalID });
    expect((await call(s.socket, 'GET', '/v1/job/ev/allocations')).json().map((a: Alloc) => a.ID)).toEqual([alloc.ID]);
    expect((await call(s.socket, 'POST', '/v1/job/nope/evaluate')).status).toBe(404);
  });

  it('with ForceReschedule replaces a failed allocation; without, leaves it', async () => {
    const s = await serve();
    const body = mockJob('fails', { t: { run_for: '10ms', exit_code: 1 } });
    (body.Job.TaskGroups[0] as Json).RestartPolicy = { Attempts: 0, Mode: 'fail' };
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    const [failed] = await waitForAllocs(s.socket, '/v1/job/fails/allocations', (l) => l.length === 1 && l[0]!.ClientStatus === 'failed');
    expect((await call(s.socket, 'POST', '/v1/job/fails/evaluate', {})).status).toBe(200);
    expect((await call(s.socket, 'GET', '/v1/job/fails/allocations')).json()).toHaveLength(1);
    expect((await call(s.socket, 'POST', '/v1/job/fails/evaluate', { EvalOptions: { ForceReschedule: true } })).status).toBe(200);
    const allocs = (await call(s.socket, 'GET', '/v1/job/fails/allocations')).json<Alloc[]>();
    expect(allocs).toHaveLength(2);
    expect(allocs.find((a) => a.ID !== failed!.ID)).toMatchObject({ PreviousAllocation: failed!.ID });
    expect(allocs.find((a) => a.ID === failed!.ID)).toMatchObject({ DesiredStatus: 'stop' });
  });
});

describe('deployments', { timeout: 60_000 }, () => {
  const deployed = (id: string, minHealthy: number, meta = 'a') => {
    const body = mockJob(id, undefined, { Meta: { tag: meta } });
    (body.Job.TaskGroups[0] as Json).Update = { MinHealthyTime: minHealthy, HealthyDeadline: 300e9 };
    return body;
  };

  it('a service job with an update block has a deployment that runs until its allocation is healthy, then succeeds', async () => {
    const s = await serve();
    expect((await call(s.socket, 'PUT', '/v1/jobs', deployed('d', 300e6))).status).toBe(200);
    const first = (await call(s.socket, 'GET', '/v1/job/d/deployment')).json();
    expect(first).toMatchObject({ JobID: 'd', JobVersion: 0, Namespace: 'default', TaskGroups: { g: { DesiredTotal: 1 } } });
    expect(['running', 'successful']).toContain(first.Status);
    const done = await until(async () => (await call(s.socket, 'GET', '/v1/job/d/deployment')).json(), (d) => d.Status === 'successful', 'the deployment to succeed');
    expect(done).toMatchObject({ ID: first.ID, StatusDescription: 'Deployment completed successfully', TaskGroups: { g: { PlacedAllocs: 1, HealthyAllocs: 1, UnhealthyAllocs: 0 } } });
    expect((await call(s.socket, 'GET', `/v1/deployment/${first.ID}`)).json().ID).toBe(first.ID);
    expect((await call(s.socket, 'GET', `/v1/deployment/${first.ID.slice(0, 8)}`)).json().ID).toBe(first.ID);
    expect((await call(s.socket, 'GET', '/v1/deployments')).json().map((d: Json) => d.ID)).toEqual([first.ID]);
    const allocs = (await call(s.socket, 'GET', `/v1/deployment/allocations/${first.ID}`)).json();
    expect(allocs).toHaveLength(1);

    // A new version is a new deployment; the old one keeps its outcome.
    expect((await call(s.socket, 'PUT', '/v1/jobs', deployed('d', 300e6, 'b'))).status).toBe(200);
    const list = (await call(s.socket, 'GET', '/v1/job/d/deployments')).json();
    expect(list.map((d: Json) => d.JobVersion)).toEqual([1, 0]);
    expect(list[1].Status).toBe('successful');
    expect(list[0].ID).not.toBe(first.ID);
  });

  it('a job without an update block has no deployment (null, as Nomad answers)', async () => {
    const s = await serve();
    await runJob(s, mockJob('plain'));
    const res = await call(s.socket, 'GET', '/v1/job/plain/deployment');
    expect([res.status, res.text]).toEqual([200, 'null']);
    expect((await call(s.socket, 'GET', '/v1/job/plain/deployments')).json()).toEqual([]);
    expect((await call(s.socket, 'GET', '/v1/deployment/00000000')).status).toBe(404);
  });

  it('fail marks a running deployment failed, durably; a terminal one cannot be failed; promote has no canaries', async () => {
    const dir = freshDir();
    const s = await serve(dir);
    expect((await call(s.socket, 'PUT', '/v1/jobs', deployed('slow', 200e9))).status).toBe(200);
    const d = (await call(s.socket, 'GET', '/v1/job/slow/deployment')).json();
    expect(d.Status).toBe('running');
    const promote = await call(s.socket, 'POST', `/v1/deployment/promote/${d.ID}`, {});
    expect([promote.status, promote.text]).toEqual([400, 'no canaries to promote']);
    const fail = await call(s.socket, 'POST', `/v1/deployment/fail/${d.ID}`, {});
    expect(fail.status, fail.text).toBe(200);
    expect(fail.json().DeploymentModifyIndex).toBeGreaterThan(d.ModifyIndex);
    expect((await call(s.socket, 'GET', `/v1/deployment/${d.ID}`)).json()).toMatchObject({ Status: 'failed', StatusDescription: 'Deployment marked as failed' });
    const again = await call(s.socket, 'POST', `/v1/deployment/fail/${d.ID}`, {});
    expect([again.status, again.text]).toEqual([400, "can't fail terminal deployment"]);
    await s.stop();
    const restarted = await serve(dir);
    expect((await call(restarted.socket, 'GET', `/v1/deployment/${d.ID}`)).json().Status).toBe('failed');
  });
});

describe('event stream topics Evaluation, Node and Deployment', { timeout: 60_000 }, () => {
  const events = (text: string) => text.split('\n').filter((l) => l.startsWith('{"Index"')).flatMap((l) => JSON.parse(l).Events as Json[]);

  it('publishes each write\'s evaluation, and the node\'s registration to a stream from an early index', async () => {
    const s = await serve();
    const st = await stream(s.socket, '/v1/event/stream?topic=Evaluation&topic=Node&index=1');
    const res = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('ev'))).json();
    await st.until((t) => events(t).some((e) => e.Topic === 'Evaluation'));
    st.close();
    const seen = events(st.text());
    expect(seen.find((e) => e.Topic === 'Evaluation')).toMatchObject({ Type: 'EvaluationUpdated', Key: res.EvalID, FilterKeys: ['ev'], Index: res.EvalCreateIndex, Payload: { Evaluation: { ID: res.EvalID, JobID: 'ev', TriggeredBy: 'job-register' } } });
    expect(seen.find((e) => e.Topic === 'Node')).toMatchObject({ Type: 'NodeRegistration', Key: s.store.get('meta', 'nodeId'), Payload: { Node: { Status: 'ready' } } });
    expect(seen.every((e) => e.Topic === 'Evaluation' || e.Topic === 'Node')).toBe(true);
  });

  it('publishes a deployment as it starts, as its allocations turn healthy and as it succeeds', async () => {
    const s = await serve();
    const st = await stream(s.socket, '/v1/event/stream?topic=Deployment');
    const body = mockJob('dep');
    (body.Job.TaskGroups[0] as Json).Update = { MinHealthyTime: 200e6, HealthyDeadline: 300e9 };
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    await st.until((t) => events(t).some((e) => e.Payload.Deployment.Status === 'successful'));
    st.close();
    const seen = events(st.text());
    expect(seen[0]).toMatchObject({ Topic: 'Deployment', Type: 'DeploymentStatusUpdate', FilterKeys: ['dep'], Payload: { Deployment: { JobID: 'dep', Status: 'running' } } });
    expect(seen.at(-1)).toMatchObject({ Type: 'DeploymentStatusUpdate', Payload: { Deployment: { Status: 'successful', TaskGroups: { g: { HealthyAllocs: 1 } } } } });
    expect(new Set(seen.map((e) => e.Key)).size).toBe(1);
    const indexes = seen.map((e) => e.Index as number);
    expect([...indexes].sort((a, b) => a - b)).toEqual(indexes);
  });

  it('refuses an unknown topic, naming those it publishes', async () => {
    const s = await serve();
    const res = await call(s.socket, 'GET', '/v1/event/stream?topic=Bogus');
    expect([res.status, res.text]).toEqual([400, 'unknown topic "Bogus": this agent publishes Job, Allocation, Evaluation, Deployment, Node, Variables and Service']);
  });
});

describe("nomad job run's monitor over HTTP", { timeout: 60_000 }, () => {
  /** A blocking read of `path` until `done` holds, as Nomad's monitor polls: each query waits on the last index. */
  const watch = async (s: Awaited<ReturnType<typeof serve>>, path: string, done: (body: Json) => boolean): Promise<Json> => {
    let index = 0;
    for (let i = 0; i < 100; i++) {
      const res = await call(s.socket, 'GET', `${path}?index=${index}&wait=5s`);
      expect(res.status, res.text).toBe(200);
      const body = res.json();
      if (done(body)) return body;
      index = Number(res.headers['x-nomad-index']);
    }
    throw new Error(`${path} never got where it was going`);
  };

  it('follows register → evaluation → its allocations → the deployment until it succeeds', async () => {
    const s = await serve();
    const body = mockJob('mon', undefined, { Meta: { v: '1' } });
    (body.Job.TaskGroups[0] as Json).Update = { MinHealthyTime: 200e6, HealthyDeadline: 300e9 };
    const { EvalID } = (await call(s.socket, 'PUT', '/v1/jobs', body)).json();
    const evaluation = await watch(s, `/v1/evaluation/${EvalID}`, (e) => e.Status === 'complete');
    expect(evaluation).toMatchObject({ ID: EvalID, JobID: 'mon', TriggeredBy: 'job-register', QueuedAllocations: { g: 0 }, FailedTGAllocs: null, BlockedEval: '' });
    expect(evaluation.DeploymentID).toMatch(/^[0-9a-f-]{36}$/);
    const allocs = (await call(s.socket, 'GET', `/v1/evaluation/${EvalID}/allocations`)).json();
    expect(allocs).toHaveLength(1);
    expect(allocs[0]).toMatchObject({ EvalID, JobID: 'mon', TaskGroup: 'g', NodeID: s.store.get('meta', 'nodeId') });
    const deployment = await watch(s, `/v1/deployment/${evaluation.DeploymentID}`, (d) => d.Status !== 'running');
    expect(deployment).toMatchObject({ ID: evaluation.DeploymentID, JobID: 'mon', Status: 'successful', TaskGroups: { g: { DesiredTotal: 1, HealthyAllocs: 1 } } });
    const placed = (await call(s.socket, 'GET', `/v1/deployment/allocations/${deployment.ID}`)).json();
    expect(placed).toEqual([expect.objectContaining({ ID: allocs[0].ID, DeploymentStatus: expect.objectContaining({ Healthy: true }) })]);
  });

  it('ends at the allocations for a job without an update block: its evaluation has no deployment', async () => {
    const s = await serve();
    const { EvalID } = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('batchless'))).json();
    expect((await call(s.socket, 'GET', `/v1/evaluation/${EvalID}`)).json()).toMatchObject({ Status: 'complete', DeploymentID: '' });
    expect((await call(s.socket, 'GET', `/v1/evaluation/${EvalID}/allocations`)).json()).toHaveLength(1);
  });
});
