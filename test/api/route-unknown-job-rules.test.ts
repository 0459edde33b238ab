/**
 * An unknown job's reads (src/api/routes/jobs.ts, evaluations.ts, deployments.ts, services.ts), row by row, as
 * Nomad answers them (command/agent/job_endpoint.go over nomad/job_endpoint.go): the job, its summary and its
 * versions are 404s at their table's index; its allocations, evaluations and deployments are empty lists and its
 * newest deployment null (Nomad's RPCs look no job up); its services a 404. Each read blocks like any, and the
 * job's registration ends the wait. One served agent in process (mock tasks) with a job of its own beside.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, type Served, SUITE_TIMEOUT, serveWithRoom } from './in-process-agent.ts';

/** A job with an update block: its registration makes a deployment. */
const deployed = (id: string) => {
  const body = mockJob(id);
  Object.assign(body.Job.TaskGroups[0]!, { Update: { MinHealthyTime: 200e9, HealthyDeadline: 300e9 } });
  return body;
};

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
  // Something in every table, so that each index below is one the agent moved.
  await runJob(s, deployed('other'));
}, SUITE_TIMEOUT);
afterAll(cleanUp);

const deploymentsIndex = async () => Number((await call(s.socket, 'GET', '/v1/deployments')).headers['x-nomad-index']);

/** Each read: its answer, and the index Nomad gives it (the table it reads; 1 where it would say 0 or nothing yet). */
const READS: [path: string, status: number, text: string, index: () => number | Promise<number>][] = [
  ['/v1/job/nope', 404, 'job not found', () => s.api.registry.jobsIndex],
  ['/v1/job/nope/summary', 404, 'job not found', () => s.api.registry.summaryIndex],
  ['/v1/job/nope/versions', 404, 'job versions not found', () => s.api.registry.jobsIndex],
  // Scoped to the job's own allocations, as the route is for a known job (none here).
  ['/v1/job/nope/allocations', 200, '[]', () => 1],
  ['/v1/job/nope/evaluations', 200, '[]', () => s.api.registry.evalsIndex],
  ['/v1/job/nope/deployments', 200, '[]', deploymentsIndex],
  ['/v1/job/nope/deployment', 200, 'null', deploymentsIndex],
  ['/v1/job/nope/services', 404, 'job not found', () => 1],
];

describe('an unknown job\'s reads', { timeout: SUITE_TIMEOUT }, () => {
  it.each(READS)('GET %s answers %i %s at its table\'s index', async (path, status, text, index) => {
    const res = await call(s.socket, 'GET', path);
    expect([res.status, res.text]).toEqual([status, text]);
    expect(res.headers['x-nomad-index']).toBe(String(await index()));
    expect([res.headers['x-nomad-knownleader'], res.headers['x-nomad-lastcontact']]).toEqual(['true', '0']);
  });

  it('the tables\' indexes above are distinct enough to tell the rows apart', () => {
    const { jobsIndex, summaryIndex, evalsIndex } = s.api.registry;
    expect(new Set([jobsIndex, summaryIndex, evalsIndex, 1]).size).toBeGreaterThanOrEqual(3);
  });

  it('lists what a purged job left of its allocations, as Nomad\'s AllocsByJob does for a job it no longer has', async () => {
    const alloc = await runJob(s, mockJob('purged'));
    expect((await call(s.socket, 'DELETE', '/v1/job/purged?purge=true')).status).toBe(200);
    const [job, allocs, deployment] = await Promise.all(['', '/allocations', '/deployment'].map((p) => call(s.socket, 'GET', `/v1/job/purged${p}`)));
    expect([job.status, job.text]).toEqual([404, 'job not found']);
    expect(allocs.json<{ ID: string }[]>().map((a) => a.ID)).toEqual([alloc.ID]);
    expect([deployment.status, deployment.text]).toEqual([200, 'null']);
  });

  it('blocks at its index like any read, and the job\'s registration ends every wait with the job\'s answer', async () => {
    const waits: Promise<Answer>[] = [];
    for (const [path, , , index] of READS) {
      // Services are answered at 1 for an unknown job; their wait ends once the job is known and its catalog moves.
      if (path.endsWith('/services')) continue;
      waits.push(call(s.socket, 'GET', `${path.replace('nope', 'late')}?index=${await index()}&wait=30s`));
    }
    await new Promise((r) => setImmediate(r));
    const registered = await call(s.socket, 'PUT', '/v1/jobs', deployed('late'));
    expect(registered.status).toBe(200);
    const at = registered.json<{ Index: number }>().Index;
    const answers = await Promise.all(waits);
    const expected = READS.filter(([p]) => !p.endsWith('/services')).map(([p]) => [p.replace('nope', 'late'), 200]);
    expect(answers.map((r, i) => [expected[i]![0], r.status])).toEqual(expected);
    for (const r of answers) expect(Number(r.headers['x-nomad-index'])).toBeGreaterThanOrEqual(at);
  });
});
