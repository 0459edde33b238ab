/**
 * Templates across an agent restart (real agent processes on one data dir): a render blocked when the agent
 * was killed blocks again in the new agent and is released by a variable written there; a running task's
 * template is rendered again on restore without restarting the task, and its watch resumes, so a later
 * change still restarts it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli } from '../cli/spawn-cli.ts';
import { AgentStore } from '../../src/state/agent-store.ts';
import { variablesOf } from '../../src/variables/variable-store.ts';
import { call, startAgent, waitForAllocs, type AgentProcess } from './agent-process.ts';

let agent: AgentProcess | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
}, 60_000);

const job = (id: string) => ({
  Job: {
    ID: id,
    TaskGroups: [{
      Name: 'g',
      RestartPolicy: { Attempts: 0, Interval: 60e9, Delay: 10e6, Mode: 'fail' },
      Tasks: [{
        Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['300'] }, KillTimeout: 1e9,
        Templates: [{ EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/${id}" }}v={{ .v }}{{ end }}`, DestPath: 'local/v', ChangeMode: 'restart', Splay: 0, Wait: { Min: 0, Max: 0 } }],
      }],
    }],
  },
});

/** Waits until the runner record the agent committed for `allocId` satisfies `ok` (read beside the agent, read-only). */
async function runnerRecordShows(dataDir: string, allocId: string, ok: (record: { state?: { taskStates?: Record<string, { state?: string }> } }) => boolean): Promise<void> {
  const end = Date.now() + 60_000;
  for (;;) {
    const store = AgentStore.open(dataDir, { readOnly: true });
    const record = (() => {
      try {
        return store.get('runners', allocId) as Parameters<typeof ok>[0] | undefined;
      } finally {
        void store.close();
      }
    })();
    if (record && ok(record)) return;
    if (Date.now() > end) throw new Error(`the runner record of ${allocId} never showed what was waited for: ${JSON.stringify(record?.state ?? null).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function restart(signal: NodeJS.Signals): Promise<void> {
  agent!.cli.child.kill(signal);
  await agent!.cli.exited;
  const next = startCli(['agent', '--data-dir', agent!.dataDir, '--json'], { timeoutMs: 20 * 60_000 });
  agent = { ...agent!, cli: next };
  await next.waitFor(/API listening on \//);
}

describe('templates across an agent restart', { timeout: 120_000 }, () => {
  it('a render blocked when the agent was killed blocks again and is released by a variable written to the new agent', async () => {
    agent = await startAgent();
    expect((await call(agent.socket, 'PUT', '/v1/jobs', job('blk'))).status).toBe(200);
    await waitForAllocs(agent.socket, '/v1/job/blk/allocations', (l) => (l[0]?.TaskStates?.t?.Events ?? []).some((e) => e.Type === 'Template'));
    await restart('SIGKILL');
    expect((await call(agent.socket, 'PUT', '/v1/var/nomad/jobs/blk', { Items: { v: '1' } })).status).toBe(200);
    const [running] = await waitForAllocs(agent.socket, '/v1/job/blk/allocations', (l) => l[0]?.TaskStates?.t?.State === 'running');
    expect(await readFile(join(agent.dataDir, 'allocs', running!.ID, 't', 'local', 'v'), 'utf8')).toBe('v=1');
  });

  it('a variable changed while the agent was down is acted on when the agent restores the task', async () => {
    agent = await startAgent();
    await call(agent.socket, 'PUT', '/v1/var/nomad/jobs/down', { Items: { v: '1' } });
    expect((await call(agent.socket, 'PUT', '/v1/jobs', job('down'))).status).toBe(200);
    const [before] = await waitForAllocs(agent.socket, '/v1/job/down/allocations', (l) => l[0]?.TaskStates?.t?.State === 'running');
    // Killed once the runner's own record says running: the API shows a state before the runner's save of it,
    // and a kill in between restores a task still starting, which renders again before it starts (no restart).
    await runnerRecordShows(agent.dataDir, before!.ID, (r) => r.state?.taskStates?.t?.state === 'running');
    agent.cli.child.kill('SIGKILL');
    await agent.cli.exited;
    // Written while no agent runs: straight into its store, as a write the dead agent had committed.
    const store = AgentStore.open(agent.dataDir);
    const vars = variablesOf(store);
    await vars.put('default', 'nomad/jobs/down', { v: '2' }, { cas: vars.get('nomad/jobs/down')!.ModifyIndex });
    await store.close();
    const next = startCli(['agent', '--data-dir', agent.dataDir, '--json'], { timeoutMs: 20 * 60_000 });
    agent = { ...agent, cli: next };
    await next.waitFor(/API listening on \//);
    const [restarted] = await waitForAllocs(agent.socket, '/v1/job/down/allocations', (l) => l[0]?.TaskStates?.t?.Restarts === 1 && l[0]!.TaskStates.t!.State === 'running', 60_000).catch((err: Error) => {
      // What the restored agent said, for a run that never gets there (seen twice under heavy load, not reproduced).
      throw new Error(`${err.message}\nthe restored agent's output: ${next.stdout().slice(-3000)}`);
    });
    expect(restarted!.ID).toBe(before!.ID);
    expect(restarted!.TaskStates.t!.Events.some((e) => e.Type === 'Restart Signaled' && e.DisplayMessage === 'Template with change_mode restart re-rendered')).toBe(true);
    expect(await readFile(join(agent.dataDir, 'allocs', before!.ID, 't', 'local', 'v'), 'utf8')).toBe('v=2');
  });

  it('a running task keeps running through the restore, and a change after it still restarts the task', async () => {
    agent = await startAgent();
    await call(agent.socket, 'PUT', '/v1/var/nomad/jobs/run', { Items: { v: '1' } });
    expect((await call(agent.socket, 'PUT', '/v1/jobs', job('run'))).status).toBe(200);
    const [before] = await waitForAllocs(agent.socket, '/v1/job/run/allocations', (l) => l[0]?.TaskStates?.t?.State === 'running');
    await restart('SIGTERM');
    const [after] = await waitForAllocs(agent.socket, '/v1/job/run/allocations', (l) => l[0]?.ID === before!.ID && l[0]!.TaskStates?.t?.State === 'running');
    expect(after!.TaskStates.t!.Restarts).toBe(0);
    // The restore's render ran and the watch is live: a write restarts the task through the template.
    await call(agent.socket, 'PUT', '/v1/var/nomad/jobs/run?cas=' + String((await call(agent.socket, 'GET', '/v1/var/nomad/jobs/run')).json().ModifyIndex), { Items: { v: '2' } });
    const [restarted] = await waitForAllocs(agent.socket, '/v1/job/run/allocations', (l) => l[0]?.TaskStates?.t?.Restarts === 1 && l[0]!.TaskStates.t!.State === 'running');
    expect(restarted!.TaskStates.t!.Events.some((e) => e.Type === 'Restart Signaled' && e.DisplayMessage === 'Template with change_mode restart re-rendered')).toBe(true);
    expect(await readFile(join(agent.dataDir, 'allocs', before!.ID, 't', 'local', 'v'), 'utf8')).toBe('v=2');
  });
});
