/**
 * `allocrun node pool list|info|jobs|nodes` (src/cli/node-pool.ts) in Nomad's output, against one agent served in
 * process whose node is in the pool `gpu`; `job run` of a job in a pool that does not exist refused in Nomad's words,
 * of a job in another pool placed nowhere (exit 2, no node eligible); `job status` shows the job's real pool. One real
 * CLI process checks what reaches the shell.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobCommand } from '../../src/cli/job.ts';
import { nodeCommand } from '../../src/cli/node.ts';
import { refuseInfeasible } from '../../src/cli/run-ports.ts';
import { parseJob } from '../../src/jobspec/index.ts';
import { call } from '../api/agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT } from '../api/in-process-agent.ts';
import { runInProcess } from './in-process-command.ts';
import { runCli } from './spawn-cli.ts';

let s: Served;
let nodeId: string;
beforeAll(async () => {
  s = await serve(undefined, undefined, { api: { nodePool: 'gpu' } });
  nodeId = (await call(s.socket, 'GET', '/v1/nodes')).json<{ ID: string }[]>()[0]!.ID;
  await runJob(s, mockJob('trainer', undefined, { NodePool: 'gpu' }));
});
afterAll(cleanUp);

const node = (...args: string[]) => runInProcess(nodeCommand, args, s.dataDir);
const job = (...args: string[]) => runInProcess(jobCommand, args, s.dataDir);
const hcl = (name: string, pool: string) => `job "${name}" {\n  node_pool = "${pool}"\n  group "g" {\n    task "t" {\n      driver = "mock"\n      config {\n        run_for = "1h"\n      }\n    }\n  }\n}\n`;

describe('allocrun node pool', { timeout: SUITE_TIMEOUT }, () => {
  it('lists the pools by name with their descriptions', async () => {
    const res = await node('pool', 'list');
    expect(res).toMatchObject({ code: 0, stdout: ['Name     Description', 'all      Node pool with all nodes in the cluster.', 'default  Default node pool.', 'gpu', ''].join('\n') });
  });

  it('shows one pool, found by a prefix of its name', async () => {
    const res = await node('pool', 'info', 'gp');
    expect(res.stdout).toBe(['Name        = gpu', 'Description =', '', 'Metadata', 'No metadata', '', 'Scheduler Configuration', 'No scheduler configuration', ''].join('\n'));
    expect((await node('pool', 'info', 'default')).stdout).toContain('Description = Default node pool.');
  });

  it('says when a prefix names no pool', async () => {
    const none = await node('pool', 'info', 'x');
    expect([none.code, none.stderr]).toEqual([1, 'Error retrieving node pool: No node pool with prefix "x" found']);
  });

  it('lists a pool\'s jobs, and says so when it has none', async () => {
    const res = await node('pool', 'jobs', 'gpu');
    expect(res.stdout).toMatch(/^ID\s+Type\s+Priority\s+Status\s+Submit Date\ntrainer\s+service\s+50\s+running\s+\S/);
    expect((await node('pool', 'jobs', 'all')).stdout).toBe('No jobs\n');
  });

  it('lists a pool\'s nodes with short IDs (full with --verbose), and says so when it has none', async () => {
    const res = await node('pool', 'nodes', 'all');
    expect(res.stdout.split('\n')[0]).toMatch(/^ID\s+DC\s+Name\s+Class\s+Drain\s+Eligibility\s+Status$/);
    expect(res.stdout.split('\n')[1]).toMatch(new RegExp(`^${nodeId.slice(0, 8)}\\s+dc1\\s+\\S+\\s+false\\s+eligible\\s+ready$`));
    expect((await node('pool', 'nodes', '--verbose', 'gpu')).stdout.split('\n')[1]).toContain(nodeId);
    expect((await node('pool', 'nodes', 'default')).stdout).toBe('No nodes\n');
  });

  it('names what to do for the writes allocrun does not have', async () => {
    const res = await node('pool', 'apply', 'x.hcl');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/node pool apply is not supported: .*--node-pool NAME/);
  });
});

describe('jobs and pools at the CLI', { timeout: SUITE_TIMEOUT }, () => {
  it('refuses to run a job in a pool that does not exist, in Nomad\'s words', async () => {
    const file = join(s.dataDir, 'cpu.nomad');
    await writeFile(file, hcl('cpu-job', 'cpu'));
    const res = await job('run', '--detach', file);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('job "cpu-job" is in nonexistent node pool "cpu"');
  });

  it('registers a job in another pool and places nothing: exit 2, no node eligible', async () => {
    const file = join(s.dataDir, 'default.nomad');
    await writeFile(file, hcl('default-job', 'default'));
    const res = await job('run', file);
    expect(res.code).toBe(2);
    expect(res.stdout).toContain('* No nodes were eligible for evaluation');
  });

  it('shows the job\'s own pool in job status', async () => {
    expect((await job('status', 'trainer')).stdout).toMatch(/^Node Pool\s+= gpu$/m);
    expect((await job('status', 'default-job')).stdout).toMatch(/^Node Pool\s+= default$/m);
  });

  it('lists the pools from a real CLI process', async () => {
    const res = await runCli(['node', 'pool', 'list', '--data-dir', s.dataDir], { timeoutMs: 60_000 });
    expect([res.code, res.stdout.split('\n').map((l) => l.split(' ')[0])]).toEqual([0, ['Name', 'all', 'default', 'gpu', '']]);
  });
});

describe('allocrun run (no agent: this node, in default)', () => {
  it.each([['default', false], ['all', false], ['gpu', true]])('of a job in %s refuses it before anything starts: %s', async (pool, refused) => {
    const loaded = await parseJob(hcl('solo', pool), { format: 'hcl', file: 'solo.nomad' });
    const run = () => refuseInfeasible(loaded.allocs, loaded.job, 'solo.nomad');
    if (refused) expect(run).toThrow('cannot run solo.nomad: group "g": the job\'s node pool "gpu" does not include this node (in node pool "default")');
    else expect(run()).toBe(loaded.allocs);
  });
});
