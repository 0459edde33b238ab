/**
 * The agent's HTTP API end to end: one real `allocrun agent` process for the file, real HTTP over its unix
 * socket and its TCP address, real processes for the tasks.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatProblem } from '../../src/jobspec/index.ts';
import { loadJob } from '../../src/jobspec/load-job-file.ts';
import { call, callAnnounced, startAgent, stream, waitForAllocs, type AgentProcess, type Alloc } from './agent-process.ts';

/** A Nomad API job whose task runs `script` under /bin/sh (one group `g`, one task `t`). */
function apiJob(id: string, script: string, extra: { count?: number; killTimeoutNs?: number; meta?: Record<string, string>; type?: string; update?: Record<string, unknown> } = {}) {
  return {
    Job: {
      ID: id, Name: id, Type: extra.type ?? 'service', ...(extra.update && { Update: extra.update }),
      TaskGroups: [{
        Name: 'g', Count: extra.count ?? 1,
        Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', script] }, KillTimeout: extra.killTimeoutNs ?? 1e9, ...(extra.meta && { Meta: extra.meta }) }],
      }],
    },
  };
}

/** Sleeps in short steps so the shell runs its traps promptly. */
const IDLE = 'while true; do sleep 0.1; done';

let agent: AgentProcess;
beforeAll(async () => {
  agent = await startAgent({ http: true });
}, 60_000);
afterAll(async () => {
  await agent?.stop();
}, 60_000);

const running = (job: string) => (list: Alloc[]) => list.some((a) => a.JobID === job && a.DesiredStatus === 'run' && a.ClientStatus === 'running');

describe('the agent HTTP API', { timeout: 60_000 }, () => {
  it('listens on a 0600 socket and writes its token to a 0600 file', async () => {
    expect((await stat(join(agent.dataDir, 'agent.sock'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(agent.dataDir, 'agent-token'))).mode & 0o777).toBe(0o600);
    expect((await call(agent.socket, 'GET', '/v1/agent/health')).json()).toEqual({ client: { ok: true, message: 'ok' }, server: { ok: true, message: 'ok' } });
  });

  it('refuses TCP requests without the token or with a wrong one (403), and serves them with it', async () => {
    const { host, port, token } = agent.tcp!;
    expect((await call({ host, port }, 'GET', '/v1/jobs')).status).toBe(403);
    const wrong = await call({ host, port, token: `${token}x` }, 'GET', '/v1/jobs');
    expect([wrong.status, wrong.text]).toEqual([403, 'Permission denied']);
    expect((await call({ host, port, token }, 'GET', '/v1/status/leader')).json()).toMatch(/^127\.0\.0\.1:\d+$/);
    const self = await call({ host, port, token }, 'GET', '/v1/agent/self');
    expect(self.json()).toMatchObject({ member: { Status: 'alive' }, config: { DataDir: agent.dataDir } });
  });

  it('registers Nomad API JSON and runs its allocation', async () => {
    const res = await call(agent.socket, 'PUT', '/v1/jobs', apiJob('plain', IDLE));
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ EvalID: expect.any(String), JobModifyIndex: expect.any(Number), Warnings: '' });
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/plain/allocations', running('plain'));
    const full = (await call(agent.socket, 'GET', `/v1/allocation/${alloc!.ID}`)).json();
    expect(full).toMatchObject({ ID: alloc!.ID, Name: 'plain.g[0]', JobID: 'plain', TaskGroup: 'g', DesiredStatus: 'run', ClientStatus: 'running', DeploymentStatus: null, Job: { ID: 'plain', Version: 0 } });
    expect(full.TaskStates.t.State).toBe('running');
    const job = (await call(agent.socket, 'GET', '/v1/job/plain')).json();
    expect(job).toMatchObject({ ID: 'plain', Status: 'running', Version: 0, Stop: false });
    expect((await call(agent.socket, 'GET', '/v1/job/plain/summary')).json().Summary.g).toMatchObject({ Running: 1 });
  });

  it('reports DeploymentStatus for a job with an update block: Healthy once the task ran min_healthy_time', async () => {
    const update = { MaxParallel: 1, MinHealthyTime: 200e6, HealthyDeadline: 60e9, ProgressDeadline: 120e9 };
    expect((await call(agent.socket, 'PUT', '/v1/jobs', apiJob('healthy', IDLE, { update }))).status).toBe(200);
    const healthy = (list: Alloc[]) => list.some((a) => a.JobID === 'healthy' && (a as { DeploymentStatus?: { Healthy?: boolean } }).DeploymentStatus?.Healthy === true);
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/healthy/allocations', healthy);
    expect(alloc).toMatchObject({ ClientStatus: 'running', DeploymentStatus: { Healthy: true, Timestamp: expect.any(String) } });
    expect((await call(agent.socket, 'DELETE', '/v1/job/healthy?purge=true')).status).toBe(200);
  });

  it('parses HCL with /v1/jobs/parse and registers the result', async () => {
    const hcl = `job "fromhcl" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/sh"\n        args = ["-c", "${IDLE}"]\n      }\n      kill_timeout = "1s"\n    }\n  }\n}\n`;
    const parsed = await call(agent.socket, 'POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true });
    expect(parsed.status).toBe(200);
    expect(parsed.json()).toMatchObject({ ID: 'fromhcl', TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', KillTimeout: 1e9 }] }] });
    expect((await call(agent.socket, 'PUT', '/v1/jobs', { Job: parsed.json() })).status).toBe(200);
    await waitForAllocs(agent.socket, '/v1/job/fromhcl/allocations', running('fromhcl'));
  });

  it('answers an invalid job with 400 and the messages `allocrun validate` gives, and starts nothing', async () => {
    const bad = apiJob('bad', IDLE);
    Object.assign(bad.Job.TaskGroups[0]!.Tasks[0]!, { KillTimeout: 'soon', Drvier: 'x' });
    const res = await call(agent.socket, 'PUT', '/v1/jobs', bad);
    expect(res.status).toBe(400);
    const file = join(agent.dataDir, 'bad.json');
    await writeFile(file, JSON.stringify(bad));
    const problems = await loadJob(file).then(() => [], (err: { problems: { path: string; message: string }[] }) => err.problems);
    expect(problems.length).toBeGreaterThan(0);
    expect(res.text.split('\n')).toEqual(problems.map((p) => formatProblem({ path: p.path, message: p.message })));
    expect((await call(agent.socket, 'GET', '/v1/job/bad')).status).toBe(404);
    const hclRes = await call(agent.socket, 'POST', '/v1/jobs/parse', { JobHCL: 'job "x" {\n  group "g" {\n    task "t" {\n      kill_timeout = 3\n' });
    expect(hclRes.status).toBe(400);
    expect(hclRes.text).toMatch(/^\d+:\d+: /);
  });

  it('answers malformed JSON with 400, an oversize body with 413, unknown jobs, allocs and tasks with 404', async () => {
    const malformed = await call(agent.socket, 'PUT', '/v1/jobs', '{"Job": ');
    expect([malformed.status, malformed.text]).toEqual([400, expect.stringContaining('not valid JSON')]);
    const huge = await callAnnounced(agent.socket, 'PUT', '/v1/jobs', 2 * 1024 * 1024, '{"Job": {"ID": "huge", "Meta": {"pad": "xxxx');
    expect([huge.status, huge.text]).toEqual([413, expect.stringContaining('over the limit')]);
    const noJob = await call(agent.socket, 'PUT', '/v1/jobs', { Jb: {} });
    expect([noJob.status, noJob.text]).toEqual([400, expect.stringContaining('Job')]);
    expect((await call(agent.socket, 'GET', '/v1/job/nope')).status).toBe(404);
    expect((await call(agent.socket, 'GET', '/v1/allocation/nope')).status).toBe(404);
    expect((await call(agent.socket, 'DELETE', '/v1/job/nope')).status).toBe(404);
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/plain/allocations', running('plain'));
    expect((await call(agent.socket, 'POST', `/v1/client/allocation/${alloc!.ID}/restart`, { TaskName: 'nosuch' })).status).toBe(404);
    expect((await call(agent.socket, 'GET', `/v1/client/fs/logs/${alloc!.ID}?task=nosuch&type=stdout`)).status).toBe(404);
    const badSignal = await call(agent.socket, 'POST', `/v1/client/allocation/${alloc!.ID}/signal`, { Signal: 'SIGNOPE' });
    expect([badSignal.status, badSignal.text]).toEqual([400, expect.stringContaining('signal name')]);
  });

  it('restarts a task', async () => {
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/plain/allocations', running('plain'));
    expect((await call(agent.socket, 'POST', `/v1/client/allocation/${alloc!.ID}/restart`, { TaskName: 't', AllTasks: false })).status).toBe(200);
    const [after] = await waitForAllocs(agent.socket, '/v1/job/plain/allocations', (l) => l[0]!.TaskStates.t!.Restarts === 1 && l[0]!.TaskStates.t!.State === 'running');
    expect(after!.TaskStates.t!.Events.map((e) => e.Type)).toEqual(expect.arrayContaining(['Restart Signaled', 'Restarting', 'Started']));
  });

  it('follows logs (-f) and sees a line written after it started; signals reach the task', async () => {
    await call(agent.socket, 'PUT', '/v1/jobs', apiJob('echo', `trap 'echo poked' USR1; echo ready; ${IDLE}`));
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/echo/allocations', running('echo'));
    const logs = await stream(agent.socket, `/v1/client/fs/logs/${alloc!.ID}?task=t&type=stdout&follow=true&plain=true`);
    await logs.until((t) => t.includes('ready\n'));
    expect(logs.text()).not.toContain('poked');
    expect((await call(agent.socket, 'POST', `/v1/client/allocation/${alloc!.ID}/signal`, { Signal: 'SIGUSR1', Task: 't' })).status).toBe(200);
    await logs.until((t) => t.includes('poked\n'));
    logs.close();
    // Nomad's framed form: JSON frames with base64 data.
    const framed = await call(agent.socket, 'GET', `/v1/client/fs/logs/${alloc!.ID}?task=t&type=stdout`);
    const frame = JSON.parse(framed.text.split('\n')[0]!);
    expect(Buffer.from(frame.Data, 'base64').toString()).toBe('ready\npoked\n');
    expect(frame).toMatchObject({ File: 'alloc/logs/t.stdout.0', Offset: 12 });
    const [after] = await waitForAllocs(agent.socket, '/v1/job/echo/allocations', (l) => l[0]!.TaskStates.t!.Events.some((e) => e.Type === 'Signaling'));
    expect(after!.TaskStates.t!.State).toBe('running');
  });

  it('streams job and allocation events as NDJSON with increasing indexes, replaying from an index', async () => {
    const events = await stream(agent.socket, '/v1/event/stream?topic=Job:evjob&topic=Allocation:evjob');
    const reg = (await call(agent.socket, 'PUT', '/v1/jobs', apiJob('evjob', IDLE))).json();
    const text = await events.until((t) => /"Type":"AllocationUpdated".*"ClientStatus":"running"/.test(t));
    events.close();
    const batches = text.trim().split('\n').map((l) => JSON.parse(l)).filter((b) => b.Events);
    expect(batches[0].Events[0]).toMatchObject({ Topic: 'Job', Type: 'JobRegistered', Key: 'evjob', Index: reg.JobModifyIndex, Payload: { Job: { ID: 'evjob' } } });
    expect(batches.flatMap((b) => b.Events).every((e: { Key: string; FilterKeys: string[] }) => e.Key === 'evjob' || e.FilterKeys.includes('evjob'))).toBe(true);
    const indexes = batches.map((b) => b.Index);
    expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    // A late subscriber asks for everything after the registration's index.
    const replay = await stream(agent.socket, `/v1/event/stream?topic=Allocation:evjob&index=${reg.JobModifyIndex - 1}`);
    const replayed = await replay.until((t) => t.includes('"PlanResult"'));
    replay.close();
    expect(JSON.parse(replayed.split('\n')[0]!).Events[0]).toMatchObject({ Topic: 'Allocation', Type: 'PlanResult', FilterKeys: ['evjob'] });
  });

  it('leaves an unchanged job alone, updates in place, and replaces allocations on a destructive change', async () => {
    const first = (await call(agent.socket, 'PUT', '/v1/jobs', apiJob('upd', IDLE))).json();
    const [original] = await waitForAllocs(agent.socket, '/v1/job/upd/allocations', running('upd'));

    const same = (await call(agent.socket, 'PUT', '/v1/jobs', apiJob('upd', IDLE))).json();
    expect(same).toMatchObject({ EvalID: '', JobModifyIndex: first.JobModifyIndex });

    // Kill timeout: applied in place, same allocation, new job version.
    await call(agent.socket, 'POST', '/v1/job/upd', apiJob('upd', IDLE, { killTimeoutNs: 2e9 }));
    const inPlace = await waitForAllocs(agent.socket, '/v1/job/upd/allocations', (l) => l.every((a) => a.JobVersion === 1));
    expect(inPlace.map((a) => [a.ID, a.DesiredStatus, a.ClientStatus])).toEqual([[original!.ID, 'run', 'running']]);

    // Config: the old allocation stops, a new one takes its place.
    await call(agent.socket, 'POST', '/v1/job/upd', apiJob('upd', `echo v2; ${IDLE}`, { killTimeoutNs: 2e9 }));
    const replaced = await waitForAllocs(agent.socket, '/v1/job/upd/allocations', (l) => l.length === 2 && l.some((a) => a.ID === original!.ID && a.ClientStatus === 'complete') && running('upd')(l));
    const old = replaced.find((a) => a.ID === original!.ID)!;
    const fresh = replaced.find((a) => a.ID !== original!.ID)!;
    expect([old.DesiredStatus, old.ClientStatus]).toEqual(['stop', 'complete']);
    expect([fresh.DesiredStatus, fresh.ClientStatus, fresh.JobVersion, fresh.PreviousAllocation]).toEqual(['run', 'running', 2, original!.ID]);

    const versions = (await call(agent.socket, 'GET', '/v1/job/upd/versions')).json().Versions;
    expect(versions.map((v: { Version: number }) => v.Version)).toEqual([2, 1, 0]);
  });

  it('adds and stops allocations when the count changes', async () => {
    await call(agent.socket, 'PUT', '/v1/jobs', apiJob('scale', IDLE, { count: 2 }));
    const two = await waitForAllocs(agent.socket, '/v1/job/scale/allocations', (l) => l.filter((a) => a.ClientStatus === 'running').length === 2);
    await call(agent.socket, 'PUT', '/v1/jobs', apiJob('scale', IDLE, { count: 1 }));
    const one = await waitForAllocs(agent.socket, '/v1/job/scale/allocations', (l) => l.filter((a) => a.ClientStatus === 'complete').length === 1);
    expect(one.filter((a) => a.DesiredStatus === 'run').map((a) => a.ID)).toEqual([two.find((a) => (a as Alloc & { Name: string }).Name === 'scale.g[0]')!.ID]);
  });

  it('applies concurrent registrations of one job one at a time, in order', async () => {
    const timeouts = [1, 2, 3, 4, 5, 6].map((s) => s * 1e9);
    const answers = await Promise.all(timeouts.map((t) => call(agent.socket, 'PUT', '/v1/jobs', apiJob('race', IDLE, { killTimeoutNs: t })).then((r) => r.json())));
    const versions = (await call(agent.socket, 'GET', '/v1/job/race/versions')).json().Versions as { Version: number; JobModifyIndex: number; TaskGroups: { Tasks: { KillTimeout: number }[] }[] }[];
    expect(versions.map((v) => v.Version)).toEqual([5, 4, 3, 2, 1, 0]);
    // Each answer names the version its own body became: the indexes order the versions.
    const byIndex = new Map(versions.map((v) => [v.JobModifyIndex, v.TaskGroups[0]!.Tasks[0]!.KillTimeout]));
    answers.forEach((a, i) => expect(byIndex.get(a.JobModifyIndex)).toBe(timeouts[i]));
    const current = (await call(agent.socket, 'GET', '/v1/job/race')).json();
    expect(current.TaskGroups[0].Tasks[0].KillTimeout).toBe(versions[0]!.TaskGroups[0]!.Tasks[0]!.KillTimeout);
  });

  it('answers a blocking query when the index moves, or after the wait with the same index', async () => {
    const head = await call(agent.socket, 'GET', '/v1/job/plain');
    const index = Number(head.headers['x-nomad-index']);
    const timedOut = await call(agent.socket, 'GET', `/v1/job/plain?index=${index}&wait=300ms`);
    expect([timedOut.status, Number(timedOut.headers['x-nomad-index'])]).toEqual([200, index]);
    const waiting = call(agent.socket, 'GET', `/v1/job/plain?index=${index}&wait=30s`);
    await call(agent.socket, 'PUT', '/v1/jobs', apiJob('plain', IDLE, { meta: { touched: 'yes' } }));
    const moved = await waiting;
    expect(Number(moved.headers['x-nomad-index'])).toBeGreaterThan(index);
    expect(moved.json().TaskGroups[0].Tasks[0].Meta).toEqual({ touched: 'yes' });
  });

  it('stops an allocation and places a replacement; stops and purges a job', async () => {
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/fromhcl/allocations', running('fromhcl'));
    expect((await call(agent.socket, 'POST', `/v1/allocation/${alloc!.ID}/stop`)).status).toBe(200);
    const after = await waitForAllocs(agent.socket, '/v1/job/fromhcl/allocations', (l) => l.length === 2 && running('fromhcl')(l) && l.some((a) => a.ClientStatus === 'complete'));
    expect(after.find((a) => a.ID === alloc!.ID)).toMatchObject({ DesiredStatus: 'stop', ClientStatus: 'complete' });
    expect(after.find((a) => a.ID !== alloc!.ID)).toMatchObject({ PreviousAllocation: alloc!.ID });
    expect((await call(agent.socket, 'GET', `/v1/client/allocation/${after.find((a) => a.ID !== alloc!.ID)!.ID}/stats`)).json()).toMatchObject({ ResourceUsage: { MemoryStats: {}, CpuStats: {} } });

    const stop = await call(agent.socket, 'DELETE', '/v1/job/fromhcl');
    expect(stop.json()).toMatchObject({ JobModifyIndex: expect.any(Number) });
    await waitForAllocs(agent.socket, '/v1/job/fromhcl/allocations', (l) => l.every((a) => a.ClientStatus === 'complete'));
    expect((await call(agent.socket, 'GET', '/v1/job/fromhcl')).json()).toMatchObject({ Stop: true, Status: 'dead' });
    expect((await call(agent.socket, 'DELETE', '/v1/job/fromhcl?purge=true')).status).toBe(200);
    expect((await call(agent.socket, 'GET', '/v1/job/fromhcl')).status).toBe(404);
  });
});
