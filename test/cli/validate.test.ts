import { describe, expect, it } from 'vitest';
import { fixture, ROOT, runCli } from './spawn-cli.ts';

describe.concurrent('allocrun validate', { timeout: 60_000 }, () => {
  it('counts the allocations of a valid job file', async () => {
    const res = await runCli(['validate', fixture('two-groups.nomad')]);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(res.stdout).toBe('valid: 2 allocation(s)\n');
  });

  it('reports an HCL syntax error with its file, line and column and exits 1', async () => {
    const res = await runCli(['validate', fixture('syntax-error.nomad')]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/syntax-error\.nomad:\d+:\d+: /);
    expect(res.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('reports every schema error with its path, line and column', async () => {
    const res = await runCli(['validate', fixture('schema-errors.nomad')]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/schema-errors\.nomad:7:\d+: job\.typos\.group\.work\.task\.main\.kill_timeout: /);
    expect(res.stderr).toMatch(/schema-errors\.nomad:8:\d+: job\.typos\.group\.work\.task\.main\.colour: /);
    expect(res.stderr).toMatch(/^invalid: 2 problem\(s\)/);
  });

  it('reports the broken example with line and column', async () => {
    const res = await runCli(['validate', 'examples/broken.nomad']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/broken\.nomad:\d+:\d+: /);
  });

  it('reports both schema errors of the bad-schema example', async () => {
    const res = await runCli(['validate', 'examples/bad-schema.nomad']);
    expect(res.code).toBe(1);
    const lines = res.stderr.split('\n').filter((l) => /bad-schema\.nomad:\d+:\d+: job\.\S+: /.test(l));
    expect(lines).toHaveLength(2);
  });

  it('says which file it cannot read', async () => {
    const res = await runCli(['validate', 'no/such/job.nomad']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/no\/such\/job\.nomad/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });

  it("job validate: Nomad's words, the same rules", async () => {
    const [ok, bad] = await Promise.all([runCli(['job', 'validate', fixture('two-groups.nomad')]), runCli(['job', 'validate', fixture('schema-errors.nomad')])]);
    expect(ok).toMatchObject({ code: 0, stdout: 'Job validation successful\n', stderr: '' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^Job validation errors:\n2 error\(s\) occurred:\n\t\* .*schema-errors\.nomad:7:\d+: job\.typos\.group\.work\.task\.main\.kill_timeout: /);
  });
});
