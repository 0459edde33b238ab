/**
 * Blocking list queries answered from one shared build per index (issue 26, point 8), against an agent over
 * its socket: watchers of one list get the same answer, each with its own query options applied; a job's
 * allocation list answers for its own job's changes, not another's; an answer after a change is the new
 * state, never a kept one; and a client that accepts gzip gets the same JSON gzipped, as Nomad sends it.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, running, type Served } from './in-process-agent.ts';

afterEach(cleanUp);

/** A GET read as bytes, with the headers it came with. */
function getRaw(s: Served, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: s.socket.socketPath, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const indexOf = (headers: IncomingHttpHeaders) => Number(headers['x-nomad-index']);

describe('blocking list queries', () => {
  it('wakes every watcher of a list with the same answer, each with its own filter applied', async () => {
    const s = await serve();
    await runJob(s, mockJob('first'));
    const head = await call(s.socket, 'GET', '/v1/allocations');
    const index = indexOf(head.headers);
    const plain = [call(s.socket, 'GET', `/v1/allocations?index=${index}&wait=30s`), call(s.socket, 'GET', `/v1/allocations?wait=20s&index=${index}`)];
    const filtered = call(s.socket, 'GET', `/v1/allocations?index=${index}&wait=30s&filter=${encodeURIComponent('JobID == "second"')}`);
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('second'));
    const [a, b] = await Promise.all(plain);
    const f = await filtered;
    expect(indexOf(a!.headers)).toBeGreaterThan(index);
    // Woken by the same change, they read the same index; the answer is that index's list.
    expect(indexOf(b!.headers)).toBe(indexOf(a!.headers));
    expect(b!.text).toBe(a!.text);
    expect(a!.json<Alloc[]>().map((x) => x.JobID)).toEqual(['first', 'second']);
    expect(f.json<Alloc[]>().map((x) => x.JobID)).toEqual(['second']);
  });

  it('answers a job’s allocation list at its own index, untouched by another job’s changes', async () => {
    const s = await serve();
    await runJob(s, mockJob('mine'));
    const head = await call(s.socket, 'GET', '/v1/job/mine/allocations');
    const index = indexOf(head.headers);
    const waiting = call(s.socket, 'GET', `/v1/job/mine/allocations?index=${index}&wait=1s`);
    await runJob(s, mockJob('other'));
    const answer = await waiting;
    // The wait ended with the unchanged index and the unchanged list: the other job's changes were not its scope.
    expect(indexOf(answer.headers)).toBe(index);
    expect(answer.text).toBe(head.text);
    expect(indexOf((await call(s.socket, 'GET', '/v1/allocations')).headers)).toBeGreaterThan(index);
  });

  it('wakes a job’s allocation list for its own job’s change, with the new state', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('mine'));
    const index = indexOf((await call(s.socket, 'GET', '/v1/job/mine/allocations')).headers);
    const waiting = call(s.socket, 'GET', `/v1/job/mine/allocations?index=${index}&wait=30s`);
    expect((await call(s.socket, 'POST', `/v1/allocation/${alloc.ID}/stop`)).status).toBe(200);
    const answer = await waiting;
    expect(indexOf(answer.headers)).toBeGreaterThan(index);
    expect(answer.json<Alloc[]>().find((a) => a.ID === alloc.ID)).toMatchObject({ DesiredStatus: 'stop' });
  });

  it('answers a plain read after a change with the new state, not a list kept from before', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('late'));
    const before = await call(s.socket, 'GET', '/v1/jobs');
    const done = await waitForAllocs(s.socket, '/v1/job/late/allocations', running);
    expect(done).toHaveLength(1);
    const jobs = await call(s.socket, 'GET', '/v1/jobs');
    expect(indexOf(jobs.headers)).toBeGreaterThanOrEqual(indexOf(before.headers));
    expect(jobs.json<{ ID: string; Status: string; JobSummary: { Summary: Record<string, { Running: number }> } }[]>()[0]).toMatchObject({
      ID: 'late', Status: 'running', JobSummary: { Summary: { g: { Running: 1 } } },
    });
  });

  it('answers the jobs list at the newest index of the jobs and their summaries: an allocation update that changes neither leaves it', async () => {
    const s = await serve();
    const body = mockJob('web');
    (body.Job.TaskGroups[0] as Record<string, unknown>)['Update'] = { MinHealthyTime: 100e6, HealthyDeadline: 60e9, ProgressDeadline: 120e9 };
    // A second group slow to be healthy: the first one's verdict does not end the deployment (which would mark the
    // version Stable, a change of the job's stub).
    body.Job.TaskGroups.push({ Name: 'slow', Count: 1, Update: { MinHealthyTime: 50e9, HealthyDeadline: 60e9, ProgressDeadline: 120e9 }, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' } }] } as never);
    const res = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect(res.status, res.text).toBe(200);
    await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.length === 2 && l.every((a) => a.ClientStatus === 'running'));
    const jobs = await call(s.socket, 'GET', '/v1/jobs');
    const index = indexOf(jobs.headers);
    // The health verdict updates the allocation (DeploymentStatus) and nothing the job's stub shows.
    const healthyOf = (l: unknown[]) => (l as { TaskGroup: string; DeploymentStatus?: { Healthy?: boolean } }[]).find((a) => a.TaskGroup === 'g' && a.DeploymentStatus?.Healthy === true);
    const healthy = healthyOf(await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => healthyOf(l) !== undefined)) as unknown as { ModifyIndex: number };
    expect(healthy!.ModifyIndex).toBeGreaterThan(index);
    const again = await call(s.socket, 'GET', `/v1/jobs?index=${index}&wait=1s`);
    expect(indexOf(again.headers)).toBe(index);
    expect(again.text).toBe(jobs.text);
    expect(indexOf((await call(s.socket, 'GET', '/v1/job/web/summary')).headers)).toBe(index);
  });

  it('wakes the jobs list when an allocation changes a job\'s summary, at that change\'s index', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('web'));
    const index = indexOf((await call(s.socket, 'GET', '/v1/jobs')).headers);
    const waiting = call(s.socket, 'GET', `/v1/jobs?index=${index}&wait=30s`);
    // Stopping the allocation: its desired status first (the summary keeps it Running), then its end (Complete).
    await call(s.socket, 'POST', `/v1/allocation/${alloc.ID}/stop`);
    const answer = await waiting;
    expect(indexOf(answer.headers)).toBeGreaterThan(index);
    const done = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.some((a) => a.ID === alloc.ID && a.ClientStatus === 'complete') && running(l.filter((a) => a.ID !== alloc.ID)));
    const ended = Math.max(...done.map((a) => a.ModifyIndex));
    const jobs = await call(s.socket, 'GET', '/v1/jobs');
    expect(indexOf(jobs.headers)).toBeGreaterThanOrEqual(indexOf(answer.headers));
    expect(indexOf(jobs.headers)).toBeLessThanOrEqual(ended);
    expect(jobs.json<{ JobSummary: { Summary: Record<string, unknown> } }[]>()[0]!.JobSummary.Summary['g']).toMatchObject({ Running: 1, Complete: 1 });
  });

  it('sends a list gzipped to a client that accepts gzip: the same JSON once unzipped', async () => {
    const s = await serve();
    for (const id of ['a', 'b', 'c', 'd', 'e']) await runJob(s, mockJob(id));
    const plain = await getRaw(s, '/v1/jobs');
    const zipped = await getRaw(s, '/v1/jobs', { 'accept-encoding': 'gzip' });
    expect(plain.body.length).toBeGreaterThan(1400);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(zipped.headers).toMatchObject({ 'content-encoding': 'gzip', vary: 'Accept-Encoding', 'content-type': 'application/json; charset=utf-8' });
    expect(gunzipSync(zipped.body).toString('utf8')).toBe(plain.body.toString('utf8'));
    expect(zipped.body.length).toBeLessThan(plain.body.length);
  });

  it('sends a short list as it is, whatever the client accepts', async () => {
    const s = await serve();
    const empty = await getRaw(s, '/v1/jobs', { 'accept-encoding': 'gzip' });
    expect(empty.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(empty.body.toString('utf8'))).toEqual([]);
  });
});
