/**
 * Artifacts through the agent: a job registered over the API fetches its artifact once, GET /v1/job shows
 * the artifact as Nomad's TaskArtifact, registering what GET returned is a no-op, and an agent restarted on
 * the same data dir does not fetch again (the hook is Done in the restored snapshot).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { groupUpdate } from '../../src/api/job-diff.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { cleanUp, freshDir, running, serve } from './in-process-agent.ts';
import { removeTempDirs, sha256, startArtifactServer, tarOf, type ArtifactServer } from '../artifacts/artifact-server.ts';

let server: ArtifactServer;
let archive: Buffer;
beforeAll(async () => {
  archive = await tarOf({ 'app/hello.txt': 'hello from the artifact' });
  server = await startArtifactServer({ '/app.tgz': archive });
});
afterAll(() => server.close());
afterEach(async () => {
  await cleanUp();
  await removeTempDirs();
});

const job = (id: string, source: string) => ({
  Job: {
    ID: id,
    Type: 'service',
    TaskGroups: [{
      Name: 'g',
      Count: 1,
      Tasks: [{
        Name: 't',
        Driver: 'mock',
        Config: { run_for: '1h' },
        Artifacts: [{ GetterSource: source, GetterOptions: { checksum: `sha256:${sha256(archive)}` }, GetterHeaders: { 'X-Job': id }, RelativeDest: 'local/dist' }],
      }],
    }],
  },
});

describe('artifacts through the agent', () => {
  it('fetches once, shows the artifact in GET /v1/job, re-registers as a no-op, and does not fetch again after an agent restart', async () => {
    const dataDir = freshDir();
    let s = await serve(dataDir);
    const before = server.count('/app.tgz');
    const put = await call(s.socket, 'PUT', '/v1/jobs', job('fetch', server.url('/app.tgz')));
    expect(put.status, put.text).toBe(200);
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/fetch/allocations', running);
    expect(server.count('/app.tgz') - before).toBe(1);
    expect(server.requests.filter((r) => r.path === '/app.tgz').at(-1)!.headers['x-job']).toBe('fetch');
    const file = join(dataDir, 'allocs', alloc!.ID, 't', 'local', 'dist', 'app', 'hello.txt');
    expect(readFileSync(file, 'utf8')).toBe('hello from the artifact');

    const read = (await call(s.socket, 'GET', '/v1/job/fetch')).json();
    expect(read.TaskGroups[0].Tasks[0].Artifacts).toEqual([{
      GetterSource: server.url('/app.tgz'),
      GetterOptions: { checksum: `sha256:${sha256(archive)}` },
      GetterHeaders: { 'X-Job': 'fetch' },
      GetterMode: 'any',
      GetterInsecure: false,
      RelativeDest: 'local/dist',
      Chown: false,
    }]);
    const again = await call(s.socket, 'PUT', '/v1/jobs', { Job: read });
    expect(again.status, again.text).toBe(200);
    expect(again.json()).toMatchObject({ EvalID: '', Warnings: '', JobModifyIndex: read.JobModifyIndex });

    // The agent goes (its tasks stay, as Nomad's client leaves them), a new one takes the same data dir.
    await s.api.close();
    await s.agent.shutdown();
    await s.store.close();
    s = await serve(dataDir);
    const allocs = await waitForAllocs(s.socket, '/v1/job/fetch/allocations', (l: Alloc[]) => l.some((a) => a.ID === alloc!.ID && a.ClientStatus === 'running'));
    const events = allocs.find((a) => a.ID === alloc!.ID)!.TaskStates['t']!.Events.map((e: { Type: string }) => e.Type);
    expect(events.filter((t: string) => t === 'Downloading Artifacts')).toHaveLength(1);
    expect(server.count('/app.tgz') - before).toBe(1);
    expect(existsSync(file)).toBe(true);
  });

  it('replaces the allocation when a task\'s artifacts change, as Nomad\'s tasksUpdated does', () => {
    const spec = (source: string): AllocSpec => ({ id: 'a', job: 'j', group: 'g', type: 'service', tasks: [{ name: 't', driver: 'mock', config: {}, artifacts: [{ source, destination: 'local/', mode: 'any' }] }] });
    expect(groupUpdate(spec('https://e.com/v1.tgz'), spec('https://e.com/v1.tgz'))).toBe('ignore');
    expect(groupUpdate(spec('https://e.com/v1.tgz'), spec('https://e.com/v2.tgz'))).toBe('destructive');
  });

  it('reports a failed download on the task with Nomad\'s DownloadError', async () => {
    const s = await serve();
    const body = job('missing', server.url('/missing.tgz'));
    body.Job.TaskGroups[0]!.Tasks[0]!.Artifacts[0]!.GetterOptions = {} as never;
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/missing/allocations', (l: Alloc[]) => l.some((a) => (a.TaskStates['t']?.Events ?? []).some((e) => e.Type === 'Failed Artifact Download')));
    const full = (await call(s.socket, 'GET', `/v1/allocation/${alloc!.ID}`)).json();
    const failed = full.TaskStates.t.Events.find((e: { Type: string }) => e.Type === 'Failed Artifact Download');
    expect(failed.DownloadError).toMatch(/^failed to download artifact "http:\/\/127\.0\.0\.1:\d+\/missing\.tgz": .*bad response code: 404$/);
    expect(failed.DisplayMessage).toBe(failed.DownloadError);
    expect(failed.Details.download_error).toBe(failed.DownloadError);
  });

  it('answers a job with an unsupported artifact source with a 400 naming the field', async () => {
    const s = await serve();
    const res = await call(s.socket, 'PUT', '/v1/jobs', job('bad', 's3::https://s3.amazonaws.com/bucket/app.tgz'));
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/Artifacts\[0\]\.GetterSource|artifact\[0\]\.source/);
    expect(res.text).toMatch(/Amazon S3 sources are not supported/);
  });
});
