/**
 * The versions of a job the agent keeps (Nomad's `job_tracked_versions`, src/api/job-versions.ts): the newest N and
 * any older one an allocation still names, so a job updated for as long as it lives keeps a bounded record.
 */
import { describe, expect, it, afterAll } from 'vitest';
import { keptVersions } from '../../src/api/job-versions.ts';
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
