/**
 * `allocrun scaling policy list|info` against one agent served in process, run in this process with their output
 * captured: Nomad's columns and target text, IDs cut to 8 characters unless --verbose, info by a unique prefix with
 * the policy block, and Nomad's words for a prefix that matches none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scalingCommand, policyLines, targetText } from '../../src/cli/scaling.ts';
import { runInProcess } from './in-process-command.ts';
import { call } from '../api/agent-process.ts';
import { cleanUp, mockJob, serveWithRoom, SUITE_TIMEOUT, type Served } from '../api/in-process-agent.ts';

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
  const body = mockJob('web');
  Object.assign(body.Job.TaskGroups[0]!, { Count: 2, Scaling: { Min: 1, Max: 5, Policy: { cooldown: '30s' } } });
  expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
});
afterAll(cleanUp);

const scaling = (...args: string[]) => runInProcess(scalingCommand, args, s.dataDir);

describe('scaling policy', { timeout: SUITE_TIMEOUT }, () => {
  it('lists the policies, and shows one by a prefix of its ID', async () => {
    const list = await scaling('policy', 'list');
    const [header, row] = list.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+Enabled\s+Type\s+Target$/);
    expect(row).toMatch(/^[0-9a-f]{8}\s+true\s+horizontal\s+Namespace:default,Job:web,Group:g$/);
    const info = await scaling('policy', 'info', row!.slice(0, 4));
    expect(info.stdout).toMatch(/^ID\s+= [0-9a-f]{8}\nEnabled = true\nTarget\s+= Namespace:default,Job:web,Group:g\nMin\s+= 1\nMax\s+= 5\n\nPolicy:\n\{\n {4}"cooldown": "30s"\n\}\n$/);
    expect((await scaling('policy', 'list', '--verbose')).stdout).toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it("says when no policy has the prefix, and refuses a one-character one", async () => {
    expect((await scaling('policy', 'info', 'zz')).stderr).toContain('No scaling policies with prefix or id "zz" found');
    expect((await scaling('policy', 'info', 'a')).stderr).toBe('Identifier must contain at least two characters.');
    expect((await scaling('policy', 'list', '--job', 'nope')).stdout).toBe('No policies found\n');
  });
});

describe('the pieces', () => {
  it("orders a target's keys as Nomad does, Namespace, Job and Group first", () => {
    expect(targetText({ Group: 'g', Zone: 'z', Job: 'j', Namespace: 'n', Alpha: 'a' })).toBe('Namespace:n,Job:j,Group:g,Alpha:a,Zone:z');
  });

  it('sorts the rows by target', () => {
    const p = (job: string) => ({ ID: `${job}0000000-0000`, Enabled: true, Type: 'horizontal', Target: { Namespace: 'default', Job: job, Group: 'g' } });
    expect(policyLines([p('b'), p('a')], false).slice(1).map((l) => l.slice(0, 8))).toEqual(['a0000000', 'b0000000']);
  });
});
