/**
 * A real agent whose data dir is a small tmpfs that fills up: registrations the store cannot commit are
 * answered 5xx naming the cause (and said on stderr), reads go on, the agent stays up, and after a SIGKILL
 * and a restart every acknowledged registration is there. Needs root to mount a tmpfs: skipped, saying so,
 * where the machine does not allow it (the store's fault seam covers the same rule in store-writes.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli, type CliProcess } from '../cli/spawn-cli.ts';
import { call } from './agent-process.ts';

const mountPoint = mkdtempSync(join(tmpdir(), 'allocrun-full-'));
/** Whether this machine lets the test mount a 2 MiB tmpfs (root in a sandbox that allows mounts). */
const mounted = (() => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', mountPoint], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let agent: CliProcess | undefined;
afterAll(async () => {
  agent?.child.kill('SIGKILL');
  await agent?.exited;
  if (mounted) execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
  await rm(mountPoint, { recursive: true, force: true });
}, 60_000);

const job = (id: string) => ({
  Job: { ID: id, Meta: { pad: 'p'.repeat(20_000) }, TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' } }] }] },
});

describe.skipIf(!mounted)('an agent whose disk fills up', { timeout: 120_000 }, () => {
  it('answers 5xx for writes it cannot commit, stays up, and loses no acknowledged write', async () => {
    const dataDir = join(mountPoint, 'd');
    const socket = { socketPath: join(dataDir, 'agent.sock') };
    agent = startCli(['agent', '--data-dir', dataDir, '--json'], { timeoutMs: 10 * 60_000 });
    await agent.waitFor(/API listening on \//);
    const acked: string[] = [];
    let refused: { status: number; text: string } | undefined;
    for (let i = 0; i < 400 && !refused; i++) {
      const res = await call(socket, 'PUT', '/v1/jobs', job(`j${i}`));
      if (res.status === 200) acked.push(`j${i}`);
      else refused = { status: res.status, text: res.text };
    }
    expect(acked.length).toBeGreaterThan(0);
    expect(refused, 'the disk never filled up').toBeDefined();
    expect(refused!.status).toBe(500);
    expect(refused!.text).toMatch(/cannot commit to .*state\.mdb: .*\(the file system holding it has \d+ bytes free\)/);
    // Still serving reads, and it said so on stderr.
    expect((await call(socket, 'GET', '/v1/jobs')).status).toBe(200);
    expect(agent.child.exitCode).toBeNull();

    agent.child.kill('SIGKILL');
    const first = await agent.exited;
    expect(first.stderr).toMatch(/allocrun agent: PUT \/v1\/jobs: cannot commit to .*state\.mdb/);
    agent = startCli(['agent', '--data-dir', dataDir, '--json'], { timeoutMs: 10 * 60_000 });
    await agent.waitFor(/API listening on \//);
    const listed = new Set((await call(socket, 'GET', '/v1/jobs')).json<{ ID: string }[]>().map((j) => j.ID));
    expect(acked.filter((id) => !listed.has(id)), 'acknowledged jobs missing after the restart').toEqual([]);
  });
});
