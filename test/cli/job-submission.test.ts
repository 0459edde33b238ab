/**
 * The job file kept with each version (src/cli/job-submission.ts, src/api/job-submissions.ts) against one agent
 * served in process, the commands run in this process: `job run` sends the file as `nomad job run` does (HCL as
 * hcl2 with its -var flags and var files' content, Nomad API JSON as json, YAML none), and `job inspect --hcl`
 * prints it back, at the current or a given version, with --with-vars the variables it ran with, and Nomad's error
 * when none is kept.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobCommand } from '../../src/cli/job.ts';
import { variableFlagsOf } from '../../src/cli/job-submission.ts';
import { withVarsLines } from '../../src/cli/job-inspect.ts';
import { runInProcess } from './in-process-command.ts';
import { call } from '../api/agent-process.ts';
import { cleanUp, getOk, mockJob, serveWithRoom, type Served, SUITE_TIMEOUT } from '../api/in-process-agent.ts';

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

/** Runs `allocrun job ...args --data-dir <the agent's>` in process. */
const job = (...args: string[]) => runInProcess(jobCommand, args, s.dataDir);

const hcl = (name: string, note: string) => `# ${note}: kept as written
variable "count" {
  default = 1
}
variable "tag" {}
locals {
  run_for = "1h"
}
job "${name}" {
  meta {
    tag = var.tag
  }
  group "g" {
    count = var.count
    task "t" {
      driver = "mock"
      config {
        run_for = local.run_for
      }
    }
  }
}
`;

async function file(name: string, text: string): Promise<string> {
  const path = join(s.dataDir, name);
  await writeFile(path, text);
  return path;
}

const submission = (id: string, version: number) => getOk(s, `/v1/job/${id}/submission?version=${version}`);

describe('job run sends the job file', { timeout: SUITE_TIMEOUT }, () => {
  it('sends an HCL file as hcl2, with its -var flags and the var files\' content', async () => {
    const path = await file('vars.nomad.hcl', hcl('vars', 'first'));
    const varFile = await file('prod.vars', 'count = 2\n');
    const res = await job('run', path, '-var', 'tag=a=b', '-var-file', varFile, '--detach');
    expect(res.code, res.stderr).toBe(0);
    expect(await submission('vars', 0)).toMatchObject({ Source: hcl('vars', 'first'), Format: 'hcl2', VariableFlags: { tag: 'a=b' }, Variables: 'count = 2\n\n', JobID: 'vars', Version: 0 });
  });

  it('sends Nomad API JSON as json, and a YAML file not at all (Nomad has no such format)', async () => {
    const api = `${JSON.stringify(mockJob('api'), null, 2)}\n`;
    expect((await job('run', await file('api.json', api), '--detach')).code).toBe(0);
    expect(await submission('api', 0)).toMatchObject({ Source: api, Format: 'json', VariableFlags: null, Variables: '' });
    const yaml = 'job:\n  yml:\n    group:\n      g:\n        task:\n          t:\n            driver: mock\n            config:\n              run_for: 1h\n';
    const ran = await job('run', await file('yml.yaml', yaml), '--detach');
    expect(ran.code, ran.stderr).toBe(0);
    expect((await call(s.socket, 'GET', '/v1/job/yml/submission?version=0')).status).toBe(404);
  });

  it('reads -var flags as Nomad does: split at the first =, a name alone is an empty value', () => {
    expect(variableFlagsOf(['a=1', 'b=x=y', 'c', 'a=2'])).toEqual({ a: '2', b: 'x=y', c: '' });
  });
});

describe('job inspect --hcl', { timeout: SUITE_TIMEOUT }, () => {
  it('prints the file of the current version, or of --version, as written', async () => {
    expect((await job('run', await file('ins.nomad.hcl', hcl('ins', 'one')), '-var', 'tag=1', '--detach')).code).toBe(0);
    expect((await job('run', await file('ins.nomad.hcl', hcl('ins', 'two')), '-var', 'tag=2', '--detach')).code).toBe(0);
    const current = await job('inspect', 'ins', '--hcl');
    expect([current.code, current.stdout, current.stderr]).toEqual([0, hcl('ins', 'two'), '']);
    const first = await job('inspect', 'ins', '-hcl', '-version', '0');
    expect([first.code, first.stdout]).toEqual([0, hcl('ins', 'one')]);
  });

  it('says with --with-vars, on stderr, how to run it again with the variables it ran with', async () => {
    const varFile = await file('wv.vars', 'count = 2\n');
    expect((await job('run', await file('wv.nomad.hcl', hcl('wv', 'vars')), '-var', 'tag=a b', '-var-file', varFile, '--detach')).code).toBe(0);
    const res = await job('inspect', 'wv', '--hcl', '--with-vars');
    expect([res.code, res.stdout]).toEqual([0, hcl('wv', 'vars')]);
    expect(res.stderr).toBe("\nTo run this job as originally submitted:\n\n$ allocrun job inspect --hcl wv > wv.nomad.hcl\n$ allocrun job run -var 'tag=a b' -var 'count = 2' wv.nomad.hcl\n");
    const alone = await job('inspect', 'wv', '--with-vars');
    expect([alone.code, alone.stderr]).toEqual([2, expect.stringContaining('can only use --with-vars with --hcl')]);
  });

  it('says Nomad\'s error when no file is kept: a job registered through the API without one, an unknown version', async () => {
    expect((await call(s.socket, 'PUT', '/v1/jobs', mockJob('bare'))).status).toBe(200);
    const res = await job('inspect', 'bare', '--hcl');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('Error inspecting job: job "bare" with version 0 couldn\'t be found');
    expect((await job('inspect', 'bare', '--hcl', '--version', '4')).stderr).toContain('job "bare" with version 4 couldn\'t be found');
    expect((await job('inspect', 'ghost', '--hcl')).stderr).toContain('No job(s) with prefix or id "ghost" found');
  });

  it('names the saved file by its format in the --with-vars note', () => {
    expect(withVarsLines('j', { Format: 'json', VariableFlags: null, Variables: '' })).toContain('$ allocrun job run j.json\n');
  });
});
