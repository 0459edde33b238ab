/**
 * `allocrun job run` follows a service job's deployment to its end, as `nomad job run` does: against a real agent
 * process, a rolling update (max_parallel = 1, three instances of a mock task) is seen going on one replacement at
 * a time and ends with Nomad's deployment block (exit 0); a deployment whose replacement fails ends with exit 1,
 * the instances not yet replaced still running their version.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, waitForAllocs, type AgentProcess } from '../api/agent-process.ts';
import { runCli } from './spawn-cli.ts';

let agent: AgentProcess;
const cli = (...args: string[]) => runCli([...args, '--data-dir', agent.dataDir], { timeoutMs: 90_000 });

beforeAll(async () => {
  agent = await startAgent();
}, 60_000);
afterAll(async () => {
  await agent?.stop();
}, 60_000);

/** A service job of three mock instances rolled out one at a time; `v` is its meta (a change replaces), `exit` the task's end. */
async function jobFile(id: string, v: string, task = 'run_for = "1h"'): Promise<string> {
  const file = join(agent.dataDir, `${id}-${v}.nomad`);
  await writeFile(file, `job "${id}" {
  meta {
    v = "${v}"
  }
  group "app" {
    count = 3
    update {
      max_parallel     = 1
      min_healthy_time = "200ms"
      healthy_deadline = "1m"
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "mock"
      config {
        ${task}
      }
    }
  }
}
`);
  return file;
}

describe('allocrun job run and a deployment', { timeout: 120_000 }, () => {
  it('follows a rolling update to its end, one replacement at a time, and prints Nomad\'s deployment block', async () => {
    const first = await cli('job', 'run', await jobFile('rolled', '0'));
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toMatch(/==> Deployment "[0-9a-f]{8}" successful\n/);

    const res = await cli('job', 'run', await jobFile('rolled', '1'));
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/==> Monitoring deployment "[0-9a-f]{8}"\n/);
    // A line each time the counts move (a blocking read may see two moves as one): placed and healthy only grow.
    const progress = [...res.stdout.matchAll(/Deployment "[0-9a-f]{8}": app (\d)\/3 placed, (\d) healthy, 0 unhealthy\n/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(progress.length).toBeGreaterThan(0);
    for (let i = 1; i < progress.length; i++) expect(progress[i]![0]! + progress[i]![1]!).toBeGreaterThan(progress[i - 1]![0]! + progress[i - 1]![1]!);
    // One at a time: never more placed than healthy and the one being watched.
    for (const [placed, healthy] of progress) expect(placed).toBeLessThanOrEqual(healthy! + 1);
    expect(res.stdout).toMatch(/==> Deployment "[0-9a-f]{8}" successful\n {4}ID {10}= [0-9a-f]{8}\n {4}Job ID {6}= rolled\n {4}Job Version = 1\n {4}Status {6}= successful\n {4}Description = Deployment completed successfully\n\n {4}Deployed\n {4}Task Group {2}Desired {2}Placed {2}Healthy {2}Unhealthy\n {4}app {9}3 {8}3 {7}3 {8}0\n$/);
  });

  it('job status shows the job\'s latest deployment, as nomad job status does', async () => {
    const res = await cli('job', 'status', 'rolled');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/\n\nLatest Deployment\nID {10}= [0-9a-f]{8}\nStatus {6}= successful\nDescription = Deployment completed successfully\n\nDeployed\nTask Group {2}Desired {2}Placed {2}Healthy {2}Unhealthy\napp {9}3 {8}3 {7}3 {8}0\n\nAllocations\n/);
  });

  it('exits 1 when the deployment fails, the instances not replaced still running their version', async () => {
    expect((await cli('job', 'run', await jobFile('sick', '0'))).code).toBe(0);
    const res = await cli('job', 'run', await jobFile('sick', '1', 'run_for = "10ms"\n        exit_code = 1'));
    expect(res.code, res.stdout + res.stderr).toBe(1);
    expect(res.stdout).toMatch(/==> Deployment "[0-9a-f]{8}" failed\n[\s\S]*Description = Failed due to unhealthy allocations\n[\s\S]*app {9}3 {8}1 {7}0 {8}1\n$/);
    const allocs = await waitForAllocs(agent.socket, '/v1/job/sick/allocations', () => true);
    expect(allocs.filter((a) => a.DesiredStatus === 'run').map((a) => `${a.JobVersion} ${a.ClientStatus}`).sort()).toEqual(['0 running', '0 running', '1 failed']);
  });
});
