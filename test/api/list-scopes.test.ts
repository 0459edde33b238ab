/**
 * The evaluations and deployments lists answered from the shared list cache (issue 26, point 8), against an
 * agent over its socket: each answers at the index of its own table, so a change elsewhere wakes no watcher,
 * watchers woken together get the same text, and the list options apply as on the other lists.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, until, type Served } from './in-process-agent.ts';

afterEach(cleanUp);

const indexOf = (headers: Record<string, unknown>) => Number(headers['x-nomad-index']);

/** A service job whose group has an update block: each version is a deployment. */
function deployed(id: string) {
  const body = mockJob(id);
  (body.Job.TaskGroups[0] as Record<string, unknown>)['Update'] = { MinHealthyTime: 50e6, HealthyDeadline: 60e9, ProgressDeadline: 120e9 };
  return body;
}

const successful = async (s: Served, id: string) =>
  until(async () => (await call(s.socket, 'GET', `/v1/job/${id}/deployment`)).json<{ Status?: string } | null>(), (d) => d?.Status === 'successful', `job ${id}'s deployment to succeed`);

describe('the evaluations list', () => {
  it('answers at the evaluations\' index: an allocation that ends wakes no watcher of it', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('short', { t: { run_for: '100ms' } }, { Type: 'batch' }));
    const head = await call(s.socket, 'GET', '/v1/evaluations');
    const index = indexOf(head.headers);
    await waitForAllocs(s.socket, '/v1/job/short/allocations', (l) => l[0]?.ClientStatus === 'complete');
    expect(indexOf((await call(s.socket, 'GET', '/v1/allocations')).headers)).toBeGreaterThan(index);
    const answer = await call(s.socket, 'GET', `/v1/evaluations?index=${index}&wait=1s`);
    expect(indexOf(answer.headers)).toBe(index);
    expect(answer.text).toBe(head.text);
  });

  it('wakes its watchers with the same text for a new evaluation, each with its own options applied', async () => {
    const s = await serve();
    await runJob(s, mockJob('first'));
    const index = indexOf((await call(s.socket, 'GET', '/v1/evaluations')).headers);
    const plain = [call(s.socket, 'GET', `/v1/evaluations?index=${index}&wait=30s`), call(s.socket, 'GET', `/v1/evaluations?wait=30s&index=${index}`)];
    const filtered = call(s.socket, 'GET', `/v1/evaluations?index=${index}&wait=30s&filter=${encodeURIComponent('JobID == "second"')}`);
    const paged = call(s.socket, 'GET', `/v1/evaluations?index=${index}&wait=30s&per_page=1`);
    const register = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('second'))).json<{ EvalID: string; EvalCreateIndex: number }>();
    const [a, b] = await Promise.all(plain);
    expect(indexOf(a!.headers)).toBe(register.EvalCreateIndex);
    expect(b!.text).toBe(a!.text);
    expect(a!.json<{ JobID: string }[]>().map((e) => e.JobID)).toEqual(['first', 'second']);
    expect((await filtered).json<{ ID: string }[]>().map((e) => e.ID)).toEqual([register.EvalID]);
    const page = await paged;
    expect(page.json<unknown[]>()).toHaveLength(1);
    expect(page.headers['x-nomad-nexttoken']).toBe(register.EvalID);
    // The job's own list, newest first, from the same cache.
    expect((await call(s.socket, 'GET', '/v1/job/second/evaluations')).json<{ ID: string }[]>().map((e) => e.ID)).toEqual([register.EvalID]);
  });
});

describe('the deployments list', () => {
  it('answers at the deployments\' index: a job without a deployment wakes no watcher of it', async () => {
    const s = await serve();
    await runJob(s, deployed('web'));
    await successful(s, 'web');
    const head = await call(s.socket, 'GET', '/v1/deployments');
    const index = indexOf(head.headers);
    expect(head.json<{ JobID: string; Status: string; ModifyIndex: number }[]>()).toMatchObject([{ JobID: 'web', Status: 'successful', ModifyIndex: index }]);
    await runJob(s, mockJob('plain'));
    const answer = await call(s.socket, 'GET', `/v1/deployments?index=${index}&wait=1s`);
    expect(indexOf(answer.headers)).toBe(index);
    expect(answer.text).toBe(head.text);
  });

  it('wakes for a new deployment, and drops a purged job\'s deployments from the list', async () => {
    const s = await serve();
    await runJob(s, deployed('web'));
    await successful(s, 'web');
    const index = indexOf((await call(s.socket, 'GET', '/v1/deployments')).headers);
    const waiting = call(s.socket, 'GET', `/v1/deployments?index=${index}&wait=30s`);
    await call(s.socket, 'PUT', '/v1/jobs', deployed('api'));
    const woken = await waiting;
    expect(indexOf(woken.headers)).toBeGreaterThan(index);
    expect(woken.json<{ JobID: string }[]>().map((d) => d.JobID)).toEqual(['api', 'web']);
    expect((await call(s.socket, 'GET', '/v1/deployments?per_page=1')).headers['x-nomad-nexttoken']).toEqual(expect.any(String));

    await call(s.socket, 'DELETE', '/v1/job/web?purge=true');
    const after = await until(async () => (await call(s.socket, 'GET', '/v1/deployments')).json<{ JobID: string }[]>(), (l) => l.length === 1, 'the purged job\'s deployment to go');
    expect(after.map((d) => d.JobID)).toEqual(['api']);
  });
});
