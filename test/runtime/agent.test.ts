import { firstValueFrom, filter } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/runtime/create-agent.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { tempDir } from '../temp-dirs.ts';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('agent', () => {
  it('leaves tasks running on shutdown, and a new agent reattaches to them from the data dir', async () => {
    const dataDir = tempDir('allocrun-agent-');
    const spec: AllocSpec = {
      id: 'svc1', job: 'web', group: 'api', type: 'service',
      tasks: [{ name: 'server', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['60'] }, killSignal: 'SIGTERM' }],
    };
    const first = createAgent({ dataDir });
    const runner = first.run(spec);
    await firstValueFrom(runner.state$.pipe(filter((s) => s.taskStates.server!.state === 'running')));
    const taskSnap = runner.actor.getSnapshot().children.server!.getSnapshot() as { context: { run: { handle?: { pid: number } } } };
    const handle = taskSnap.context.run.handle!;
    await first.shutdown();
    expect(isAlive(handle.pid)).toBe(true);

    const second = createAgent({ dataDir });
    const [restored] = await second.start();
    expect(restored).toBeDefined();
    await firstValueFrom(restored!.state$.pipe(filter((s) => s.taskStates.server!.state === 'running')));
    expect(restored!.getState().taskStates.server!.events.filter((e) => e.type === 'Started')).toHaveLength(1);
    restored!.send({ type: 'KILL' });
    const final = await restored!.done;
    expect(final.clientStatus).toBe('complete');
    expect(isAlive(handle.pid)).toBe(false);
    await second.shutdown(); // flushes the final record
    // A finished allocation is not restored again.
    expect(await createAgent({ dataDir }).start()).toEqual([]);
  });

  it('refuses a second allocation with the same id', async () => {
    const agent = createAgent({ dataDir: tempDir('allocrun-agent-') });
    const spec: AllocSpec = { id: 'x', job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: { run_for: '10ms' } }] };
    agent.run(spec);
    expect(() => agent.run(spec)).toThrow('allocation "x" is already running under this agent');
    await agent.get('x')!.done;
    // Its last saves land before the data dir is removed.
    await agent.shutdown();
  });
});
