/**
 * `POST|PUT|GET /v1/job/:id/scale` on one in-process agent, as Nomad's Job.Scale and Job.ScaleStatus behave: a new
 * count is the job's next version, evaluated `job-scaling`, its allocations placed or stopped; every refusal in
 * Nomad's words with nothing written; a report without a count only records its event; events kept newest first,
 * 20 per group, across a restart, deleted with the job (purge, the server's collector); a damaged record named.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, getOk, mockJob, serve, serveWithRoom, SUITE_TIMEOUT, until, type Served } from './in-process-agent.ts';
import { scalingEventsKey } from '../../src/api/scaling-events.ts';

type Json = Record<string, any>;

/** A service job of one group `g` of mock tasks, `count` of them, with the given group fields. */
const job = (id: string, count: number, group: Json = {}, extra: Json = {}) => {
  const body = mockJob(id, { t: { run_for: '1h' } }, extra);
  Object.assign(body.Job.TaskGroups[0]!, { Count: count, ...group });
  return body;
};
const scaling = (min: number, max: number) => ({ Scaling: { Min: min, Max: max, Enabled: true } });

describe('job scale', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  const scale = (id: string, body: Json) => call(s.socket, 'POST', `/v1/job/${encodeURIComponent(id)}/scale`, body);
  const scaled = async (id: string, body: Json) => {
    const res = await scale(id, body);
    expect(res.status, res.text).toBe(200);
    return res.json<Json>();
  };
  const put = async (body: unknown) => {
    const res = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect(res.status, res.text).toBe(200);
  };
  const live = (id: string) => async () => (await getOk<Alloc[]>(s, `/v1/job/${id}/allocations`)).filter((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running');

  beforeAll(async () => {
    s = await serveWithRoom();
  });
  afterAll(cleanUp);

  it('sets the group count as the next version, evaluated job-scaling, and places what it adds', async () => {
    await put(job('up', 1, scaling(1, 5)));
    await waitForAllocs(s.socket, '/v1/job/up/allocations', (l) => l.length === 1 && l[0]!.ClientStatus === 'running');
    const res = await scaled('up', { Count: 3, Target: { Group: 'g' }, Message: 'more', Meta: { by: 'test' } });
    expect(res).toMatchObject({ EvalID: expect.any(String), JobModifyIndex: expect.any(Number), Warnings: '' });
    expect(res['EvalCreateIndex']).toBe(res['JobModifyIndex']);
    // The event is written after the job, and answered once durable: its index is the answer's.
    expect(res['Index']).toBeGreaterThan(res['JobModifyIndex']);
    const now = await getOk(s, '/v1/job/up');
    expect([now['Version'], now['TaskGroups'][0]['Count']]).toEqual([1, 3]);
    const evaluation = await getOk(s, `/v1/evaluation/${res['EvalID']}`);
    expect([evaluation['TriggeredBy'], evaluation['JobModifyIndex']]).toEqual(['job-scaling', res['JobModifyIndex']]);
    await until(live('up'), (l) => l.length === 3, 'three running allocations');
    const status = await getOk(s, '/v1/job/up/scale');
    expect(status).toMatchObject({ JobID: 'up', Namespace: 'default', JobStopped: false, JobModifyIndex: res['JobModifyIndex'] });
    expect(status['TaskGroups']['g']).toMatchObject({ Desired: 3, Placed: 3, Running: 3, Healthy: 0, Unhealthy: 0 });
    expect(status['TaskGroups']['g']['Events']).toEqual([
      { Time: expect.any(Number), Count: 3, PreviousCount: 1, Message: 'more', Error: false, Meta: { by: 'test' }, EvalID: res['EvalID'], CreateIndex: res['Index'] },
    ]);
  });

  it('stops what a lower count leaves over', async () => {
    await put(job('down', 3));
    await until(live('down'), (l) => l.length === 3, 'three running allocations');
    await scaled('down', { Count: 1, Target: { Group: 'g' } });
    await until(live('down'), (l) => l.length === 1, 'one running allocation');
    expect((await getOk(s, '/v1/job/down/scale'))['TaskGroups']['g']).toMatchObject({ Desired: 1, Placed: 1, Running: 1 });
  });

  it.each([
    ['no group', { Count: 2 }, 400, 'missing task group name for scaling action'],
    ['a negative count', { Count: -1, Target: { Group: 'g' } }, 400, "scaling action count can't be negative"],
    ['a count beside an error', { Count: 2, Error: true, Target: { Group: 'g' } }, 400, 'scaling action should not contain count if error is true'],
    ['another job in the payload', { Count: 2, Target: { Group: 'g', Job: 'other' } }, 400, 'job ID in payload did not match URL'],
    ['another namespace in the payload', { Count: 2, Target: { Group: 'g', Namespace: 'prod' } }, 400, 'namespace in payload did not match header'],
    ['an unknown group', { Count: 2, Target: { Group: 'nope' } }, 400, 'task group "nope" specified for scaling does not exist in job'],
    ['a count under the policy', { Count: 1, Target: { Group: 'g' } }, 400, 'group count was less than scaling policy minimum: 1 < 2'],
    ['a count over the policy', { Count: 5, Target: { Group: 'g' } }, 400, 'group count was greater than scaling policy maximum: 5 > 4'],
    ['a stale job modify index', { Count: 3, Target: { Group: 'g' }, JobModifyIndex: 1 }, 400, 'job exists with conflicting job modify index'],
  ])('refuses %s in Nomad\'s words, writing nothing', async (_what, body, status, message) => {
    await put(job('bounded', 2, scaling(2, 4)));
    // What a write would move (the allocations' own states move as they start, so they are not compared).
    const written = async () => {
      const { JobModifyIndex, TaskGroups } = await getOk(s, '/v1/job/bounded/scale');
      return { JobModifyIndex, desired: TaskGroups['g']['Desired'], events: TaskGroups['g']['Events'], evals: (await getOk(s, '/v1/job/bounded/evaluations')).length };
    };
    const before = await written();
    const res = await scale('bounded', body);
    expect([res.status, res.text]).toEqual([status, expect.stringContaining(message)]);
    expect(await written()).toEqual(before);
  });

  it('answers 404 for a job it does not have, and for its status', async () => {
    expect((await scale('ghost', { Count: 1, Target: { Group: 'g' } })).status).toBe(404);
    expect((await call(s.socket, 'GET', '/v1/job/ghost/scale')).status).toBe(404);
  });

  it('does not start a stopped job by scaling it', async () => {
    await put(job('halted', 1));
    expect((await call(s.socket, 'DELETE', '/v1/job/halted')).status).toBe(200);
    const res = await scale('halted', { Count: 2, Target: { Group: 'g' } });
    expect([res.status, res.text]).toEqual([400, 'job "halted" is stopped: register it again (job run) to start it, then scale it']);
    expect(await getOk(s, '/v1/job/halted')).toMatchObject({ Stop: true, Version: 1 });
    expect((await getOk(s, '/v1/job/halted/scale'))['JobStopped']).toBe(true);
  });

  it('scales a system job to 1 or 0 only', async () => {
    await put(job('sys', 1, {}, { Type: 'system' }));
    const res = await scale('sys', { Count: 2, Target: { Group: 'g' } });
    expect([res.status, res.text]).toEqual([400, expect.stringContaining('jobs of type "system" can only be scaled to 1 or 0')]);
  });

  it('records a report without a count (an autoscaler\'s error) and changes nothing else', async () => {
    await put(job('report', 1));
    const before = await getOk(s, '/v1/job/report');
    const res = await scaled('report', { Error: true, Message: 'metrics unavailable', Target: { Group: 'g' } });
    expect(res).toMatchObject({ EvalID: '', EvalCreateIndex: 0, JobModifyIndex: before['JobModifyIndex'] });
    expect((await getOk(s, '/v1/job/report'))['Version']).toBe(before['Version']);
    expect((await getOk(s, '/v1/job/report/evaluations')).length).toBe(1);
    expect((await getOk(s, '/v1/job/report/scale'))['TaskGroups']['g']['Events']).toEqual([
      expect.objectContaining({ Count: null, PreviousCount: 1, Error: true, Message: 'metrics unavailable', EvalID: null }),
    ]);
  });

  it('evaluates an unchanged count without a new version, as Nomad does', async () => {
    await put(job('same', 2));
    const res = await scaled('same', { Count: 2, Target: { Group: 'g' } });
    expect(res['EvalID']).not.toBe('');
    expect((await getOk(s, '/v1/job/same'))['Version']).toBe(0);
    expect((await getOk(s, `/v1/evaluation/${res['EvalID']}`))['TriggeredBy']).toBe('job-scaling');
  });

  it('keeps the newest 20 events per group, newest first', async () => {
    await put(job('many', 1, scaling(0, 30)));
    for (let i = 1; i <= 22; i++) await scaled('many', { Error: true, Message: `report ${i}`, Target: { Group: 'g' } });
    const events = (await getOk(s, '/v1/job/many/scale'))['TaskGroups']['g']['Events'] as Json[];
    expect(events.map((e) => e['Message'])).toEqual(Array.from({ length: 20 }, (_, i) => `report ${22 - i}`));
  });

  it('refuses while the job\'s deployment runs, and scales once it is done', async () => {
    // Healthy only after an hour: the deployment stays running.
    const update = { Update: { MaxParallel: 1, MinHealthyTime: 3600e9, HealthyDeadline: 7200e9, ProgressDeadline: 0 } };
    await put(job('deploying', 1, update));
    const res = await scale('deploying', { Count: 2, Target: { Group: 'g' } });
    expect([res.status, res.text]).toEqual([400, 'job scaling blocked due to active deployment']);
    const d = await getOk(s, '/v1/job/deploying/deployment');
    expect((await call(s.socket, 'POST', `/v1/deployment/fail/${d['ID']}`, {})).status).toBe(200);
    const done = await scaled('deploying', { Count: 2, Target: { Group: 'g' } });
    // The scale's evaluation starts the new version's deployment, as a registration's does.
    const evaluation = await getOk(s, `/v1/evaluation/${done['EvalID']}`);
    expect(evaluation['DeploymentID']).toBe((await getOk(s, '/v1/job/deploying/deployment'))['ID']);
    expect(evaluation['DeploymentID']).not.toBe(d['ID']);
  });

  it('answers a blocking read once an event moves its index', async () => {
    await put(job('watched', 1));
    const res = await call(s.socket, 'GET', '/v1/job/watched/scale');
    const index = Number(res.headers['x-nomad-index']);
    const waiting = call(s.socket, 'GET', `/v1/job/watched/scale?index=${index}&wait=20s`);
    await scaled('watched', { Error: true, Message: 'woke', Target: { Group: 'g' } });
    const woke = await waiting;
    expect(Number(woke.headers['x-nomad-index'])).toBeGreaterThan(index);
    expect(woke.json<Json>()['TaskGroups']['g']['Events'][0]['Message']).toBe('woke');
  });
});

describe('scaling events across restarts', { timeout: SUITE_TIMEOUT }, () => {
  afterAll(cleanUp);

  it('keeps them across an agent restart, and not for a job purged and registered again', async () => {
    let s = await serve();
    const put = async (body: unknown) => expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    await put(job('kept', 1));
    expect((await call(s.socket, 'POST', '/v1/job/kept/scale', { Error: true, Message: 'before', Target: { Group: 'g' } })).status).toBe(200);
    await s.stop();
    s = await serve(s.dataDir);
    expect((await getOk(s, '/v1/job/kept/scale'))['TaskGroups']['g']['Events']).toEqual([expect.objectContaining({ Message: 'before' })]);
    expect((await call(s.socket, 'DELETE', '/v1/job/kept?purge=true')).status).toBe(200);
    await put(job('kept', 1));
    expect((await getOk(s, '/v1/job/kept/scale'))['TaskGroups']['g']['Events']).toBeNull();
    await s.stop();
  });

  it('deletes the record with the job: in the purge\'s commit, and with a job the server\'s collector takes', async () => {
    const s = await serveWithRoom();
    const put = async (body: unknown) => expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    const report = async (id: string) => expect((await call(s.socket, 'POST', `/v1/job/${id}/scale`, { Error: true, Message: 'note', Target: { Group: 'g' } })).status).toBe(200);
    await put(job('purged', 1));
    await report('purged');
    expect(s.store.get('meta', scalingEventsKey('purged'))).toMatchObject({ groups: { g: [expect.objectContaining({ Message: 'note' })] } });
    expect((await call(s.socket, 'DELETE', '/v1/job/purged?purge=true')).status).toBe(200);
    expect(s.store.get('meta', scalingEventsKey('purged'))).toBeUndefined();
    await put(job('collected', 1));
    await report('collected');
    expect((await call(s.socket, 'DELETE', '/v1/job/collected')).status).toBe(200);
    // The collector takes a stopped job once its allocations are done.
    await waitForAllocs(s.socket, '/v1/job/collected/allocations', (l) => l.length === 1 && l[0]!.ClientStatus === 'complete');
    expect(s.store.get('meta', scalingEventsKey('collected'))).toBeDefined();
    expect((await call(s.socket, 'PUT', '/v1/system/gc')).status).toBe(200);
    expect((await call(s.socket, 'GET', '/v1/job/collected')).status).toBe(404);
    expect(s.store.get('meta', scalingEventsKey('collected'))).toBeUndefined();
    await s.stop();
  });

  it('answers 500 naming a damaged record, never reading it as none', async () => {
    const s = await serve();
    expect((await call(s.socket, 'PUT', '/v1/jobs', job('hurt', 1))).status).toBe(200);
    await s.store.commit((tx) => tx.put('meta', 'jobs.scaling/hurt', { groups: 'lost' }));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const res = await call(s.socket, 'GET', '/v1/job/hurt/scale');
    stderr.mockRestore();
    expect([res.status, res.text]).toEqual([500, expect.stringContaining('meta/jobs.scaling/hurt: expected { jobCreateIndex, modifyIndex, groups: { group: [ScalingEvent] } }')]);
    await s.stop();
  });
});
