/** An agent that restarts on its data dir serves the same jobs, versions and allocations (a real process each time). */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli } from '../cli/spawn-cli.ts';
import { call, startAgent, waitForAllocs, type AgentProcess } from './agent-process.ts';

const job = (args: string[]) => ({
  Job: { ID: 'keep', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args }, KillTimeout: 1e9 }] }] },
});

let agent: AgentProcess | undefined;
afterAll(async () => {
  await agent?.stop();
}, 60_000);

describe('an agent restarted on its data dir', { timeout: 120_000 }, () => {
  it('keeps its jobs, their versions and the allocations they run', async () => {
    agent = await startAgent();
    await call(agent.socket, 'PUT', '/v1/jobs', job(['300']));
    await call(agent.socket, 'PUT', '/v1/jobs', job(['301']));
    const isCurrent = (a: { JobVersion: number; ClientStatus: string }) => a.JobVersion === 1 && a.ClientStatus === 'running';
    const before = (await waitForAllocs(agent.socket, '/v1/job/keep/allocations', (l) => l.some(isCurrent))).find(isCurrent);
    const indexBefore = Number((await call(agent.socket, 'GET', '/v1/jobs')).headers['x-nomad-index']);
    expect((await stat(join(agent.dataDir, 'state.mdb'))).mode & 0o777).toBe(0o600);

    // SIGTERM: the agent goes, its tasks stay; a new agent takes over the same data dir.
    agent.cli.child.kill('SIGTERM');
    await agent.cli.exited;
    const next = startCli(['agent', '--data-dir', agent.dataDir, '--json'], { timeoutMs: 20 * 60_000 });
    agent = { ...agent, cli: next };
    await next.waitFor(/API listening on \//);

    const versions = (await call(agent.socket, 'GET', '/v1/job/keep/versions')).json().Versions;
    expect(versions.map((v: { Version: number }) => v.Version)).toEqual([1, 0]);
    const allocs = await waitForAllocs(agent.socket, '/v1/job/keep/allocations', (l) => l.some((a) => a.ID === before!.ID));
    expect(allocs.find((a) => a.ID === before!.ID)).toMatchObject({ JobID: 'keep', JobVersion: 1, DesiredStatus: 'run', ClientStatus: 'running' });
    expect(Number((await call(agent.socket, 'GET', '/v1/jobs')).headers['x-nomad-index'])).toBeGreaterThanOrEqual(indexBefore);
    // Registering the same job again is still a no-op: the new agent knows it.
    expect((await call(agent.socket, 'PUT', '/v1/jobs', job(['301']))).json()).toMatchObject({ EvalID: '' });
  });
});
