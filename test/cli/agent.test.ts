import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/runtime/create-agent.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { runCli, startCli } from './spawn-cli.ts';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanup) await c();
});

describe.concurrent('allocrun agent', { timeout: 60_000 }, () => {
  it('restores a running allocation from the data dir and leaves its task running on SIGTERM', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-agent-cli-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    // An earlier agent started the task and shut down, leaving it running: what `agent` must pick up.
    const spec: AllocSpec = {
      id: 'svc1', job: 'web', group: 'api', type: 'service',
      tasks: [{ name: 'server', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['60'] }, killSignal: 'SIGTERM' }],
    };
    const earlier = createAgent({ dataDir });
    const runner = earlier.run(spec);
    await firstValueFrom(runner.state$.pipe(filter((s) => s.taskStates.server!.state === 'running')));
    const { pid } = (runner.actor.getSnapshot().children.server!.getSnapshot() as unknown as { context: { run: { handle: { pid: number } } } }).context.run.handle;
    cleanup.push(() => void (isAlive(pid) && process.kill(pid, 'SIGKILL')));
    await earlier.shutdown();

    const cli = startCli(['agent', '--data-dir', dataDir, '--json']);
    await cli.waitFor(/"type":"task-state","alloc":"svc1","task":"server","state":"running"/);
    expect(JSON.parse(cli.stdout().split('\n')[0]!)).toMatchObject({ type: 'start', allocs: [{ id: 'svc1' }] });
    cli.child.kill('SIGTERM');
    const res = await cli.exited;
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/"type":"exit","code":0,"forced":false,"detached":true/);
    expect(isAlive(pid)).toBe(true);
  });

  it('waits with nothing to restore and stops on SIGTERM', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-agent-cli-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const cli = startCli(['agent', '--data-dir', dataDir]);
    await cli.waitFor(/no allocations to restore/);
    cli.child.kill('SIGTERM');
    const res = await cli.exited;
    expect(res.code).toBe(0);
  });

  it('requires --data-dir or ALLOCRUN_DATA_DIR', async () => {
    const res = await runCli(['agent'], { env: { ALLOCRUN_DATA_DIR: '' } });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--data-dir D is required');
  });

  it('takes its data dir from ALLOCRUN_DATA_DIR, as the client commands do', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-agent-cli-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const cli = startCli(['agent'], { env: { ALLOCRUN_DATA_DIR: dataDir } });
    await cli.waitFor(/no allocations to restore in /);
    expect(cli.stdout()).toContain(`no allocations to restore in ${dataDir}`);
    cli.child.kill('SIGTERM');
    expect((await cli.exited).code).toBe(0);
  });
});
