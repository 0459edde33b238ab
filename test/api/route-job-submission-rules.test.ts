/**
 * Job submissions (src/api/job-submissions.ts) on an in-process agent, as Nomad 1.6+ keeps them: the job file sent
 * with a registration (`Submission`) is kept with the version it registered and answered by
 * `GET /v1/job/:id/submission?version=N` in Nomad's shape; 404 "job source not found" when none is kept; a source
 * over 1 MB discarded with Nomad's warning, the job registered all the same; a format Nomad has not, a 400 naming
 * the field; a revert, a scale and a stop carry the file of the version they copy; submissions pruned with their
 * versions, deleted with a purge (a job registered again never sees them), kept across a restart; a damaged
 * entry named.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, getOk, mockJob, serve, serveWithRoom, SUITE_TIMEOUT } from './in-process-agent.ts';
import { submissionKey } from '../../src/api/job-submissions.ts';

type Json = Record<string, any>;

const HCL = (rev: string) => `# the file as written\nvariable "rev" {}\njob "x" { meta { rev = var.rev } } # ${rev}\n`;
const submission = (rev: string, extra: Json = {}) => ({ Source: HCL(rev), Format: 'hcl2', VariableFlags: { rev }, Variables: 'rev = "file"\n', ...extra });
/** A job of one group, `count` mock tasks (0: no allocation names its versions), its meta `rev`. */
const job = (id: string, rev: string, count = 0, extra: Json = {}) => {
  const body = mockJob(id, { t: { run_for: '1h' } }, { Meta: { rev }, ...extra });
  body.Job.TaskGroups[0]!.Count = count;
  return body;
};

describe('job submissions', { timeout: SUITE_TIMEOUT }, () => {
  afterAll(cleanUp);

  it('keeps the file sent with each version, in Nomad\'s shape, and answers 404 where none was sent', async () => {
    const s = await serveWithRoom();
    const put = async (body: Json) => {
      const res = await call(s.socket, 'PUT', '/v1/jobs', body);
      expect(res.status, res.text).toBe(200);
      return res.json<Json>();
    };
    const first = await put({ ...job('web', 'a'), Submission: submission('a') });
    await put(job('web', 'b'));
    const json = { Source: '{"Job":{}}', Format: 'json' };
    const third = await put({ ...job('web', 'c'), Submission: json });
    expect(await getOk(s, '/v1/job/web/submission?version=0')).toEqual({
      ...submission('a'), Namespace: 'default', JobID: 'web', Version: 0, JobModifyIndex: first['JobModifyIndex'],
    });
    // Without VariableFlags and Variables (Nomad's JSON submission): none, as Nomad's zero values.
    expect(await getOk(s, '/v1/job/web/submission?version=2')).toEqual({ ...json, VariableFlags: null, Variables: '', Namespace: 'default', JobID: 'web', Version: 2, JobModifyIndex: third['JobModifyIndex'] });
    for (const path of ['/v1/job/web/submission?version=1', '/v1/job/web/submission?version=9', '/v1/job/nope/submission?version=0']) {
      const res = await call(s.socket, 'GET', path);
      expect([res.status, res.text], path).toEqual([404, 'job source not found']);
    }
    for (const path of ['/v1/job/web/submission', '/v1/job/web/submission?version=x', '/v1/job/web/submission?version=-1']) {
      const res = await call(s.socket, 'GET', path);
      expect([res.status, res.text], path).toEqual([400, expect.stringContaining('Unable to parse job submission version parameter')]);
    }
    // An unchanged job is no new version (Nomad writes nothing): the file sent with it is not kept either.
    const same = await put({ ...job('web', 'c'), Submission: submission('again') });
    expect(same['EvalID']).toBe('');
    expect((await getOk(s, '/v1/job/web/submission?version=2'))['Source']).toBe(json.Source);
    expect((await call(s.socket, 'GET', '/v1/job/web/submission?version=3')).status).toBe(404);
  });

  it('discards a source over 1 MB with Nomad\'s warning and registers the job; 1 MB exactly is kept', async () => {
    const s = await serveWithRoom();
    // Source, Variables and each flag's name and value count, in bytes: 999,990 + 6 + 2 + 2 = 1,000,000.
    const exact = { Source: 'x'.repeat(999_990), Format: 'hcl2', Variables: 'v = 1\n', VariableFlags: { ab: 'cd' } };
    const kept = await call(s.socket, 'PUT', '/v1/jobs', { ...job('big', 'a'), Submission: exact });
    expect([kept.status, kept.json<Json>()['Warnings']]).toEqual([200, '']);
    expect((await getOk(s, '/v1/job/big/submission?version=0'))['Source']).toHaveLength(999_990);
    const over = await call(s.socket, 'PUT', '/v1/jobs', { ...job('big', 'b'), Submission: { ...exact, Source: `${exact.Source}é` } });
    expect(over.status, over.text).toBe(200);
    expect(over.json<Json>()['Warnings']).toBe('job source size of 1.0 MB exceeds maximum of 1.0 MB and will be discarded');
    expect((await getOk(s, '/v1/job/big'))['Version']).toBe(1);
    expect((await call(s.socket, 'GET', '/v1/job/big/submission?version=1')).status).toBe(404);
  });

  it.each([
    ['a format Nomad has not', { Source: 'a: 1', Format: 'yaml' }, 'Submission.Format: must be one of "hcl2", "json", "hcl1" (how Source is written), not "yaml"'],
    ['no format', { Source: 'job "x" {}' }, 'Submission.Format: must be one of'],
    ['no source', { Format: 'hcl2' }, "Submission.Source: missing: the job file's text"],
    ['a source that is not text', { Source: 7, Format: 'hcl2' }, "Submission.Source: must be a string: the job file's text"],
    ['a flag value that is not text', { Source: '', Format: 'hcl2', VariableFlags: { n: 1 } }, 'Submission.VariableFlags.n: must be a string: the value of a -var flag'],
    ['variables that are not text', { Source: '', Format: 'hcl2', Variables: ['a'] }, "Submission.Variables: must be a string: the var files' content"],
    ['a submission that is not an object', 'job "x" {}', 'Submission: must be a JSON object: { Source, Format, VariableFlags, Variables }'],
  ])('refuses %s with a 400 naming the field, registering nothing', async (_what, sub, message) => {
    const s = await serveWithRoom();
    const res = await call(s.socket, 'PUT', '/v1/jobs', { ...job('bad', 'a'), Submission: sub });
    expect([res.status, res.text]).toEqual([400, expect.stringContaining(message)]);
    expect((await call(s.socket, 'GET', '/v1/job/bad')).status).toBe(404);
  });

  it('gives a revert, a scale and a stop the file of the version they copy, and a job sent back with its Version that version\'s', async () => {
    const s = await serveWithRoom();
    const ok = async (method: string, path: string, body?: unknown) => {
      const res = await call(s.socket, method, path, body);
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    };
    const source = async (v: number) => (await getOk(s, `/v1/job/rv/submission?version=${v}`))['Source'];
    await ok('PUT', '/v1/jobs', { ...job('rv', 'a', 1), Submission: submission('a') });
    await ok('PUT', '/v1/jobs', { ...job('rv', 'b', 1), Submission: submission('b') });
    await ok('PUT', '/v1/job/rv/revert', { JobID: 'rv', JobVersion: 0 });
    expect(await source(2)).toBe(HCL('a'));
    await ok('POST', '/v1/job/rv/scale', { Count: 2, Target: { Group: 'g' } });
    expect(await source(3)).toBe(HCL('a'));
    expect((await getOk(s, '/v1/job/rv/submission?version=3'))['Version']).toBe(3);
    // A job read back (its Version) and sent again without a file keeps that version's; without a Version, none.
    await ok('PUT', '/v1/jobs', job('rv', 'c', 2, { Version: 1 }));
    expect(await source(4)).toBe(HCL('b'));
    await ok('PUT', '/v1/jobs', job('rv', 'd', 2));
    expect((await call(s.socket, 'GET', '/v1/job/rv/submission?version=5')).status).toBe(404);
    await ok('PUT', '/v1/jobs', { ...job('rv', 'e', 2), Submission: submission('e') });
    await ok('DELETE', '/v1/job/rv');
    expect((await getOk(s, '/v1/job/rv'))['Version']).toBe(7);
    expect(await source(7)).toBe(HCL('e'));
  });

  it('prunes the files with their versions and deletes them with a purge: a job registered again never sees them', async () => {
    const s = await serve(undefined, undefined, { api: { gc: { jobTrackedVersions: 2 } } });
    for (const rev of ['a', 'b', 'c']) expect((await call(s.socket, 'PUT', '/v1/jobs', { ...job('pr', rev), Submission: submission(rev) })).status).toBe(200);
    expect((await call(s.socket, 'GET', '/v1/job/pr/submission?version=0')).status).toBe(404);
    expect(s.store.get('meta', submissionKey('pr', 0))).toBeUndefined();
    expect((await getOk(s, '/v1/job/pr/submission?version=2'))['Source']).toBe(HCL('c'));
    expect((await call(s.socket, 'DELETE', '/v1/job/pr?purge=true')).status).toBe(200);
    for (const v of [1, 2]) expect(s.store.get('meta', submissionKey('pr', v))).toBeUndefined();
    expect((await call(s.socket, 'PUT', '/v1/jobs', job('pr', 'a'))).status).toBe(200);
    expect((await call(s.socket, 'GET', '/v1/job/pr/submission?version=0')).status).toBe(404);
    // Even an entry an earlier job of the ID left (written before this version was) is not this version's.
    await s.store.commit((tx) => tx.put('meta', submissionKey('pr', 0), { ...submission('old'), Namespace: 'default', JobID: 'pr', Version: 0, JobModifyIndex: 1 }));
    expect((await call(s.socket, 'GET', '/v1/job/pr/submission?version=0')).status).toBe(404);
  });

  it('deletes the files of a job the server\'s collector takes (system gc), as with a purge', async () => {
    const s = await serveWithRoom();
    expect((await call(s.socket, 'PUT', '/v1/jobs', { ...job('gcd', 'a'), Submission: submission('a') })).status).toBe(200);
    expect((await call(s.socket, 'DELETE', '/v1/job/gcd')).status).toBe(200);
    expect(s.store.get('meta', submissionKey('gcd', 1))).toMatchObject({ Source: HCL('a'), Version: 1 });
    expect((await call(s.socket, 'PUT', '/v1/system/gc')).status).toBe(200);
    expect((await call(s.socket, 'GET', '/v1/job/gcd')).status).toBe(404);
    for (const v of [0, 1]) expect(s.store.get('meta', submissionKey('gcd', v))).toBeUndefined();
  });
});

describe('job submissions across restarts', { timeout: SUITE_TIMEOUT }, () => {
  afterAll(cleanUp);

  it('keeps an acknowledged file across an agent restart', async () => {
    let s = await serve();
    const res = await call(s.socket, 'PUT', '/v1/jobs', { ...job('kept', 'a'), Submission: submission('a') });
    expect(res.status, res.text).toBe(200);
    await s.stop();
    s = await serve(s.dataDir);
    expect(await getOk(s, '/v1/job/kept/submission?version=0')).toMatchObject({ Source: HCL('a'), VariableFlags: { rev: 'a' }, JobModifyIndex: res.json<Json>()['JobModifyIndex'] });
    await s.stop();
  });

  it('answers 500 naming a damaged entry, never reading it as none', async () => {
    const s = await serve();
    expect((await call(s.socket, 'PUT', '/v1/jobs', { ...job('hurt', 'a'), Submission: submission('a') })).status).toBe(200);
    await s.store.commit((tx) => tx.put('meta', submissionKey('hurt', 0), { Source: 1 }));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const res = await call(s.socket, 'GET', '/v1/job/hurt/submission?version=0');
    stderr.mockRestore();
    expect([res.status, res.text]).toEqual([500, expect.stringContaining('meta/jobs.submission/0/hurt: expected a job submission')]);
    await s.stop();
  });
});
