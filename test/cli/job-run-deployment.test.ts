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

/** A service job of three mock instances rolled out one at a time; `v` is its meta (a change replaces), `task` the mock's config. */
async function jobFile(id: string, v: string, task = 'run_for = "1h"', minHealthy = '200ms', canary = 0): Promise<string> {
  const file = join(agent.dataDir, `${id}-${v}.nomad`);
  await writeFile(file, `job "${id}" {
  meta {
    v = "${v}"
  }
  group "app" {
    count = 3
    update {
      max_parallel     = 1
      min_healthy_time = "${minHealthy}"
      healthy_deadline = "5m"
      canary           = ${canary}
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
    expect(res.stdout).toMatch(/==> Deployment "[0-9a-f]{8}" successful\n {4}ID {10}= [0-9a-f]{8}\n {4}Job ID {6}= rolled\n {4}Job Version = 1\n {4}Status {6}= successful\n {4}Description = Deployment completed successfully\n\n {4}Deployed\n {4}Task Group {2}Desired {2}Placed {2}Healthy {2}Unhealthy {2}Progress Deadline\n {4}app {9}3 {8}3 {7}3 {8}0 {10}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)\n$/);
  });

  it('job status shows the job\'s latest deployment, as nomad job status does', async () => {
    const res = await cli('job', 'status', 'rolled');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/\n\nLatest Deployment\nID {10}= [0-9a-f]{8}\nStatus {6}= successful\nDescription = Deployment completed successfully\n\nDeployed\nTask Group {2}Desired {2}Placed {2}Healthy {2}Unhealthy {2}Progress Deadline\napp {9}3 {8}3 {7}3 {8}0 {10}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)\n\nAllocations\n/);
  });

  it('deployment list and status show it by ID or prefix; fail marks a running one failed, and refuses one that ended', async () => {
    const list = await cli('deployment', 'list');
    expect(list.code, list.stderr).toBe(0);
    const rows = list.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^ID {8}Job ID {2}Job Version {2}Status {6}Description$/);
    // Newest first: version 1's deployment, then version 0's.
    const [newest, oldest] = rows.slice(1).map((r) => r.split(/\s+/));
    expect([newest![1], newest![2], newest![3], oldest![2]]).toEqual(['rolled', '1', 'successful', '0']);

    const status = await cli('deployment', 'status', newest![0]!.slice(0, 4));
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^ID {10}= ${newest![0]}\nJob ID {6}= rolled\nJob Version = 1\nStatus {6}= successful\n`));
    const ended = await cli('deployment', 'fail', newest![0]!);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toContain(`deployment "${newest![0]}" (successful): can't fail terminal deployment`);
    const none = await cli('deployment', 'status', 'ffffffff');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no deployment with ID or prefix "ffffffff"');

    // A slow rollout of version 2: one replacement placed, then the deployment failed by hand.
    await cli('job', 'run', '--detach', await jobFile('rolled', '2', undefined, '1m'));
    const slow = (await cli('deployment', 'list')).stdout.split('\n')[1]!.split(/\s+/)[0]!;
    const failed = await cli('deployment', 'fail', slow);
    expect(failed.code, failed.stderr).toBe(0);
    expect(failed.stdout).toMatch(/^Deployment "[0-9a-f-]{36}" failed\n$/);
    const after = await cli('deployment', 'status', slow);
    expect(after.stdout).toContain('Status      = failed\nDescription = Deployment marked as failed\n');
  });

  it('deployment promote accepts healthy canaries and follows the rest of the rollout to its end', async () => {
    expect((await cli('job', 'run', await jobFile('canaried', '0', undefined, undefined, 1))).code).toBe(0);
    expect((await cli('job', 'run', '--detach', await jobFile('canaried', '1', undefined, undefined, 1))).code).toBe(0);
    const id = (await cli('deployment', 'list')).stdout.split('\n').find((l) => /\scanaried\s+1\s/.test(l))!.split(/\s+/)[0]!;
    const end = Date.now() + 30_000;
    let status = '';
    while (Date.now() < end && !status.includes('requires manual promotion')) status = (await cli('deployment', 'status', id)).stdout;
    expect(status).toMatch(/Description = Deployment is running but requires manual promotion\n\nDeployed\nTask Group {2}Promoted {2}Desired {2}Canaries {2}Placed {2}Healthy {2}Unhealthy {2}Progress Deadline\napp {9}false {5}3 {8}1 {9}1 {7}1 {8}0 {10}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)\n$/);
    const res = await cli('deployment', 'promote', id);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^Deployment "[0-9a-f-]{36}" promoted\nEvaluation ID: [0-9a-f-]{36}\n==> Monitoring deployment/);
    expect(res.stdout).toMatch(/==> Deployment "[0-9a-f]{8}" successful\n[\s\S]*app {9}true {6}3 {8}1 {9}3 {7}3 {8}0 {10}\S+\n$/);
  });

  it('exits 1 when the deployment fails, the instances not replaced still running their version', async () => {
    expect((await cli('job', 'run', await jobFile('sick', '0'))).code).toBe(0);
    const res = await cli('job', 'run', await jobFile('sick', '1', 'run_for = "10ms"\n        exit_code = 1'));
    expect(res.code, res.stdout + res.stderr).toBe(1);
    expect(res.stdout).toMatch(/==> Deployment "[0-9a-f]{8}" failed\n[\s\S]*Description = Failed due to unhealthy allocations\n[\s\S]*app {9}3 {8}1 {7}0 {8}1 {10}\S+\n$/);
    const allocs = await waitForAllocs(agent.socket, '/v1/job/sick/allocations', () => true);
    expect(allocs.filter((a) => a.DesiredStatus === 'run').map((a) => `${a.JobVersion} ${a.ClientStatus}`).sort()).toEqual(['0 running', '0 running', '1 failed']);
  });
});
