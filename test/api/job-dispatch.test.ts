/**
 * Parameterized jobs and dispatch on one in-process agent, as Nomad's Job.Dispatch behaves: registering places
 * nothing; a dispatch registers a child with the merged meta and the payload (written into the task, its
 * meta in the env); every refusal with Nomad's words and nothing written; idempotency tokens; a dispatch
 * survives an agent restart and is never made twice. Periodic children get NOMAD_JOB_PARENT_ID and the meta too.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, serveWithRoom, serve, type Served } from './in-process-agent.ts';

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
const path = (id: string) => `/v1/job/${encodeURIComponent(id)}`;

/** A parameterized batch job of one task (raw_exec or mock). */
const parameterized = (id: string, rule: Record<string, unknown>, task: Record<string, unknown> = { Driver: 'mock', Config: { run_for: '10ms' } }, extra: Record<string, unknown> = {}) => ({
  Job: { ID: id, Type: 'batch', ParameterizedJob: rule, ...extra, TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', ...task }] }] },
});

interface Stub { ID: string; ParentID: string; ParameterizedJob: boolean; Status: string; Type: string; JobSummary: { Children: Record<string, number> } }
interface Dispatched { DispatchedJobID: string; EvalID: string; EvalCreateIndex: number; JobCreateIndex: number; Index: number }

describe('parameterized jobs and job dispatch', () => {
  let s: Served;
  const jobs = async (): Promise<Stub[]> => (await call(s.socket, 'GET', '/v1/jobs')).json() as Stub[];
  const childrenOf = async (id: string) => (await jobs()).filter((j) => j.ParentID === id).map((j) => j.ID).sort();
  const put = async (body: unknown) => {
    const res = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect(res.status, res.text).toBe(200);
    return res.json() as { EvalID: string };
  };
  const dispatch = (id: string, body: unknown, query = '') => call(s.socket, 'PUT', `${path(id)}/dispatch${query}`, body);
  const dispatched = async (id: string, body: unknown, query = ''): Promise<Dispatched> => {
    const res = await dispatch(id, body, query);
    expect(res.status, res.text).toBe(200);
    return res.json() as Dispatched;
  };
  const logsOf = async (allocId: string) => (await call(s.socket, 'GET', `/v1/client/fs/logs/${allocId}?task=t&type=stdout&plain=true`)).text;

  beforeAll(async () => {
    s = await serveWithRoom();
    await put(parameterized('rules', { Payload: 'required', MetaRequired: ['a'], MetaOptional: ['b'] }));
    await put(parameterized('no-payload', { Payload: 'forbidden' }));
    await put(mockJob('plain', { t: { run_for: '10ms' } }, { Type: 'batch' }));
  });
  afterAll(cleanUp);

  it('registers a parameterized job without an evaluation or any allocation; it is running, waiting for dispatches', async () => {
    const res = await put(parameterized('idle', { MetaOptional: ['x'] }));
    expect(res.EvalID).toBe('');
    expect((await call(s.socket, 'GET', `${path('idle')}/allocations`)).json()).toEqual([]);
    expect((await jobs()).find((j) => j.ID === 'idle')).toMatchObject({ ParameterizedJob: true, ParentID: '', Status: 'running', Type: 'batch', JobSummary: { Children: { Pending: 0, Running: 0, Dead: 0 } } });
    // Nomad's canonical block: payload optional by default, unset key lists null.
    expect((await call(s.socket, 'GET', path('idle'))).json()).toMatchObject({ ParameterizedJob: { Payload: 'optional', MetaRequired: null, MetaOptional: ['x'] } });
    expect((await jobs()).find((j) => j.ID === 'plain')!.ParameterizedJob).toBe(false);
    // Its plan places nothing either.
    const plan = await call(s.socket, 'POST', `${path('planned')}/plan`, parameterized('planned', {}));
    expect(plan.status, plan.text).toBe(200);
    expect((plan.json() as { Annotations: { DesiredTGUpdates: Record<string, { Place: number }> } }).Annotations.DesiredTGUpdates['g']!.Place).toBe(0);
  });

  it.each([
    ['a service job', { ...parameterized('svc', {}).Job, Type: 'service' }, 'Parameterized job can only be used with "batch" or "sysbatch" jobs'],
    ['an unknown payload rule', parameterized('odd', { Payload: 'sometimes' }).Job, 'Unknown payload requirement: "sometimes"'],
    ['a key both required and optional', parameterized('both', { MetaRequired: ['k'], MetaOptional: ['k'] }).Job, 'Required and optional meta keys should be disjoint. Following keys exist in both: [k]'],
    ['a payload file outside local/', parameterized('escape', {}, { Driver: 'mock', Config: {}, DispatchPayload: { File: '../../x' } }).Job, 'destination escapes allocation directory'],
  ])('refuses to register %s, naming it', async (_what, job, message) => {
    const res = await call(s.socket, 'PUT', '/v1/jobs', { Job: job });
    expect(res.status).toBe(400);
    expect(res.text).toContain(message);
    expect((await call(s.socket, 'GET', path(String(job['ID'])))).status).toBe(404);
  });

  it.each([
    ['a parameterized job to a plain one', () => mockJob('rules', { t: { run_for: '10ms' } }, { Type: 'batch' }), 'cannot update parameterized job to being non-parameterized'],
    ['a plain job to a parameterized one', () => parameterized('plain', {}), 'cannot update non-parameterized job to being parameterized'],
  ])("refuses to update %s (Nomad's validateJobUpdate), leaving it as it was", async (_what, body, message) => {
    const job = body().Job;
    const before = (await call(s.socket, 'GET', path(job.ID))).json() as { Version: number };
    const res = await call(s.socket, 'PUT', '/v1/jobs', { Job: job });
    expect([res.status, res.text]).toEqual([400, message]);
    expect((await call(s.socket, 'GET', path(job.ID))).json()).toMatchObject({ Version: before.Version });
  });

  it.each([
    ['a required payload missing', 'rules', { Meta: { a: '1' } }, 400, 'Payload is not provided but required by parameterized job'],
    ['a forbidden payload given', 'no-payload', { Payload: b64('x') }, 400, 'Payload provided but forbidden by parameterized job'],
    ['a payload over 16 KiB', 'rules', { Payload: b64(Buffer.alloc(16 * 1024 + 1, 1)), Meta: { a: '1' } }, 400, 'Payload exceeds maximum size; 16385 > 16384'],
    ['meta keys the job does not name', 'rules', { Payload: b64('x'), Meta: { a: '1', z: '2', y: '3' } }, 400, 'Dispatch request included unpermitted metadata keys: [y z]'],
    ['a required meta key missing', 'rules', { Payload: b64('x'), Meta: { b: '1' } }, 400, 'Dispatch did not provide required meta keys: [a]'],
    ['a job that is not parameterized', 'plain', {}, 400, 'Specified job "plain" is not a parameterized job'],
    ['a job that does not exist', 'nope', {}, 404, 'parameterized job not found'],
    ['a payload that is not base64', 'rules', { Payload: 'not base64!', Meta: { a: '1' } }, 400, 'must be base64'],
    ['a meta value that is not a string', 'rules', { Payload: b64('x'), Meta: { a: 1 } }, 400, 'must be a string'],
    ['another job ID in the body', 'rules', { JobID: 'other', Payload: b64('x'), Meta: { a: '1' } }, 400, 'Job ID does not match'],
  ])('refuses a dispatch with %s, and registers nothing', async (_what, id, body, status, message) => {
    const res = await dispatch(id, body);
    expect(res.status, res.text).toBe(status);
    expect(res.text).toContain(message);
    expect(await childrenOf(id)).toEqual([]);
  });

  it('refuses to dispatch a stopped job, and a dispatched child', async () => {
    await put(parameterized('stopped', {}));
    expect((await call(s.socket, 'DELETE', path('stopped'))).status).toBe(200);
    const res = await dispatch('stopped', {});
    expect([res.status, res.text]).toEqual([400, 'Specified job "stopped" is stopped']);
    const child = await dispatched('no-payload', {});
    const again = await dispatch(child.DispatchedJobID, {});
    expect([again.status, again.text]).toEqual([400, `Specified job ${JSON.stringify(child.DispatchedJobID)} is not a parameterized job`]);
  });

  it("dispatches a child that runs with the merged meta in its env, its parent's ID, and the payload in local/ (Nomad's mode)", async () => {
    const task = { Driver: 'raw_exec', DispatchPayload: { File: 'in/input.txt' }, Config: { command: '/bin/sh', args: ['-c', 'env; echo "payload=$(cat "$NOMAD_TASK_DIR/in/input.txt")"'] } };
    await put(parameterized('report', { MetaRequired: ['target'], MetaOptional: ['mode'] }, task, { Meta: { owner: 'ops', mode: 'default' } }));
    const res = await dispatched('report', { Payload: b64('hello payload'), Meta: { target: 'prod' } });
    expect(res.DispatchedJobID).toMatch(/^report\/dispatch-\d+-[0-9a-f]{8}$/);
    expect(res.EvalID).not.toBe('');
    expect(res.JobCreateIndex).toBeGreaterThan(0);
    expect(res.EvalCreateIndex).toBe(res.JobCreateIndex);
    expect(res.Index).toBe(res.JobCreateIndex);
    const child = (await call(s.socket, 'GET', path(res.DispatchedJobID))).json() as Record<string, unknown>;
    expect(child).toMatchObject({ ID: res.DispatchedJobID, Name: res.DispatchedJobID, ParentID: 'report', Dispatched: true, Payload: b64('hello payload'), Meta: { owner: 'ops', mode: 'default', target: 'prod' } });
    const [alloc] = await waitForAllocs(s.socket, `${path(res.DispatchedJobID)}/allocations`, (l) => l.length === 1 && l[0]!.ClientStatus === 'complete');
    const out = await logsOf(alloc!.ID);
    for (const line of ['NOMAD_META_target=prod', 'NOMAD_META_TARGET=prod', 'NOMAD_META_owner=ops', 'NOMAD_META_mode=default', 'NOMAD_JOB_PARENT_ID=report', `NOMAD_JOB_ID=${res.DispatchedJobID}`, 'payload=hello payload']) {
      expect(out.split('\n'), line).toContain(line);
    }
    const file = join(s.dataDir, 'allocs', alloc!.ID, 't', 'local', 'in', 'input.txt');
    expect((await stat(file)).mode & 0o777).toBe(0o777 & ~process.umask());
    expect((await jobs()).find((j) => j.ID === 'report')!.JobSummary.Children).toEqual({ Pending: 0, Running: 0, Dead: 1 });
  });

  it('answers a dispatch with an idempotency token already used with the same child, and registers no other', async () => {
    const first = await dispatched('rules', { Payload: b64('x'), Meta: { a: '1' } }, '?idempotency_token=once');
    const again = await dispatched('rules', { Payload: b64('y'), Meta: { a: '2' } }, '?idempotency_token=once');
    const inBody = await dispatched('rules', { Payload: b64('x'), Meta: { a: '1' }, IdempotencyToken: 'once' });
    expect(again).toMatchObject({ DispatchedJobID: first.DispatchedJobID, EvalID: '', JobCreateIndex: first.JobCreateIndex });
    expect(inBody.DispatchedJobID).toBe(first.DispatchedJobID);
    // Two at once with a new token: one child.
    const [x, y] = await Promise.all([0, 1].map(() => dispatched('rules', { Payload: b64('x'), Meta: { a: '1' } }, '?idempotency_token=race')));
    expect(x!.DispatchedJobID).toBe(y!.DispatchedJobID);
    expect(await childrenOf('rules')).toEqual([first.DispatchedJobID, x!.DispatchedJobID].sort());
  });

  it("puts -id-prefix-template in the child's ID as Nomad does", async () => {
    const res = await dispatched('no-payload', { IdPrefixTemplate: 'nightly' });
    expect(res.DispatchedJobID).toMatch(/^no-payload\/dispatch-nightly-\d+-[0-9a-f]{8}$/);
  });

  it("gives a periodic job's child NOMAD_JOB_PARENT_ID and the job's meta", async () => {
    const task = { Driver: 'raw_exec', Config: { command: '/usr/bin/env' } };
    await put({ Job: { ID: 'tick', Type: 'batch', Meta: { team: 'infra' }, Periodic: { Enabled: true, SpecType: 'cron', Specs: ['0 0 1 1 *'] }, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', ...task }] }] } });
    const forced = await call(s.socket, 'PUT', `${path('tick')}/periodic/force`);
    expect(forced.status, forced.text).toBe(200);
    const [child] = await childrenOf('tick');
    const [alloc] = await waitForAllocs(s.socket, `${path(child!)}/allocations`, (l) => l.length === 1 && l[0]!.ClientStatus === 'complete');
    const out = (await logsOf(alloc!.ID)).split('\n');
    expect(out).toContain('NOMAD_JOB_PARENT_ID=tick');
    expect(out).toContain('NOMAD_META_team=infra');
  });

  it('keeps an acknowledged dispatch across an agent restart, and its token still answers with it', async () => {
    const res = await dispatched('rules', { Payload: b64('x'), Meta: { a: '1' } }, '?idempotency_token=durable');
    const before = await childrenOf('rules');
    await s.stop();
    s = await serve(s.dataDir);
    expect(await childrenOf('rules')).toEqual(before);
    const child = (await call(s.socket, 'GET', path(res.DispatchedJobID))).json() as Record<string, unknown>;
    expect(child).toMatchObject({ ParentID: 'rules', Dispatched: true, DispatchIdempotencyToken: 'durable', Meta: { a: '1' } });
    await waitForAllocs(s.socket, `${path(res.DispatchedJobID)}/allocations`, (l) => l.length === 1 && l[0]!.ClientStatus === 'complete');
    const again = await dispatched('rules', { Payload: b64('x'), Meta: { a: '1' } }, '?idempotency_token=durable');
    expect(again.DispatchedJobID).toBe(res.DispatchedJobID);
    expect(await childrenOf('rules')).toEqual(before);
  });
});
