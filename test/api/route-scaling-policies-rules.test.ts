/**
 * `GET /v1/scaling/policies` and `/v1/scaling/policy/:id` on one in-process agent, as Nomad's Scaling endpoint
 * answers them: one policy per group with a scaling block, filtered by job, type, ID prefix and namespace; an ID
 * that stays while the job lives (across its versions, a scale included) and not past a purge; CreateIndex from the
 * version that brought the block, ModifyIndex from the one that last changed it; the job's own JSON names the ID.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, getOk, mockJob, serveWithRoom, SUITE_TIMEOUT, type Served } from './in-process-agent.ts';

type Json = Record<string, any>;

/** A job of groups `a` (with a scaling block of `max`) and `b` (without). */
const job = (id: string, max = 4, extra: Json = {}) => {
  const body = mockJob(id, { t: { run_for: '1h' } }, extra);
  const group = body.Job.TaskGroups[0]!;
  body.Job.TaskGroups = [{ ...group, Name: 'a', Count: 2, Scaling: { Min: 1, Max: max, Policy: { cooldown: '1m' } } } as typeof group, { ...group, Name: 'b' }];
  return body;
};

describe('scaling policies', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  const put = async (body: unknown) => {
    const res = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect(res.status, res.text).toBe(200);
    return res.json<Json>();
  };
  const policies = (query = '') => getOk<Json[]>(s, `/v1/scaling/policies${query}`);

  beforeAll(async () => {
    s = await serveWithRoom();
  });
  afterAll(cleanUp);

  it('lists one policy per group with a scaling block, and answers each with its bounds and policy', async () => {
    const registered = await put(job('web'));
    const [stub, ...more] = await policies('?job=web');
    expect(more).toEqual([]);
    expect(stub).toEqual({ ID: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/), Enabled: true, Type: 'horizontal', Target: { Namespace: 'default', Job: 'web', Group: 'a' }, CreateIndex: registered['JobModifyIndex'], ModifyIndex: registered['JobModifyIndex'] });
    expect(await getOk(s, `/v1/scaling/policy/${stub!['ID']}`)).toEqual({ ...stub, Min: 1, Max: 4, Policy: { cooldown: '1m' } });
    // The job's own JSON names its policy.
    expect((await getOk(s, '/v1/job/web'))['TaskGroups'][0]['Scaling']).toMatchObject({ ID: stub!['ID'], CreateIndex: stub!['CreateIndex'], ModifyIndex: stub!['ModifyIndex'] });
    expect((await call(s.socket, 'GET', '/v1/scaling/policy/00000000-0000-0000-0000-000000000000')).status).toBe(404);
  });

  it('filters by job, type, ID prefix and namespace', async () => {
    await put(job('api'));
    const all = await policies();
    expect(all.map((p) => p['Target']['Job']).sort()).toEqual(expect.arrayContaining(['api', 'web']));
    const api = (await policies('?job=api'))[0]!;
    expect(await policies(`?prefix=${String(api['ID']).slice(0, 6)}`)).toEqual([api]);
    expect(await policies('?job=api&type=horiz')).toEqual([api]);
    expect(await policies('?job=api&type=vertical')).toEqual([]);
    expect(await policies('?namespace=prod')).toEqual([]);
    expect((await policies('?namespace=*')).length).toBe(all.length);
  });

  it('keeps the ID across versions, a scale included; moves ModifyIndex only when the block changes; a purge ends it', async () => {
    await put(job('kept'));
    const [first] = await policies('?job=kept');
    expect((await call(s.socket, 'POST', '/v1/job/kept/scale', { Count: 3, Target: { Group: 'a' } })).status).toBe(200);
    expect((await getOk(s, '/v1/job/kept'))['Version']).toBe(1);
    expect((await policies('?job=kept'))[0]).toEqual(first);
    const changed = await put(job('kept', 6));
    const [after] = await policies('?job=kept');
    expect(after).toEqual({ ...first, ModifyIndex: changed['JobModifyIndex'] });
    expect((await call(s.socket, 'DELETE', '/v1/job/kept?purge=true')).status).toBe(200);
    expect(await policies('?job=kept')).toEqual([]);
    await put(job('kept'));
    expect((await policies('?job=kept'))[0]!['ID']).not.toBe(first!['ID']);
  });

  it('answers a blocking list once a job with a policy is registered', async () => {
    const res = await call(s.socket, 'GET', '/v1/scaling/policies');
    const index = Number(res.headers['x-nomad-index']);
    const waiting = call(s.socket, 'GET', `/v1/scaling/policies?index=${index}&wait=20s`);
    await put(job('late'));
    const woke = await waiting;
    expect(Number(woke.headers['x-nomad-index'])).toBeGreaterThan(index);
    expect(woke.json<Json[]>().map((p) => p['Target']['Job'])).toContain('late');
  });
});
