/**
 * The versions of a job the agent keeps (Nomad's `job_tracked_versions`, src/api/job-versions.ts): the newest N and
 * any older one an allocation still names, so a job updated for as long as it lives keeps a bounded record.
 */
import { describe, expect, it, afterAll } from 'vitest';
import { keptVersions } from '../../src/api/job-versions.ts';
import { runCli } from '../cli/spawn-cli.ts';
import { call, type Alloc } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, serve, until } from './in-process-agent.ts';

afterAll(cleanUp);

const v = (...ns: number[]) => ns.map((version) => ({ version }));

describe('keptVersions', () => {
  it.each<[string, number[], number, number[], number[]]>([
    ['fewer than the bound: all', [0, 1, 2], 6, [], [0, 1, 2]],
    ['exactly the bound: all', [0, 1, 2], 3, [], [0, 1, 2]],
    ['one over: the oldest goes', [0, 1, 2, 3], 3, [], [1, 2, 3]],
    ['many over: the newest N stay', [0, 1, 2, 3, 4, 5, 6, 7], 3, [], [5, 6, 7]],
    ['an old version an allocation names stays', [0, 1, 2, 3, 4, 5], 2, [1], [1, 4, 5]],
    ['a named version among the newest counts once', [0, 1, 2, 3], 2, [3, 0], [0, 2, 3]],
    ['a name of a version long gone keeps nothing', [4, 5, 6], 1, [2], [6]],
  ])('%s', (_, versions, tracked, named, kept) => {
    expect(keptVersions(v(...versions), tracked, new Set(named)).map((x) => x.version)).toEqual(kept);
  });

  it('returns the same array when nothing goes (the record is not copied)', () => {
    const versions = v(0, 1);
    expect(keptVersions(versions, 6, new Set())).toBe(versions);
    const named = v(0, 1, 2);
    expect(keptVersions(named, 1, new Set([0, 1]))).toBe(named);
  });
});

type Versions = { Versions: { Version: number }[] };
const listed = async (socket: Parameters<typeof call>[0], id: string) => ((await call(socket, 'GET', `/v1/job/${id}/versions`)).json() as Versions).Versions.map((x) => x.Version);

describe('an agent with job_tracked_versions 2', () => {
  it('keeps the newest two and those its allocations name, and the trimmed record across a restart', async () => {
    const dataDir = freshDir();
    const opts = { api: { gc: { jobTrackedVersions: 2 } } };
    let s = await serve(dataDir, undefined, opts);
    // Each registration changes the job's meta: a new version, its allocation replaced. A short kill timeout: a
    // restored mock task is stopped by it at the end.
    const register = async (i: number) => {
      const body = mockJob('web', undefined, { Meta: { rev: String(i) } });
      Object.assign(body.Job.TaskGroups[0]!.Tasks[0]!, { KillTimeout: 100e6 });
      const res = await call(s.socket, 'PUT', '/v1/jobs', body);
      expect(res.status, res.text).toBe(200);
    };
    const allocsRunning = (version: number) =>
      until(async () => (await call(s.socket, 'GET', '/v1/job/web/allocations')).json() as Alloc[], (list) => list.some((a) => a.JobVersion === version && a.ClientStatus === 'running'), `version ${version} running`);
    for (let i = 0; i < 5; i++) await register(i);
    const allocs = await allocsRunning(4);
    // Every version an allocation names is kept, and every allocation shows the job it was placed with.
    const named = new Set(allocs.map((a) => a.JobVersion));
    expect(await listed(s.socket, 'web')).toEqual([...new Set([4, 3, ...named])].sort((a, b) => b - a));
    for (const a of allocs) {
      const full = (await call(s.socket, 'GET', `/v1/allocation/${a.ID}`)).json() as { Job: { Version: number } | null };
      expect(full.Job?.Version).toBe(a.JobVersion);
    }
    // Once the server collector has forgotten the replaced allocations, the next version leaves the newest two.
    expect((await call(s.socket, 'PUT', '/v1/system/gc')).status).toBe(200);
    await register(5);
    await allocsRunning(5);
    expect(await listed(s.socket, 'web')).toEqual([5, 4]);
    // The trimmed record is what was committed: a restarted agent lists the same versions.
    await s.stop();
    s = await serve(dataDir, undefined, opts);
    expect(await listed(s.socket, 'web')).toEqual([5, 4]);
    await s.stop();
  });
});

describe('job revert (PUT /v1/job/:id/revert)', () => {
  it("registers a kept version again as the next one, with Nomad's refusals", async () => {
    const s = await serve();
    const register = async (rev: string) => {
      const body = mockJob('api', undefined, { Meta: { rev } });
      Object.assign(body.Job.TaskGroups[0]!.Tasks[0]!, { KillTimeout: 100e6 });
      expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    };
    for (const rev of ['a', 'b', 'c']) await register(rev);
    const revert = (body: Record<string, unknown>, id = 'api') => call(s.socket, 'PUT', `/v1/job/${id}/revert`, body);

    const reverted = await revert({ JobID: 'api', JobVersion: 0 });
    expect(reverted.status, reverted.text).toBe(200);
    expect(reverted.json()).toMatchObject({ EvalID: expect.any(String), JobModifyIndex: expect.any(Number) });
    const job = (await call(s.socket, 'GET', '/v1/job/api')).json() as { Version: number; Meta: Record<string, string> };
    expect([job.Version, job.Meta]).toEqual([3, { rev: 'a' }]);
    await until(async () => (await call(s.socket, 'GET', '/v1/job/api/allocations')).json() as Alloc[], (l) => l.some((a) => a.JobVersion === 3 && a.ClientStatus === 'running'), 'version 3 running');

    // With the version it expects the job to be at; then Nomad's refusals, nothing registered by them.
    expect((await revert({ JobVersion: 1, EnforcePriorVersion: 3 })).status).toBe(200);
    expect(await listed(s.socket, 'api')).toEqual([4, 3, 2, 1, 0]);
    const refusals = await Promise.all([
      revert({ JobVersion: 4 }),
      revert({ JobVersion: 2, EnforcePriorVersion: 3 }),
      revert({ JobVersion: 99 }),
      revert({ JobVersion: 0 }, 'nosuch'),
      revert({}),
    ]);
    expect(refusals.map((r) => [r.status, r.text])).toEqual([
      [400, "can't revert to current version"],
      [400, 'Current job has version 4; enforcing version 3'],
      [404, 'job "api" in namespace "default" at version 99 not found'],
      [404, 'job "nosuch" not found'],
      [400, expect.stringContaining('JobVersion')],
    ]);
    expect(await listed(s.socket, 'api')).toEqual([4, 3, 2, 1, 0]);

    // The CLI: the history as Nomad prints it, then a revert that waits for its allocation.
    const history = await runCli(['job', 'history', 'api', '--data-dir', s.dataDir], { timeoutMs: 60_000 });
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout.split('\n\n').map((block) => block.split('\n').slice(0, 2))).toEqual([4, 3, 2, 1, 0].map((v) => [`Version     = ${v}`, 'Stable      = false']));
    const cli = await runCli(['job', 'revert', 'api', '2', '--data-dir', s.dataDir], { timeoutMs: 60_000 });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('==> Job "api" reverted to version 2 (now version 5)');
    expect(cli.stdout).toContain('1 allocation(s) of job "api" version 5: running or complete');
    // job inspect: the job as the agent holds it, current or a kept version, in the shape job run takes back.
    const inspected = await runCli(['job', 'inspect', 'api', '--data-dir', s.dataDir], { timeoutMs: 60_000 });
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(JSON.parse(inspected.stdout)).toMatchObject({ Job: { ID: 'api', Version: 5, Meta: { rev: 'c' } } });
    const old = await runCli(['job', 'inspect', '-version', '0', 'api', '--data-dir', s.dataDir], { timeoutMs: 60_000 });
    expect(old.code, old.stderr).toBe(0);
    expect(JSON.parse(old.stdout)).toMatchObject({ Job: { ID: 'api', Version: 0, Meta: { rev: 'a' } } });
    const refused = await runCli(['job', 'revert', 'api', 'latest', '--data-dir', s.dataDir], { timeoutMs: 60_000 });
    expect([refused.code, refused.stderr.split('\n')[0]]).toEqual([2, 'allocrun: job revert: version "latest": expected a job version, a whole number']);
  });
});
