import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { firstValueFrom, filter } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { tempDir } from '../temp-dirs.ts';

const sh = (name: string, script: string, extra: Partial<TaskSpec> = {}): TaskSpec => ({
  name,
  driver: 'raw_exec',
  config: { command: '/bin/sh', args: ['-c', script] },
  killSignal: 'SIGTERM',
  ...extra,
});

describe('an allocation of real processes', () => {
  it('runs init, main, a poststart sidecar and a poststop cleanup in lifecycle order', async () => {
    const dataDir = tempDir('allocrun-e2e-');
    const spec: AllocSpec = {
      id: 'e2e1', job: 'demo', group: 'app', type: 'batch',
      tasks: [
        sh('init', 'echo prepared > "$NOMAD_ALLOC_DIR/data/ready"', { lifecycle: { hook: 'prestart' } }),
        // main finishes only once its poststart sidecar is up, so the sidecar's fate is not a race.
        sh('main', 'cat "$NOMAD_ALLOC_DIR/data/ready"; echo "I am ${NOMAD_TASK_NAME} of $NOMAD_JOB_NAME"; until [ -e "$NOMAD_ALLOC_DIR/data/sidecar-up" ]; do sleep 0.02; done'),
        sh('sidecar', 'trap "exit 0" TERM; touch "$NOMAD_ALLOC_DIR/data/sidecar-up"; while :; do sleep 0.05; done', { lifecycle: { hook: 'poststart', sidecar: true } }),
        sh('cleanup', 'echo "main said: $(cat "$NOMAD_ALLOC_DIR/logs/main.stdout.0" | tr "\\n" " ")" > "$NOMAD_ALLOC_DIR/data/cleaned"', { lifecycle: { hook: 'poststop' } }),
      ],
    };
    const runner = createAllocRunner(spec, { dataDir }).start();
    const final = await runner.done;
    const types = (n: string) => final.taskStates[n]!.events.map((e) => e.type);
    expect(final.clientStatus).toBe('complete');
    expect(types('main')).toEqual(['Received', 'Task Setup', 'Started', 'Terminated']);
    expect(types('sidecar')).toEqual(['Received', 'Task Setup', 'Started', 'Main Tasks Dead', 'Killing', 'Terminated', 'Killed']);
    expect(final.taskStates.sidecar!.events[5]).toMatchObject({ exitCode: 0 });
    const allocDir = join(dataDir, 'allocs', 'e2e1', 'alloc');
    expect(await readFile(join(allocDir, 'logs', 'main.stdout.0'), 'utf8')).toBe('prepared\nI am main of demo\n');
    expect(await readFile(join(allocDir, 'data', 'cleaned'), 'utf8')).toBe('main said: prepared I am main of demo \n');
    const f = (n: string) => final.taskStates[n]!.finishedAt!;
    expect(f('init')).toBeLessThanOrEqual(final.taskStates.main!.startedAt!);
    expect(f('sidecar')).toBeLessThanOrEqual(final.taskStates.cleanup!.startedAt!);
  });

  it('a new runner for an alloc id whose dir is left from an earlier run (no snapshot) runs its own task, not the old attempt', async () => {
    const dataDir = tempDir('allocrun-e2e-');
    const spec = (script: string): AllocSpec => ({
      id: 'reused', job: 'demo', group: 'app', type: 'batch',
      tasks: [sh('main', script, { restart: { attempts: 0, interval: 60_000, delay: 0, mode: 'fail' } })],
    });
    const first = await createAllocRunner(spec('exit 3'), { dataDir }).start().done;
    expect(first.taskStates.main!.events.find((e) => e.type === 'Terminated')).toMatchObject({ exitCode: 3 });
    // The first run's attempt 0 left its intent and status in the task dir: they are not this runner's.
    const second = await createAllocRunner(spec('exit 0'), { dataDir }).start().done;
    expect(second.clientStatus).toBe('complete');
    expect(second.taskStates.main!.events.find((e) => e.type === 'Terminated')).toMatchObject({ exitCode: 0 });
  });

  it('reports resource usage of a live task through the alloc stats reporter', async () => {
    const spec: AllocSpec = { id: 'e2e2', job: 'demo', group: 'app', type: 'service', tasks: [sh('busy', 'exec sleep 30')] };
    const runner = createAllocRunner(spec).start();
    const usage = await firstValueFrom(runner.stats$.pipe(filter((u) => u.tasks.busy !== undefined)));
    expect(usage.tasks.busy!.memory.rss).toBeGreaterThan(0);
    expect(runner.latestAllocStats('busy').usage.memoryRss).toBeGreaterThan(0);
    runner.send({ type: 'KILL' });
    const final = await runner.done;
    expect(final.taskStates.busy!.events.find((e) => e.type === 'Terminated')).toMatchObject({ exitCode: 143, signal: 15 });
    expect(runner.latestAllocStats().tasks).toEqual({});
  });

  it('interpolates ${NOMAD_*} and ${node.*} in the driver config', async () => {
    const dataDir = tempDir('allocrun-e2e-');
    const spec: AllocSpec = {
      id: 'e2e3', job: 'demo', group: 'app', type: 'batch',
      tasks: [{ name: 'echo', driver: 'raw_exec', config: { command: '/bin/echo', args: ['${NOMAD_TASK_NAME}', '${node.region}', '${meta.rack}'] } }],
    };
    const node = { id: 'n1', name: 'node-1', datacenter: 'dc1', region: 'eu', attributes: {}, meta: { rack: 'r7' } };
    const runner = createAllocRunner(spec, { dataDir, node }).start();
    expect((await runner.done).clientStatus).toBe('complete');
    expect(await readFile(join(dataDir, 'allocs', 'e2e3', 'alloc', 'logs', 'echo.stdout.0'), 'utf8')).toBe('echo eu r7\n');
  });
});
