import { describe, expect, it } from 'vitest';
import { runCli } from './spawn-cli.ts';

describe.concurrent('allocrun usage', { timeout: 60_000 }, () => {
  it('lists the commands with --help', async () => {
    const res = await runCli(['--help']);
    expect(res.code).toBe(0);
    for (const cmd of ['run', 'validate', 'status', 'graph', 'agent', 'replay']) expect(res.stdout).toMatch(new RegExp(`^  ${cmd}\\s`, 'm'));
  });

  it("prints a command's own help with --help", async () => {
    const res = await runCli(['run', '--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Usage: allocrun run <jobfile>/);
    expect(res.stdout).toContain('--data-dir');
  });

  it('names an unknown flag, exits 2 and prints no stack trace', async () => {
    const res = await runCli(['run', 'job.nomad', '--nope']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown flag --nope');
    expect(res.stderr).toContain("allocrun run --help");
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });

  it('names a signal that is none before asking any agent', async () => {
    const res = await runCli(['alloc', 'signal', '-s', 'SIGFOO', '5b1e', '--data-dir', '/nonexistent-allocrun-dir']);
    expect([res.code, res.stderr.split('\n')[0]]).toEqual([2, 'allocrun: alloc signal: -s SIGFOO is not a signal name; e.g. SIGHUP, SIGUSR1, SIGTERM (kill -l lists them)']);
  });

  it('names an unknown command', async () => {
    const res = await runCli(['rnu']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/unknown command "rnu"/);
  });
});
