/**
 * The registry across an agent's restart (src/api/job-registry.ts: load, adopt, heal), rule by rule, through
 * agents served in process one after the other on one data dir (mock tasks): what the store holds is read back
 * as it was, nothing is evaluated again when nothing is missing, a job's open blocked evaluation is its newest,
 * and an allocation the store lost but whose runner record is there is recorded again, never run twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, runJob, serve, SUITE_TIMEOUT } from './in-process-agent.ts';
import type { EvalRecord, JobEntry } from '../../src/api/job-registry.ts';

type Json = Record<string, any>;

afterEach(cleanUp);

const read = async (s: { socket: { socketPath: string } }, path: string) => {
  const res = await call(s.socket, 'GET', path);
  expect(res.status, res.text).toBe(200);
  return { body: res.json<any>(), index: Number(res.headers['x-nomad-index']) };
};

describe('an agent started on a data dir', { timeout: SUITE_TIMEOUT }, () => {
  it('reads back every job, evaluation and allocation as they were, and evaluates nothing when nothing is missing', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    const web = await runJob(first, mockJob('web'));
    await runJob(first, mockJob('gone'));
    // Four allocations at four indexes: read back oldest first, whatever order their IDs sort in.
    expect((await call(first.socket, 'PUT', `/v1/allocation/${web.ID}/stop`)).status).toBe(200);
    await runJob(first, mockJob('late'));
    await call(first.socket, 'DELETE', '/v1/job/gone');
    const jobs = (await read(first, '/v1/job/web')).body;
    const stopped = (await read(first, '/v1/job/gone')).body;
    const evals = (await read(first, '/v1/evaluations')).body as Json[];
    const allocs = ((await read(first, '/v1/allocations')).body as Json[]).map((a) => [a['ID'], a['JobID'], a['DesiredStatus'], a['CreateIndex'], a['JobVersion']]);
    await first.stop();

    const second = await serve(dir);
    const pick = (j: Json) => [j['Version'], j['Stop'], j['CreateIndex'], j['ModifyIndex'], j['JobModifyIndex'], j['SubmitTime'], j['Namespace']];
    expect(pick((await read(second, '/v1/job/web')).body)).toEqual(pick(jobs));
    expect(pick((await read(second, '/v1/job/gone')).body)).toEqual(pick(stopped));
    const again = await read(second, '/v1/evaluations');
    expect((again.body as Json[]).map((e) => [e['ID'], e['TriggeredBy'], e['ModifyIndex']])).toEqual(evals.map((e) => [e['ID'], e['TriggeredBy'], e['ModifyIndex']]));
    // The evaluations' index is the newest evaluation's, read back: no write moved it.
    expect(again.index).toBe(Math.max(...evals.map((e) => e['ModifyIndex'] as number)));
    expect(((await read(second, '/v1/allocations')).body as Json[]).map((a) => [a['ID'], a['JobID'], a['DesiredStatus'], a['CreateIndex'], a['JobVersion']])).toEqual(allocs);
    expect(second.api.registry.jobsIndex).toBe(Math.max(jobs['ModifyIndex'], stopped['ModifyIndex']));
  });

  it('places what a job lacks with an evaluation of its own that the placement carries, and leaves a whole job unevaluated', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    await runJob(first, mockJob('whole'));
    await runJob(first, mockJob('short'));
    await first.stop();
    // One more instance wanted than the store has allocations for, as a crash between the two writes would leave.
    const second = await serve(dir, async (store) => {
      const job = store.get('jobs', 'short') as JobEntry;
      const version = job.versions.at(-1)!;
      version.allocs = [...version.allocs, { ...version.allocs[0]!, id: 'short-g-1' }];
      await store.commit((tx) => tx.put('jobs', 'short', job));
    });
    const reconnect = ((await read(second, '/v1/evaluations')).body as Json[]).filter((e) => e['TriggeredBy'] === 'reconnect');
    expect(reconnect.map((e) => e['JobID'])).toEqual(['short']);
    const placed = await waitForAllocs(second.socket, '/v1/job/short/allocations', (l) => l.length === 2);
    expect(placed[1]).toMatchObject({ EvalID: reconnect[0]!['ID'], CreateIndex: reconnect[0]!['CreateIndex'] });
  });

  it('takes a job\'s newest blocked evaluation as its open one: the start\'s placement, with room now, settles that one', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    first.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 1 };
    const body = mockJob('big');
    (body.Job.TaskGroups[0]!.Tasks[0] as Json)['Resources'] = { MemoryMB: 16 };
    expect((await call(first.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    const blocked = ((await read(first, '/v1/evaluations')).body as EvalRecord[]).find((e) => e.Status === 'blocked')!;
    expect(blocked).toBeDefined();
    await first.stop();
    // Two older blocked evaluations of the job, whose IDs sort before and after the open one's.
    const older = ['00000000-0000-4000-8000-000000000000', 'ffffffff-ffff-4fff-bfff-ffffffffffff'];
    const second = await serve(dir, async (store) => {
      await store.commit((tx) => {
        for (const ID of older) tx.put('evals', ID, { ...blocked, ID, CreateIndex: blocked.CreateIndex - 1, ModifyIndex: blocked.CreateIndex - 1 });
      });
    });
    await waitForAllocs(second.socket, '/v1/job/big/allocations', (l) => l.length === 1);
    const evals = (await read(second, '/v1/evaluations')).body as EvalRecord[];
    // Placed by the start's own evaluation, which cancels the job's open blocked one (Nomad's words in blocked-evals).
    expect(evals.find((e) => e.ID === blocked.ID)!.Status).toBe('canceled');
    for (const ID of older) expect(evals.find((e) => e.ID === ID)!.Status).toBe('blocked');
  });

  it('records again an allocation the store lost whose runner record is there, as the job\'s instance, without a new one', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    const alloc = await runJob(first, mockJob('kept'));
    await first.stop();
    const second = await serve(dir, async (store) => {
      await store.commit((tx) => tx.remove('allocs', alloc.ID));
    });
    const stored = second.store.get('allocs', alloc.ID) as Json;
    expect(stored).toMatchObject({ id: alloc.ID, jobId: 'kept', group: 'g', namespace: 'default', index: 0, desired: 'run' });
    expect(stored).not.toHaveProperty('unrecorded');
    const listed = (await read(second, '/v1/job/kept/allocations')).body as Json[];
    expect(listed.map((a) => a['ID'])).toEqual([alloc.ID]);
    const evaluations = await read(second, '/v1/evaluations');
    expect((evaluations.body as Json[]).filter((e) => e['TriggeredBy'] === 'reconnect')).toEqual([]);
    // Recording it wrote no evaluation: the evaluations' index is still their newest one's.
    expect(evaluations.index).toBe(Math.max(...(evaluations.body as Json[]).map((e) => e['ModifyIndex'] as number)));
  });
});
