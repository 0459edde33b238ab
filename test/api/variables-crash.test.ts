/**
 * A real agent killed (SIGKILL) while clients write variables through its API, then started again on the
 * same data dir: every write it acknowledged is there with the value and index it answered, the one write
 * in flight at the kill is either wholly there or wholly absent, and indexes go on from where they were.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli, type CliProcess } from '../cli/spawn-cli.ts';
import { call } from './agent-process.ts';

let root: string | undefined;
let agent: CliProcess | undefined;

afterAll(async () => {
  agent?.child.kill('SIGKILL');
  await agent?.exited.catch(() => undefined);
  if (root) await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}, 60_000);

async function startAgentOn(dataDir: string): Promise<CliProcess> {
  const cli = startCli(['agent', '--data-dir', dataDir, '--json'], { timeoutMs: 10 * 60_000 });
  await cli.waitFor(/API listening on \//);
  return cli;
}

describe('variables and an agent crash', { timeout: 5 * 60_000 }, () => {
  it('keeps every acknowledged put across a SIGKILL, and the write in flight whole or not at all', async () => {
    root = await mkdtemp(join(tmpdir(), 'allocrun-vars-crash-'));
    const dataDir = join(root, 'data');
    const socket = { socketPath: join(dataDir, 'agent.sock') };
    const acked = new Map<string, { n: string; modifyIndex: number }>();
    let inFlight: { path: string; n: string } | undefined;

    for (let round = 0; round < 2; round++) {
      agent = await startAgentOn(dataDir);
      let dead = false;
      const writer = (async () => {
        for (let i = 0; !dead; i++) {
          const path = `app/r${round}/v${i % 5}`;
          const n = `${round}-${i}`;
          inFlight = { path, n };
          try {
            const res = await call(socket, 'PUT', `/v1/var/${path}`, { Items: { n, filler: 'x'.repeat(200) } });
            if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
            acked.set(path, { n, modifyIndex: res.json<{ ModifyIndex: number }>().ModifyIndex });
            inFlight = undefined;
          } catch (err) {
            if (!dead) throw err;
            return;
          }
        }
      })();
      // Kill once some writes are acknowledged: at a moment the writer does not choose.
      const wanted = acked.size + 3;
      const deadline = Date.now() + 60_000;
      while (acked.size < wanted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(acked.size, 'writes acknowledged before the kill').toBeGreaterThanOrEqual(wanted);
      dead = true;
      agent.child.kill('SIGKILL');
      await agent.exited.catch(() => undefined);
      await writer;

      agent = await startAgentOn(dataDir);
      const list = (await call(socket, 'GET', '/v1/vars?prefix=app/')).json<{ Path: string; ModifyIndex: number }[]>();
      for (const [path, want] of acked) {
        const got = (await call(socket, 'GET', `/v1/var/${path}`)).json<{ Items: { n: string }; ModifyIndex: number }>();
        if (inFlight?.path === path) {
          // Either the acknowledged value or the one in flight, never anything else.
          expect([want.n, inFlight.n]).toContain(got.Items.n);
        } else {
          expect([path, got.Items.n, got.ModifyIndex]).toEqual([path, want.n, want.modifyIndex]);
        }
      }
      expect(list.map((m) => m.Path).sort()).toEqual([...new Set([...acked.keys(), ...(inFlight && list.some((m) => m.Path === inFlight!.path) ? [inFlight.path] : [])])].sort());
      // The write in flight, if it landed, is part of what the next round must find.
      if (inFlight) {
        const landed = await call(socket, 'GET', `/v1/var/${inFlight.path}`);
        if (landed.status === 200) acked.set(inFlight.path, { n: landed.json<{ Items: { n: string } }>().Items.n, modifyIndex: landed.json<{ ModifyIndex: number }>().ModifyIndex });
      }
      // Indexes go on: a new write is newer than everything acknowledged before the crash.
      const after = (await call(socket, 'PUT', '/v1/var/after', { Items: { k: 'v' } })).json<{ ModifyIndex: number }>();
      expect(after.ModifyIndex).toBeGreaterThan(Math.max(...[...acked.values()].map((a) => a.modifyIndex)));
      await call(socket, 'DELETE', '/v1/var/after');
      agent.child.kill('SIGTERM');
      await agent.exited.catch(() => undefined);
      agent = undefined;
      inFlight = undefined;
    }
  });
});
