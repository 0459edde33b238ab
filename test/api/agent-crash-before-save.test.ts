/**
 * The narrowest window of an allocation's start: committed, its task spawned, and the agent dead before its
 * runner's first save. The next agent finds an allocation with no runner record, starts its runner, and
 * must find and adopt the process the first one spawned (the driver's start-attempt record), not start
 * the task a second time. Reached deterministically: the fixture agent's runner saves always fail.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentStore } from '../../src/state/agent-store.ts';
import { startCli, ROOT, type CliProcess } from '../cli/spawn-cli.ts';
import { call, processRunning, waitForAllocs } from './agent-process.ts';
import { tempDir } from '../temp-dirs.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/unsaved-runner-agent.ts', import.meta.url));
let root: string | undefined;
let agent: CliProcess | undefined;
const pids = new Set<number>();


afterAll(async () => {
  agent?.child.kill('SIGKILL');
  for (const pid of pids) if (processRunning(pid)) process.kill(pid, 'SIGKILL');
}, 60_000);

describe('an agent killed after a task spawned, before its runner was first saved', { timeout: 120_000 }, () => {
  /** Runs the fixture agent on a fresh data dir until its task runs, then SIGKILLs it; the task's pid. */
  async function spawnedThenKilled(): Promise<{ dataDir: string; starts: string; socket: { socketPath: string }; allocId: string; pid: number }> {
    root = tempDir('allocrun-unsaved-');
    const dataDir = join(root, 'data');
    const starts = join(root, 'starts');
    const socket = { socketPath: join(dataDir, 'agent.sock') };
    const fixture = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dataDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      fixture.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d).includes('API listening') && resolve());
      fixture.once('exit', (code) => reject(new Error(`the fixture agent exited (${code}) before listening`)));
    });
    const script = `echo "$NOMAD_ALLOC_ID $$" >> ${starts}; exec /bin/sleep 600`;
    const job = { Job: { ID: 'once', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', script] }, KillTimeout: 1e9 }] }] } };
    expect((await call(socket, 'PUT', '/v1/jobs', job)).status).toBe(200);
    const [alloc] = await waitForAllocs(socket, '/v1/job/once/allocations', (l) => l.some((a) => a.ClientStatus === 'running'));
    // The task runs; no record of its runner reached the store. Now the agent dies.
    while (!existsSync(starts)) await new Promise((r) => setTimeout(r, 20));
    fixture.kill('SIGKILL');
    await new Promise((r) => fixture.once('exit', r));
    const first = readFileSync(starts, 'utf8').trim().split('\n');
    expect(first).toHaveLength(1);
    const pid = Number(first[0]!.split(' ')[1]);
    pids.add(pid);
    return { dataDir, starts, socket, allocId: alloc!.ID, pid };
  }

  it('is followed by one that adopts the running task instead of starting it again', async () => {
    const { dataDir, starts, socket, allocId, pid } = await spawnedThenKilled();
    agent = startCli(['agent', '--data-dir', dataDir, '--json'], { timeoutMs: 10 * 60_000 });
    await agent.waitFor(/API listening on \//);
    const [again] = await waitForAllocs(socket, '/v1/job/once/allocations', (l) => l.some((a) => a.ID === allocId && a.ClientStatus === 'running'));
    expect(again!.ID).toBe(allocId);
    expect(readFileSync(starts, 'utf8').trim().split('\n'), 'the task was started again').toHaveLength(1);
    expect(processRunning(pid)).toBe(true);

    // And a stop reaches the adopted process.
    expect((await call(socket, 'DELETE', '/v1/job/once')).status).toBe(200);
    await waitForAllocs(socket, '/v1/job/once/allocations', (l) => l.every((a) => a.ClientStatus === 'complete'));
    expect(processRunning(pid)).toBe(false);
    agent.child.kill('SIGTERM');
    await agent.exited;
    agent = undefined;
  });

  it('is followed by one that stops the task when the stop was committed before the crash', async () => {
    const { dataDir, starts, socket, allocId, pid } = await spawnedThenKilled();
    // The job's stop landed in the store (job stopped, allocation desired stop), and the agent died before
    // telling its runner: what `DELETE /v1/job/once` commits.
    const store = AgentStore.open(dataDir);
    const rec = store.get('allocs', allocId) as { desired: string; spec: Record<string, unknown> };
    const job = store.get('jobs', 'once') as { stop: boolean };
    await store.commit((tx) => {
      tx.put('jobs', 'once', { ...job, stop: true });
      tx.put('allocs', allocId, { ...rec, desired: 'stop', desiredDescription: 'alloc not needed due to job update', spec: { ...rec.spec, desiredStatus: 'stop' } });
    });
    await store.close();
    expect(processRunning(pid)).toBe(true);

    agent = startCli(['agent', '--data-dir', dataDir, '--json'], { timeoutMs: 10 * 60_000 });
    await agent.waitFor(/API listening on \//);
    await waitForAllocs(socket, '/v1/job/once/allocations', (l) => l.every((a) => a.ClientStatus === 'complete'));
    expect(processRunning(pid), 'the task outlived a stop its allocation was committed with').toBe(false);
    expect(readFileSync(starts, 'utf8').trim().split('\n'), 'the task was started again').toHaveLength(1);
  });
});
