/**
 * A rolling update survives the agent's SIGKILL in the middle of it (a real agent process, real raw_exec tasks):
 * the restarted agent goes on from where the dead one was, max_parallel at a time, and when the deployment has
 * succeeded every instance runs the new version exactly once, none of the old version's processes is left, and
 * no instance runs twice. The processes are found by their own command lines (each version sleeps a number no
 * other test uses), counted, never signalled.
 */
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli } from '../cli/spawn-cli.ts';
import { call, startAgent, waitForAllocs, type AgentProcess } from './agent-process.ts';

type Json = Record<string, any>;

/** The job at version `v`: three raw_exec sleeps rolled out one at a time, each healthy after 300 ms running. */
const job = (v: number) => ({
  Job: {
    ID: 'rolled', Type: 'service', Meta: { v: String(v) },
    TaskGroups: [{
      Name: 'g', Count: 3,
      Update: { MaxParallel: 1, HealthCheck: 'task_states', MinHealthyTime: 300e6, HealthyDeadline: 60e9 },
      Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: [String(SLEEP + v)] }, KillTimeout: 1e9 }],
    }],
  },
});
const SLEEP = 7_770;

/** How many live processes run `/bin/sleep <seconds>` (a zombie has no command line, so it is not counted). */
async function sleeping(seconds: number): Promise<number> {
  let n = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline === `/bin/sleep\0${seconds}\0`) n++;
  }
  return n;
}

let agent: AgentProcess | undefined;
afterAll(async () => {
  await agent?.stop();
}, 60_000);

describe('a rolling update across an agent crash', { timeout: 120_000 }, () => {
  it('goes on after a SIGKILL in the middle of it: every instance ends on the new version, once, and nothing of the old one runs', async () => {
    agent = await startAgent();
    expect((await call(agent.socket, 'PUT', '/v1/jobs', job(0))).status).toBe(200);
    await waitForAllocs(agent.socket, '/v1/job/rolled/allocations', (l) => l.filter((a) => a.ClientStatus === 'running').length === 3);
    expect(await sleeping(SLEEP)).toBe(3);

    expect((await call(agent.socket, 'PUT', '/v1/jobs', job(1))).status).toBe(200);
    // Killed once the second replacement is placed: the first one's health let it go, the third has not.
    await waitForAllocs(agent.socket, '/v1/job/rolled/allocations', (l) => l.filter((a) => a.JobVersion === 1).length >= 2);
    agent.cli.child.kill('SIGKILL');
    await agent.cli.exited;

    const next = startCli(['agent', '--data-dir', agent.dataDir, '--json'], { timeoutMs: 20 * 60_000 });
    agent = { ...agent, cli: next };
    await next.waitFor(/API listening on \//);
    const end = Date.now() + 60_000;
    let deployment: Json | null = null;
    while (Date.now() < end) {
      deployment = (await call(agent.socket, 'GET', '/v1/job/rolled/deployment')).json<Json | null>();
      if (deployment?.['JobVersion'] === 1 && deployment['Status'] !== 'running') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(deployment).toMatchObject({ JobVersion: 1, Status: 'successful' });

    const allocs = (await call(agent.socket, 'GET', '/v1/job/rolled/allocations')).json<Json[]>();
    const run = allocs.filter((a) => a['DesiredStatus'] === 'run');
    expect(run.map((a) => [a['Name'], a['JobVersion'], a['ClientStatus']]).sort()).toEqual([['rolled.g[0]', 1, 'running'], ['rolled.g[1]', 1, 'running'], ['rolled.g[2]', 1, 'running']]);
    // Every old allocation was stopped and has finished; each replaced exactly one.
    const old = allocs.filter((a) => a['JobVersion'] === 0);
    expect(old.map((a) => [a['DesiredStatus'], a['ClientStatus']])).toEqual([['stop', 'complete'], ['stop', 'complete'], ['stop', 'complete']]);
    expect(new Set(run.map((a) => a['PreviousAllocation'])).size).toBe(3);
    expect(await sleeping(SLEEP)).toBe(0);
    expect(await sleeping(SLEEP + 1)).toBe(3);
  });
});
