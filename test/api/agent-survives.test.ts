/**
 * Issue 24: a kill racing a task's own exit took the agent down (an unhandled AbortError from raw_exec's
 * shutdown), 3 runs of 3 within seconds with 5 jobs whose tasks restart while exiting on their own. Here a
 * real agent process runs such jobs and has them stopped, round after round, while their tasks keep
 * exiting and restarting: the agent must be alive after every round, its stderr free of unhandled errors.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { call, processRunning, startAgent, waitForAllocs, type AgentProcess } from './agent-process.ts';

/** Rounds of register, let them churn, stop all; AGENT_RACE_ROUNDS for a longer run. */
const ROUNDS = Number(process.env.AGENT_RACE_ROUNDS ?? 4);
const JOBS = 5;
const TASKS = 4;

/** A service job whose tasks live a few tens of milliseconds and are restarted at once, over and over. */
const churningJob = (id: string) => ({
  Job: {
    ID: id,
    Type: 'service',
    TaskGroups: [
      {
        Name: 'g',
        RestartPolicy: { Attempts: 100_000, Interval: 3_600e9, Delay: 1e6, Mode: 'delay' },
        Tasks: Array.from({ length: TASKS }, (_, i) => ({
          Name: `t${i}`,
          Driver: 'raw_exec',
          Config: { command: '/bin/sh', args: ['-c', `sleep 0.0${i + 1}`] },
          KillTimeout: 5e9,
        })),
      },
    ],
  },
});


let agent: AgentProcess | undefined;
afterAll(async () => {
  if (agent && processRunning(agent.cli.child.pid!)) await agent.stop();
  else agent?.cli.child.kill('SIGKILL');
}, 120_000);

describe('an agent whose tasks exit on their own while they are being stopped', { timeout: 600_000 }, () => {
  it('stays alive through every round of stops, with no unhandled error on stderr', async () => {
    agent = await startAgent();
    const pid = agent.cli.child.pid!;
    let stderr = '';
    agent.cli.child.stderr!.on('data', (d: string | Buffer) => (stderr += d.toString()));
    const ids = Array.from({ length: JOBS }, (_, i) => `churn-${i}`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const id of ids) expect((await call(agent.socket, 'PUT', '/v1/jobs', churningJob(id))).status).toBe(200);
      // Every task has exited on its own and been restarted at least once: the stops land mid-churn.
      await waitForAllocs(agent.socket, '/v1/allocations', (list) => {
        const live = list.filter((a) => a.ClientStatus === 'running');
        return live.length === JOBS && live.every((a) => Object.values(a.TaskStates).every((t) => t.Restarts >= 1));
      });
      await Promise.all(ids.map((id) => call(agent!.socket, 'DELETE', `/v1/job/${id}?purge=true`)));
      await waitForAllocs(agent.socket, '/v1/allocations', (list) => list.every((a) => a.ClientStatus !== 'running' && a.ClientStatus !== 'pending'));
      expect(processRunning(pid), `the agent died in round ${round + 1}:\n${stderr}`).toBe(true);
    }
    expect(stderr).not.toMatch(/AbortError|unhandled rejection|uncaught exception/i);
  });
});
