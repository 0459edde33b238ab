/**
 * `-var`, `-var-file` and `NOMAD_VAR_*` on the commands that load a job file: validate (in-process, and once
 * as the real binary, where Nomad's single-dash spelling must reach the flags), run and job run (in-process,
 * and job plan, refused at load before anything starts or any agent is asked).
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { jobCommand } from '../../src/cli/job.ts';
import { runCommand } from '../../src/cli/run.ts';
import { validateCommand } from '../../src/cli/validate.ts';
import { variableInputsOf } from '../../src/cli/var-flags.ts';
import { CliError } from '../../src/cli/errors.ts';
import { SpecError, stopHclWorker } from '../../src/jobspec/index.ts';
import { fixture, runCli } from './spawn-cli.ts';

const job = fixture('variables.nomad');
const varFile = fixture('prod.vars.hcl');

afterAll(() => stopHclWorker());
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** Runs a command in-process; its exit status and what it wrote. */
async function inProcess(run: () => Promise<number>): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const code = await run();
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}

describe('variableInputsOf', () => {
  it('reads each var file in order and takes the environment whole (the loader picks NOMAD_VAR_*)', async () => {
    const env = { NOMAD_VAR_release: 'env', PATH: '/bin' };
    const inputs = await variableInputsOf({ var: ['a=1', 'a=2'], 'var-file': [varFile] }, env);
    expect(inputs).toEqual({ args: ['a=1', 'a=2'], files: [{ file: varFile, text: 'instances = 3\nrelease = "file"\n' }], env });
  });

  it('names a var file it cannot read', async () => {
    const err = await variableInputsOf({ 'var-file': ['no/such.vars.hcl'] }, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as Error).message).toBe('cannot read var file no/such.vars.hcl: no such file');
  });
});

describe('allocrun validate with variables', { timeout: 60_000 }, () => {
  it.each<[string, string[], Record<string, string>, string]>([
    ['-var', ['--var', 'release=v2', '--var', 'instances=2'], {}, 'valid: 2 allocation(s)\n'],
    ['-var-file', ['--var-file', varFile], {}, 'valid: 3 allocation(s)\n'],
    ['NOMAD_VAR_*', [], { NOMAD_VAR_release: 'v3', NOMAD_VAR_instances: '4' }, 'valid: 4 allocation(s)\n'],
    ['-var over -var-file over NOMAD_VAR_*', ['--var-file', varFile, '--var', 'instances=5'], { NOMAD_VAR_instances: '4' }, 'valid: 5 allocation(s)\n'],
  ])('takes values from %s', async (_, flags, env, out) => {
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
    const res = await inProcess(() => validateCommand.run([...flags, job]));
    expect(res).toEqual({ code: 0, stdout: out, stderr: '' });
  });

  it('names an unset variable at its declaration, and an undeclared -var', async () => {
    const res = await inProcess(() => validateCommand.run(['--var', 'relase=x', job]));
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${job}:1:1: Undefined -var variable: a "relase" variable was passed in the command line`);
    expect(res.stderr).toContain(`${job}:7:1: variable.release: Unset variable "release"`);
  });

  it('the real binary reads Nomad\'s single-dash -var and -var-file=F', async () => {
    const res = await runCli(['validate', '-var', 'instances=2', `-var-file=${varFile}`, job], { env: { NOMAD_VAR_release: 'x' } });
    expect(res).toMatchObject({ code: 0, stdout: 'valid: 2 allocation(s)\n', stderr: '' });
  });
});

describe('run and job run load the file with the variables before anything starts', () => {
  it.each([
    ['run', () => runCommand.run(['--var', 'nope=1', '--data-dir', '/nonexistent/never-made', job])],
    ['job run', () => jobCommand.run(['run', '--var', 'nope=1', '--address', 'http://127.0.0.1:9', job])],
  ])('%s refuses an undeclared -var', async (_, run) => {
    const err = await run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpecError);
    expect((err as SpecError).message).toContain('Undefined -var variable: a "nope" variable');
  });

  it('job plan refuses an undeclared -var as its other load errors (exit 255)', async () => {
    const err = await jobCommand.run(['plan', '--var', 'nope=1', '--address', 'http://127.0.0.1:9', job]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect(err).toMatchObject({ exitCode: 255, message: expect.stringContaining('Undefined -var variable: a "nope" variable') as unknown as string });
  });

  it('run takes -var (the file loads, the value is used): a bad group is named among the groups', async () => {
    const err = await runCommand.run(['--var', 'release=x', '--group', 'nosuch', job]).catch((e: unknown) => e);
    expect((err as Error).message).toContain('has no group "nosuch" (groups: g)');
  });
});
