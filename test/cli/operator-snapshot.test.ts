/** `allocrun operator snapshot save|restore` against a real agent: a copy taken while it runs starts a new agent. */
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, startAgent, waitForAllocs, type AgentProcess } from '../api/agent-process.ts';
import { runCli, startCli, type CliProcess } from './spawn-cli.ts';

const scratch = mkdtempSync(join(tmpdir(), 'allocrun-snap-'));
let agent: AgentProcess | undefined;
let restored: CliProcess | undefined;
afterAll(async () => {
  restored?.child.kill('SIGKILL');
  await agent?.stop();
  await rm(scratch, { recursive: true, force: true });
}, 60_000);

const job = { Job: { ID: 'web', Meta: { v: '1' }, TaskGroups: [{ Name: 'g', Count: 2, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' } }] }] } };

describe('operator snapshot', { timeout: 120_000 }, () => {
  it('saves a running agent\'s store to a 0600 file that restores into an empty data dir and starts an agent', async () => {
    agent = await startAgent();
    expect((await call(agent.socket, 'PUT', '/v1/jobs', job)).status).toBe(200);
    await waitForAllocs(agent.socket, '/v1/job/web/allocations', (l) => l.filter((a) => a.ClientStatus === 'running').length === 2);
    const file = join(scratch, 'backup.snap');
    const saved = await runCli(['operator', 'snapshot', 'save', file, '--data-dir', agent.dataDir]);
    expect([saved.code, saved.stderr]).toEqual([0, '']);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const into = join(scratch, 'restored');
    const res = await runCli(['operator', 'snapshot', 'restore', file, '--data-dir', into]);
    expect([res.code, res.stderr]).toEqual([0, '']);
    expect(res.stdout).toMatch(/Restored .* 1 jobs, 2 allocations/);
    const again = await runCli(['operator', 'snapshot', 'restore', file, '--data-dir', into]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already has a store .*state\.mdb.*restore into an empty data dir/);

    restored = startCli(['agent', '--data-dir', into, '--json'], { timeoutMs: 10 * 60_000 });
    await restored.waitFor(/API listening on \//);
    const socket = { socketPath: join(into, 'agent.sock') };
    expect((await call(socket, 'GET', '/v1/job/web')).json()).toMatchObject({ ID: 'web', Version: 0, Meta: { v: '1' } });
    expect((await call(socket, 'GET', '/v1/job/web/allocations')).json()).toHaveLength(2);
    restored.child.kill('SIGTERM');
    await restored.exited;
    restored = undefined;
  });

  it('names a file that is not a snapshot and restores nothing', async () => {
    const bogus = join(scratch, 'bogus.snap');
    writeFileSync(bogus, 'not a store at all\n'.repeat(1000));
    const into = join(scratch, 'nothing');
    const res = await runCli(['operator', 'snapshot', 'restore', bogus, '--data-dir', into]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`allocrun: ${bogus} is not an allocrun snapshot: the file is damaged: it is not an LMDB store (no valid page size in its first meta page)\n`);
    expect(existsSync(into)).toBe(false);
  });
});
