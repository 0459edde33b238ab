/**
 * The artifacts hook under the task runner (the seeds' scenarios): a failing download is a recoverable
 * prestart error the restart policy retries with Nomad's event sequence; a sibling's failing artifact fails
 * the allocation and the others are killed; fetched artifacts are not fetched again on a task restart.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import type { AllocSpec, RestartPolicy, TaskSpec } from '../../src/jobspec/types.ts';
import { parseJob } from '../../src/jobspec/index.ts';
import { TEST_NODE } from '../properties/world.ts';
import { removeTempDirs, startArtifactServer, tempDir, type ArtifactServer } from '../artifacts/artifact-server.ts';

let server: ArtifactServer;
beforeAll(async () => {
  server = await startArtifactServer({ '/good.txt': Buffer.from('good'), '/app.tpl': Buffer.from('name={{ env "NOMAD_TASK_NAME" }}\n') });
});
afterAll(() => server.close());
afterEach(removeTempDirs);

const restart = (attempts: number): RestartPolicy => ({ attempts, interval: 60_000, delay: 50, mode: 'fail' });

function run(tasks: TaskSpec[], groupRestart: RestartPolicy) {
  const dataDir = tempDir();
  const spec: AllocSpec = { id: `artifacts-${Math.random().toString(36).slice(2, 8)}`, job: 'j', group: 'g', type: 'batch', restart: groupRestart, tasks };
  const runner = createAllocRunner(spec, { dataDir, node: TEST_NODE, hostEnv: {}, seed: 1 }).start();
  return { runner, taskDir: (name: string) => join(dataDir, 'allocs', spec.id, name) };
}

describe('artifacts under the task runner', () => {
  it('retries a bad artifact by the restart policy with Nomad\'s events, then fails the task', async () => {
    const { runner } = run([{ name: 'bad', driver: 'mock', config: { run_for: '1h' }, artifacts: [{ source: server.url('/missing.tgz'), destination: 'local/', mode: 'any' }] }], restart(1));
    const state = await runner.done;
    const bad = state.taskStates['bad']!;
    expect(bad.events.map((e) => e.type)).toEqual([
      'Received', 'Task Setup', 'Downloading Artifacts', 'Failed Artifact Download', 'Restarting',
      'Downloading Artifacts', 'Failed Artifact Download', 'Not Restarting',
    ]);
    expect(bad.state).toBe('dead');
    expect(bad.failed).toBe(true);
    expect(state.clientStatus).toBe('failed');
    const failure = bad.events.find((e) => e.type === 'Failed Artifact Download')!;
    expect(failure.displayMessage).toMatch(/^failed to download artifact "http:\/\/127\.0\.0\.1:\d+\/missing\.tgz": GET .*: bad response code: 404$/);
    expect(failure.details?.['download_error']).toBe(failure.displayMessage);
    expect(bad.events.find((e) => e.type === 'Downloading Artifacts')!.displayMessage).toBe('Client is downloading artifacts');
    expect(server.count('/missing.tgz')).toBe(2);
  });

  it('fails the allocation when a sibling\'s artifact fails, and kills the others', async () => {
    const { runner } = run([
      { name: 'web', driver: 'mock', config: { run_for: '1h' } },
      { name: 'bad', driver: 'mock', config: { run_for: '1h' }, artifacts: [{ source: server.url('/nope'), destination: 'local/', mode: 'any' }] },
    ], restart(0));
    const state = await runner.done;
    expect(state.clientStatus).toBe('failed');
    expect(state.taskStates['bad']!.failed).toBe(true);
    const web = state.taskStates['web']!;
    expect(web.state).toBe('dead');
    expect(web.failed).toBe(false);
    expect(web.events.map((e) => e.type)).toContain('Sibling Task Failed');
  });

  it('does not fetch again when the task restarts: the hook is Done', async () => {
    const before = server.count('/good.txt');
    const { runner, taskDir } = run([{ name: 'worker', driver: 'mock', config: { run_for: '20ms', exit_code: 1 }, artifacts: [{ source: server.url('/good.txt'), destination: 'local/', mode: 'any' }] }], restart(2));
    const state = await runner.done;
    const worker = state.taskStates['worker']!;
    expect(worker.restarts).toBe(2);
    expect(worker.events.filter((e) => e.type === 'Started')).toHaveLength(3);
    expect(worker.events.filter((e) => e.type === 'Downloading Artifacts')).toHaveLength(1);
    expect(server.count('/good.txt') - before).toBe(1);
    expect(readFileSync(join(taskDir('worker'), 'local/good.txt'), 'utf8')).toBe('good');
  });

  it('fetches artifacts before templates render, so a template can be a fetched file', async () => {
    const job = await parseJob(`job "tpl" {
  type = "batch"
  group "g" {
    task "web" {
      driver = "mock"
      config {
        run_for = "10ms"
      }
      artifact {
        source = "${server.url('/app.tpl')}"
      }
      template {
        source      = "local/app.tpl"
        destination = "local/app.conf"
      }
    }
  }
}`, { format: 'hcl' });
    const dataDir = tempDir();
    const spec = job.allocs[0]!;
    const runner = createAllocRunner(spec, { dataDir, node: TEST_NODE, hostEnv: {}, seed: 1 }).start();
    const state = await runner.done;
    expect(state.clientStatus).toBe('complete');
    expect(readFileSync(join(dataDir, 'allocs', spec.id, 'web', 'local', 'app.conf'), 'utf8')).toBe('name=web\n');
  });
});
