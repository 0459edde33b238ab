/**
 * `allocrun job scale` and `job scaling-events` against one agent served in process, run in this process with their
 * output captured: the group chosen as Nomad's CLI chooses it, the new count monitored to its allocations, Nomad's
 * refusals with their exit status, and the events table (plain and --verbose) newest first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobCommand } from '../../src/cli/job.ts';
import { runInProcess } from './in-process-command.ts';
import { chosenGroup, countArg, scalingEventLines } from '../../src/cli/job-scale.ts';
import { call } from '../api/agent-process.ts';
import { cleanUp, mockJob, serveWithRoom, SUITE_TIMEOUT, type Served } from '../api/in-process-agent.ts';

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

/** Runs `allocrun job ...args --data-dir <the agent's>` in process. */
const job = (...args: string[]) => runInProcess(jobCommand, args, s.dataDir);

async function register(id: string, groups: string[], scaling?: { Min: number; Max: number }): Promise<void> {
  const body = mockJob(id);
  body.Job.TaskGroups = groups.map((Name) => ({ ...body.Job.TaskGroups[0]!, Name, ...(scaling && { Scaling: scaling }) }));
  const res = await call(s.socket, 'PUT', '/v1/jobs', body);
  expect(res.status, res.text).toBe(200);
}

describe('job scale', { timeout: SUITE_TIMEOUT }, () => {
  it("scales a one-group job's group without naming it, and waits for the allocations", async () => {
    await register('web', ['g']);
    const r = await job('scale', 'web', '3');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('==> Job "web" group "g" scaled from 1 to 3 (version 1)');
    expect(r.stdout).toContain('==> 3 allocation(s) of job "web" version 1: running or complete');
    const events = await job('scaling-events', 'web');
    expect(events.stdout.split('\n')[0]).toMatch(/^Task Group\s+Count\s+PrevCount\s+Date$/);
    expect(events.stdout.split('\n')[1]).toMatch(/^g\s+3\s+1\s+\d{4}-\d\d-\d\dT/);
    const verbose = await job('scaling-events', '--verbose', 'web');
    expect(verbose.stdout).toMatch(/^Task Group\s+Count\s+PrevCount\s+Error\s+Message\s+Eval ID\s+Date$/m);
    expect(verbose.stdout).toContain('false  submitted using the Nomad CLI');
  });

  it('names the group of a job that has several, and prints the evaluation with --detach', async () => {
    await register('two', ['a', 'b']);
    const missing = await job('scale', 'two', '2');
    expect([missing.code, missing.stderr]).toEqual([1, 'Group name required: job has groups "a", "b"']);
    const detached = await job('scale', '--detach', 'two', 'b', '2');
    expect(detached.code, detached.stderr).toBe(0);
    expect(detached.stdout).toMatch(/^Evaluation ID: [0-9a-f-]{36}\n$/);
  });

  it("says the agent's refusal, and names a job the agent does not have", async () => {
    await register('bounded', ['g'], { Min: 1, Max: 2 });
    const over = await job('scale', 'bounded', '5');
    expect([over.code, over.stderr]).toEqual([1, 'Error submitting scaling request: group count was greater than scaling policy maximum: 5 > 2']);
    const ghost = await job('scale', 'ghost', '1');
    expect(ghost.stderr).toContain('Error querying job: no job "ghost" on the agent at');
    expect((await job('scaling-events', 'bounded')).stdout).toBe('No events found\n');
  });
});

describe('the pieces', () => {
  it.each([
    [['g'], undefined, 'g'],
    [['a', 'b'], 'b', 'b'],
  ])('chooses the group of %j named %s', (groups, named, chosen) => {
    expect(chosenGroup(groups, named)).toBe(chosen);
  });

  it('refuses an unknown group and a count that is not a whole number', () => {
    expect(() => chosenGroup(['a'], 'z')).toThrow('Group z not found within job (its groups: "a")');
    expect(() => countArg('2.5')).toThrow('job scale: count "2.5": expected a whole number');
    expect(countArg('0')).toBe(0);
  });

  it('lists the events of every group newest first, a report without a count with an empty Count', () => {
    const t = (s: number) => s * 1e9;
    const lines = scalingEventLines({
      TaskGroups: {
        a: { Desired: 1, Events: [{ Time: t(100), Count: 2, PreviousCount: 1, Message: 'm', Error: false, EvalID: 'e' }] },
        b: { Desired: 1, Events: [{ Time: t(200), Count: null, PreviousCount: 1, Message: 'down', Error: true, EvalID: null }] },
      },
    }, false);
    expect(lines[0]).toMatch(/^Task Group\s+Count\s+PrevCount\s+Date$/);
    expect(lines.slice(1)).toEqual([expect.stringMatching(/^b\s+1\s+1970-01-01T00:03:20Z$/), expect.stringMatching(/^a\s+2\s+1\s+1970-01-01T00:01:40Z$/)]);
    // The empty Count keeps its column: the previous count sits under its header.
    const at = lines[0]!.indexOf('PrevCount');
    expect([lines[1]![at], lines[2]![at]]).toEqual(['1', '1']);
  });
});
