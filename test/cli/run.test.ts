import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixture, runCli, startCli } from './spawn-cli.ts';

const dirs: string[] = [];
async function dataDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'allocrun-cli-test-'));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** The plain-output lines of one task's events, e.g. `['Received', 'Task Setup', 'Started', ...]`. */
function eventTypes(stdout: string, task: string): string[] {
  const re = new RegExp(`^\\d\\d:\\d\\d:\\d\\d  ${task}\\s+(\\S+(?: \\S+)*?)\\s{2,}`, 'gm');
  return [...stdout.matchAll(re)].map((m) => m[1]!);
}

describe.concurrent('allocrun run', { timeout: 60_000 }, () => {
  it('runs a job file to completion and exits 0', async () => {
    const dir = await dataDir();
    const res = await runCli(['run', fixture('complete.nomad'), '--data-dir', dir]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`data dir: ${dir}`);
    // Lifecycle order: the prestart task ends before main starts; poststop starts after main ends.
    const out = res.stdout;
    expect(out.indexOf('init') < out.search(/ main\s+Started/)).toBe(true);
    expect(out.search(/ main\s+Terminated/)).toBeLessThan(out.search(/ cleanup\s+Started/));
    expect(eventTypes(out, 'cleanup')).toContain('Terminated');
    expect(out).toMatch(/: complete$/m);
  });

  it('exits 1 when an allocation fails', async () => {
    const res = await runCli(['run', fixture('failing.nomad'), '--data-dir', await dataDir()]);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/main\s+Terminated\s+Exit Code: 1/);
    expect(res.stdout).toMatch(/main\s+Not Restarting/);
    expect(res.stdout).toMatch(/: failed$/m);
  });

  it('kills the allocation on Ctrl-C and runs its poststop task before exiting', async () => {
    const cli = startCli(['run', fixture('long-running.nomad'), '--data-dir', await dataDir()]);
    await cli.waitFor(/ main\s+Started/);
    expect(cli.stdout()).not.toMatch(/cleanup\s+Started/);
    cli.child.kill('SIGINT');
    const res = await cli.exited;
    const afterSignal = res.stdout.slice(res.stdout.indexOf('SIGINT'));
    expect(afterSignal).toMatch(/main\s+Killed/);
    expect(afterSignal).toMatch(/cleanup\s+Started/);
    expect(afterSignal).toMatch(/cleanup\s+Terminated\s+Exit Code: 0/);
    // Killed on request is not a failure: the allocation completes, and the exit status says so.
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/: complete$/m);
  });

  it('stops real processes on Ctrl-C and runs the poststop process, which sees the alloc dir', async () => {
    const dir = await dataDir();
    const cli = startCli(['run', fixture('real-processes.nomad'), '--data-dir', dir, '--json']);
    await cli.waitFor(/"task":"main","event":\{"type":"Started"/);
    cli.child.kill('SIGINT');
    const res = await cli.exited;
    expect(res.code).toBe(0);
    const allocId = (JSON.parse(res.stdout.split('\n')[0]!) as { allocs: { id: string }[] }).allocs[0]!.id;
    expect(await readFile(join(dir, 'allocs', allocId, 'alloc', 'data', 'cleaned'), 'utf8')).toBe('cleaned\n');
    expect(await readFile(join(dir, 'allocs', allocId, 'alloc', 'logs', 'main.stdout.0'), 'utf8')).toBe('working\n');
  });

  it('stops real processes when a terminal\'s Ctrl-C reaches the whole process group, not only the CLI', async () => {
    const dir = await dataDir();
    const cli = startCli(['run', fixture('real-processes.nomad'), '--data-dir', dir, '--json'], { ownGroup: true });
    await cli.waitFor(/"task":"main","event":\{"type":"Started"/);
    process.kill(-cli.child.pid!, 'SIGINT');
    const res = await cli.exited;
    // Every helper process of the CLI's must let the CLI stop the run its own way: the main task is
    // killed (its exit seen, not lost) and the poststop task runs.
    expect(res.stdout).not.toMatch(/lost|cannot be seen/);
    expect(res.code).toBe(0);
    const allocId = (JSON.parse(res.stdout.split('\n')[0]!) as { allocs: { id: string }[] }).allocs[0]!.id;
    expect(await readFile(join(dir, 'allocs', allocId, 'alloc', 'data', 'cleaned'), 'utf8')).toBe('cleaned\n');
  });

  it('exits at once with 130 on a second Ctrl-C', async () => {
    // kill_after keeps the main task "dying" so the first Ctrl-C cannot finish the run by itself.
    const cli = startCli(['run', fixture('slow-to-die.nomad'), '--data-dir', await dataDir()]);
    await cli.waitFor(/ main\s+Started/);
    cli.child.kill('SIGINT');
    await cli.waitFor(/main\s+Killing/);
    cli.child.kill('SIGINT');
    const res = await cli.exited;
    expect(res.code).toBe(130);
    expect(res.stdout).toContain('exiting without waiting');
  });

  it('prints one JSON object per line with --json', async () => {
    const res = await runCli(['run', fixture('complete.nomad'), '--data-dir', await dataDir(), '--json']);
    expect(res.code).toBe(0);
    const records = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records[0]).toMatchObject({ type: 'start', allocs: [expect.objectContaining({ group: 'work' })] });
    expect(records).toContainEqual(expect.objectContaining({ type: 'task-event', task: 'main', event: expect.objectContaining({ type: 'Started' }) }));
    expect(records).toContainEqual(expect.objectContaining({ type: 'task-state', task: 'main', state: 'dead', failed: false }));
    expect(records).toContainEqual(expect.objectContaining({ type: 'alloc-status', status: 'complete' }));
    expect(records.at(-1)).toMatchObject({ type: 'exit', code: 0 });
  });

  it('runs only the group named by --group', async () => {
    const res = await runCli(['run', fixture('two-groups.nomad'), '--group', 'db', '--data-dir', await dataDir()]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/store\s+Terminated/);
    expect(res.stdout).not.toMatch(/serve\s+Started/);
  });

  it('names the groups when --group matches none', async () => {
    const res = await runCli(['run', fixture('two-groups.nomad'), '--group', 'web']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/no group "web" \(groups: api, db\)/);
  });

  it('writes each allocation\'s state to <data-dir>/allocs/<id>/state.json', async () => {
    const dir = await dataDir();
    const res = await runCli(['run', fixture('complete.nomad'), '--data-dir', dir, '--json']);
    const run = JSON.parse(res.stdout.split('\n')[0]!) as { allocs: { id: string }[] };
    const record = JSON.parse(await readFile(join(dir, 'allocs', run.allocs[0]!.id, 'state.json'), 'utf8'));
    expect(record.spec.job).toBe('quick');
    expect(record.state.clientStatus).toBe('complete');
    expect(Object.keys(record.state.taskStates).sort()).toEqual(['cleanup', 'init', 'main']);
  });
});
