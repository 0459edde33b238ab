/**
 * What a task can see of the agent: a real agent started with its token, token file and data dir in its
 * environment runs a real raw_exec task that prints its environment; none of the agent's own variables,
 * nor the token, nor the socket's path, is in it, while the rest of the agent's environment is.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli } from '../cli/spawn-cli.ts';
import { call, waitForAllocs } from './agent-process.ts';

const cleanup: (() => Promise<unknown> | void)[] = [];
/** The first test's agent, which the next test reads again. */
const shared: { dataDir?: string } = {};
const dataDirOf = (): string => shared.dataDir!;
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe("the agent's own variables never reach a task", { timeout: 60_000 }, () => {
  it('a raw_exec task printing its env sees neither ALLOCRUN_*, NOMAD_TOKEN, the token nor the socket path', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-task-env-'));
    shared.dataDir = dataDir;
    const secrets = await mkdtemp(join(tmpdir(), 'allocrun-task-env-secret-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }), () => rm(secrets, { recursive: true, force: true }));
    const token = 'f00dfeedf00dfeedf00dfeedf00dfeed';
    const tokenFile = join(secrets, 'token');
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    await chmod(tokenFile, 0o600);
    const socketPath = join(dataDir, 'agent.sock');
    const cli = startCli(['agent', '--data-dir', dataDir, '--http', '127.0.0.1:0', '--json'], {
      env: {
        ALLOCRUN_TOKEN_FILE: tokenFile,
        // What an operator's shell may hold besides: the token for clients, the agent's data dir.
        ALLOCRUN_DATA_DIR: dataDir,
        ALLOCRUN_ADDR: 'http://127.0.0.1:4646',
        NOMAD_TOKEN: token,
        NOMAD_ADDR: `unix://${socketPath}`,
        TASK_ENV_PROBE: 'inherited',
      },
      timeoutMs: 120_000,
    });
    cleanup.push(async () => {
      cli.child.kill('SIGTERM');
      await cli.exited;
    });
    await cli.waitFor(/API listening on http:/);

    const socket = { socketPath };
    // NODE_ID_SEEN: what ${node.unique.id} interpolates to in the task, to hold against the API's node.
    const job = { Job: { ID: 'printenv', Type: 'batch', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Env: { NODE_ID_SEEN: '${node.unique.id}' }, Config: { command: '/usr/bin/env' } }] }] } };
    expect((await call(socket, 'PUT', '/v1/jobs', job)).status).toBe(200);
    const [alloc] = await waitForAllocs(socket, '/v1/job/printenv/allocations', (list) => list.some((a) => a.ClientStatus === 'complete'));
    const out = (await call(socket, 'GET', `/v1/client/fs/logs/${alloc!.ID}?task=t&type=stdout&plain=true`)).text;

    // The task did print its environment, inherited from the agent's: the test can see what it looks for.
    expect(out).toContain('TASK_ENV_PROBE=inherited\n');
    expect(out).toContain('NOMAD_TASK_NAME=t\n');
    const names = out.split('\n').map((l) => l.split('=')[0]);
    expect(names.filter((n) => n!.startsWith('ALLOCRUN_'))).toEqual([]);
    expect(names).not.toContain('NOMAD_TOKEN');
    expect(names).not.toContain('NOMAD_ADDR');
    expect(out).not.toContain(token);
    expect(out).not.toContain(tokenFile);
    expect(out).not.toContain('agent.sock');
  });

  it("interpolates ${node.unique.id} to the node the API serves, the one allocations name", async () => {
    const socket = { socketPath: join(dataDirOf(), 'agent.sock') };
    const [node] = (await call(socket, 'GET', '/v1/nodes')).json<{ ID: string }[]>();
    const [alloc] = (await call(socket, 'GET', '/v1/job/printenv/allocations')).json<{ ID: string; NodeID: string }[]>();
    const out = (await call(socket, 'GET', `/v1/client/fs/logs/${alloc!.ID}?task=t&type=stdout&plain=true`)).text;
    expect(alloc!.NodeID).toBe(node!.ID);
    expect(out).toContain(`NODE_ID_SEEN=${node!.ID}\n`);
  });
});
