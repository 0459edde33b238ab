/**
 * What the deployment, plan and evaluate routes (src/api/routes/deployments.ts, job-plan.ts) check before they
 * act, through an agent served inside each test: every route's path, query and body schema, with a 400 naming
 * the field, never a lookup of the empty ID (which, as a prefix, matches any deployment) or a crash deeper in;
 * and the store's mark of failed deployments, each damaged shape of it answered 500 by its entry's name.
 *
 * Served per test on purpose: the schemas are built when the API starts, and Stryker's per-test coverage only
 * counts what runs inside a test; the shared agents of route-deployments-rules and route-job-plan-rules start in
 * beforeAll, so their tests never count as covering them (docs/testing.md, "Code that runs in beforeAll").
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordPublishedBatches } from './published-batches.ts';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, serve, SUITE_TIMEOUT, until } from './in-process-agent.ts';

afterEach(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

type Refusal = [method: string, path: string, body: unknown, field: RegExp];

/** Sends each request and expects each to be refused with 400 naming its field. */
async function expectRefused(socket: { socketPath: string }, refusals: Refusal[]): Promise<void> {
  for (const [method, path, body, field] of refusals) {
    const res = await call(socket, method, path, body);
    expect([method, path, res.status, res.text]).toEqual([method, path, 400, expect.stringMatching(field)]);
  }
}

describe('the deployment routes check their input', { timeout: SUITE_TIMEOUT }, () => {
  it('refuse an empty ID, a negative index and a wait that is not a duration, with 400 naming the field, even with one deployment to match', async () => {
    const s = await serve();
    const body = mockJob('only');
    Object.assign(body.Job.TaskGroups[0]!, { Update: { MinHealthyTime: 200e9, HealthyDeadline: 300e9 } });
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    const refusals: Refusal[] = [
      ['GET', '/v1/deployments?index=-1', undefined, /^index: /],
      ['GET', '/v1/deployments?wait=soon', undefined, /^wait: /],
      ['GET', '/v1/deployment/', undefined, /^id: /],
      ['GET', '/v1/deployment/ffffffff?index=-1', undefined, /^index: /],
      ['GET', '/v1/deployment/allocations/', undefined, /^id: /],
      ['GET', '/v1/deployment/allocations/ffffffff?wait=soon', undefined, /^wait: /],
      ['GET', '/v1/job//deployments', undefined, /^id: /],
      ['GET', '/v1/job/nope/deployments?index=-1', undefined, /^index: /],
      ['GET', '/v1/job//deployment', undefined, /^id: /],
      ['GET', '/v1/job/nope/deployment?wait=soon', undefined, /^wait: /],
      ['PUT', '/v1/deployment/fail/', undefined, /^id: /],
      ['POST', '/v1/deployment/promote/', undefined, /^id: /],
    ];
    await expectRefused(s.socket, refusals);
    // The refused fail marked nothing.
    expect((await call(s.socket, 'GET', '/v1/job/only/deployment')).json<Record<string, unknown>>()['Status']).toBe('running');
  });
});

describe('plan and evaluate check their input', { timeout: SUITE_TIMEOUT }, () => {
  it('refuse an empty job ID in the path, a body without a job, an empty job ID, a Diff or a ForceReschedule that is not a boolean, with 400 naming the field', async () => {
    const s = await serve();
    const refusals: Refusal[] = [
      ['POST', '/v1/job//plan', mockJob(''), /^id: /],
      ['POST', '/v1/job/p/plan', {}, /Job/],
      ['PUT', '/v1/job/p/plan', { Job: { ID: '' } }, /must not be empty/],
      ['POST', '/v1/job/p/plan', { ...mockJob('p'), Diff: 'yes' }, /Diff/],
      ['POST', '/v1/job//evaluate', {}, /^id: /],
      ['PUT', '/v1/job/p/evaluate', { EvalOptions: { ForceReschedule: 'yes' } }, /ForceReschedule/],
      ['POST', '/v1/job/p/evaluate', { JobID: 7 }, /JobID/],
    ];
    await expectRefused(s.socket, refusals);
    expect((await call(s.socket, 'GET', '/v1/jobs')).json()).toEqual([]);
  });
});

describe('a damaged mark of failed deployments', { timeout: SUITE_TIMEOUT }, () => {
  it.each([
    ['a number', 5],
    ['null', null],
    ['a list of indexes', [3]],
    ['text', 'x'],
    ['an ID marked at an index that is not a number', { 'some-id': 'soon' }],
  ])('read as %s is answered 500 naming its store entry, never read as no mark', async (_what, value) => {
    const s = await serve();
    const batches = recordPublishedBatches();
    const body = mockJob('marked');
    Object.assign(body.Job.TaskGroups[0]!, { Update: { MinHealthyTime: 1e6, HealthyDeadline: 300e9 } });
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    // Settled: the success announced, so no later event has the watcher read the mark while it is damaged.
    await until(async () => batches.flatMap((b) => b.Events).some((e) => e.Topic === 'Deployment' && (e.Payload['Deployment'] as { Status: string }).Status === 'successful'), (ok) => ok, 'the deployment\'s success');
    await s.store.commit((tx) => tx.put('meta', 'deployments.failed', value));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const res = await call(s.socket, 'GET', '/v1/job/marked/deployment');
    stderr.mockRestore();
    expect([res.status, res.text]).toEqual([500, expect.stringMatching(/meta\/deployments\.failed: expected \{ deployment ID: index \}$/)]);
    await s.store.commit((tx) => tx.remove('meta', 'deployments.failed'));
    expect((await call(s.socket, 'GET', '/v1/job/marked/deployment')).json<Record<string, unknown>>()['Status']).toBe('successful');
  });
});
