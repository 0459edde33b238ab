import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, runCli } from './spawn-cli.ts';

let dir: string;
let allocId: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'allocrun-status-test-'));
  const res = await runCli(['run', fixture('complete.nomad'), '--data-dir', dir, '--json']);
  expect(res.code).toBe(0);
  allocId = (JSON.parse(res.stdout.split('\n')[0]!) as { allocs: { id: string }[] }).allocs[0]!.id;
}, 30_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.concurrent('allocrun status', { timeout: 60_000 }, () => {
  it('lists the allocations a run left in its data dir', async () => {
    const res = await runCli(['status', '--data-dir', dir]);
    expect(res.code).toBe(0);
    const [header, row] = res.stdout.trim().split('\n');
    expect(header).toMatch(/^ID\s+Job\s+Task Group\s+Desired\s+Status\s+Created\s+Modified$/);
    expect(row).toMatch(/\squick\s+work\s+run\s+complete\s/);
  });

  it("shows one allocation's task states and recent events, like nomad alloc status", async () => {
    const res = await runCli(['status', '--data-dir', dir, allocId]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^ID\s+= /m);
    expect(res.stdout).toMatch(/^Client Status\s+= complete$/m);
    expect(res.stdout).toMatch(/^Task States$/m);
    expect(res.stdout).toMatch(/^init\s+prestart\s+mock\s+dead\s+false\s+0\s/m);
    expect(res.stdout).toMatch(/^Task "cleanup" \(poststop\) is "dead"$/m);
    expect(res.stdout).toMatch(/^Time\s+Type\s+Description$/m);
    expect(res.stdout).toMatch(/Terminated\s+Exit Code: 0/);
  });

  it('finds an allocation by a prefix of its id', async () => {
    const res = await runCli(['status', '--data-dir', dir, allocId.slice(0, 3)]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`= ${allocId}`);
  });

  it('says how to list allocations when the id is unknown', async () => {
    const res = await runCli(['status', '--data-dir', dir, 'zzz-nope']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/no allocation "zzz-nope"/);
  });
});
