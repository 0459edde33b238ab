/**
 * `allocrun agent`'s token and permissions as an operator meets them: every refusal names the flag,
 * variable or file and says how to fix it, before the agent serves anything; a good token file is used
 * and said so; the CLI client finds the token the way the agent takes it.
 */
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../api/agent-process.ts';
import { runCli, startCli, type CliProcess } from './spawn-cli.ts';

const cleanup: (() => Promise<unknown> | void)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function privateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'allocrun-agent-token-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function tokenFileIn(dir: string, token: string, mode = 0o600): Promise<string> {
  const file = join(dir, 'token');
  await writeFile(file, `${token}\n`, { mode });
  await chmod(file, mode);
  return file;
}

/** Starts an agent on TCP and waits for its start message; stopped after the file. */
async function serving(args: string[], env: Record<string, string> = {}): Promise<{ cli: CliProcess; port: number }> {
  const cli = startCli(['agent', ...args, '--http', '127.0.0.1:0', '--json'], { env, timeoutMs: 120_000 });
  cleanup.push(async () => {
    cli.child.kill('SIGTERM');
    await cli.exited;
  });
  await cli.waitFor(/API listening on http:\/\/127\.0\.0\.1:\d+/);
  return { cli, port: Number(/API listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(cli.stdout())![1]) };
}

const GOOD = '0123456789abcdef0123456789abcdef';

describe.concurrent('allocrun agent refuses a weak or exposed token before serving', { timeout: 60_000 }, () => {
  it('refuses an empty ALLOCRUN_TOKEN, naming the variable, and writes no token file', async () => {
    const dir = await privateDir();
    const res = await runCli(['agent', '--data-dir', dir, '--http', '127.0.0.1:0'], { env: { ALLOCRUN_TOKEN: '' } });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('allocrun: ALLOCRUN_TOKEN is empty: an empty token would let anyone in');
    expect(res.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(dir, 'agent-token'))).toBe(false);
    expect(existsSync(join(dir, 'agent.sock'))).toBe(false);
  });

  it('refuses an empty or short --token, and warns that a --token is readable by every local user', async () => {
    const dir = await privateDir();
    const empty = await runCli(['agent', '--data-dir', dir, '--http', '127.0.0.1:0', '--token', '']);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('--token is empty');
    expect(empty.stderr).toContain('/proc/<pid>/cmdline); prefer --token-file FILE');
    const short = await runCli(['agent', '--data-dir', dir, '--http', '127.0.0.1:0', '--token', 'x']);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('--token is 1 character long; a token needs at least 16');
  });

  it('leaves no data dir behind when it refuses a start for its flags', async () => {
    const dir = join(await privateDir(), 'not-made');
    const res = await runCli(['agent', '--data-dir', dir, '--http', '127.0.0.1:0', '--token', 'x']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('--token is 1 character long');
    expect(existsSync(dir), 'the data dir of a refused start').toBe(false);
  });

  it('refuses a --token-file that others can read, with the chmod that fixes it', async () => {
    const dir = await privateDir();
    const file = await tokenFileIn(await privateDir(), GOOD, 0o644);
    const res = await runCli(['agent', '--data-dir', dir, '--http', '127.0.0.1:0', '--token-file', file]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`token file ${file} is not private: its group and others can read it (mode 0644); run 'chmod 600 ${file}'`);
  });

  it('refuses a data dir that others can enter, with the chmod that fixes it, even without --http', async () => {
    const parent = await privateDir();
    const dir = join(parent, 'data');
    await mkdir(dir, { mode: 0o755 });
    await chmod(dir, 0o755);
    const res = await runCli(['agent', '--data-dir', dir]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`the data dir ${dir} is not private`);
    expect(res.stderr).toContain(`run 'chmod 700 ${dir}'`);
    expect(existsSync(join(dir, 'agent.sock'))).toBe(false);
  });

  it('refuses a non-loopback address without a token given by the operator', async () => {
    const dir = join(await privateDir(), 'new');
    const res = await runCli(['agent', '--data-dir', dir, '--http', '0.0.0.0:0']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('is not a loopback address: give a token (--token-file FILE or ALLOCRUN_TOKEN_FILE)');
    // Refused before the data dir is made, so before the store is opened and anything restored.
    expect(res.stdout).not.toContain('agent restored');
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses a second agent on a data dir another agent serves, before it opens the store or restores anything', async () => {
    const dir = await privateDir();
    await serving(['--data-dir', dir]);
    const second = await runCli(['agent', '--data-dir', dir]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`another agent is already serving ${dir} (its socket ${join(dir, 'agent.sock')} answers)`);
    expect(second.stdout).not.toContain('agent restored');
  });
});

describe('allocrun agent with a good token', { timeout: 60_000 }, () => {
  it('reads --token-file, says where the token is, writes none of its own, and lets only that token in', async () => {
    const dir = await privateDir();
    const file = await tokenFileIn(await privateDir(), GOOD);
    const { cli, port } = await serving(['--data-dir', dir, '--token-file', file]);
    expect(cli.stdout()).toContain(`X-Nomad-Token required; token from --token-file ${file}`);
    expect(existsSync(join(dir, 'agent-token'))).toBe(false);
    expect((await stat(join(dir, 'agent.sock'))).mode & 0o777).toBe(0o600);
    const to = { host: '127.0.0.1', port };
    expect((await call({ ...to, token: GOOD }, 'GET', '/v1/jobs')).status).toBe(200);
    expect((await call({ ...to, token: GOOD.slice(0, -1) }, 'GET', '/v1/jobs')).status).toBe(403);
    expect((await call({ ...to, token: '' }, 'GET', '/v1/jobs')).status).toBe(403);

    // The CLI client finds the same token through each of the ways the README lists.
    const address = `http://127.0.0.1:${port}`;
    const none = { ALLOCRUN_TOKEN: '', ALLOCRUN_TOKEN_FILE: '', NOMAD_TOKEN: '', ALLOCRUN_DATA_DIR: '' };
    for (const env of [{ ALLOCRUN_TOKEN_FILE: file }, { ALLOCRUN_TOKEN: GOOD }, { NOMAD_TOKEN: GOOD }]) {
      const res = await runCli(['job', 'status', '--address', address], { env: { ...none, ...env } });
      expect([res.code, res.stdout, res.stderr]).toEqual([0, 'No running jobs\n', '']);
    }
    const withFile = await runCli(['job', 'status', '--address', address, '--token-file', file], { env: none });
    expect(withFile.code).toBe(0);
    const without = await runCli(['job', 'status', '--address', address], { env: none });
    expect(without.code).toBe(1);
    expect(without.stderr).toContain('wants its token (--token-file F, $ALLOCRUN_TOKEN_FILE, $ALLOCRUN_TOKEN or $NOMAD_TOKEN');
  });

  it('generates a 256-bit token in the data dir on loopback, says so, and the client finds it through --data-dir', async () => {
    const dir = await privateDir();
    const { cli, port } = await serving(['--data-dir', dir]);
    const file = join(dir, 'agent-token');
    expect(cli.stdout()).toContain(`X-Nomad-Token required; new token written to ${file}`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const { readFile } = await import('node:fs/promises');
    const token = (await readFile(file, 'utf8')).trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect((await call({ host: '127.0.0.1', port, token }, 'GET', '/v1/jobs')).status).toBe(200);
    const none = { ALLOCRUN_TOKEN: '', ALLOCRUN_TOKEN_FILE: '', NOMAD_TOKEN: '' };
    const res = await runCli(['job', 'status', '--address', `http://127.0.0.1:${port}`, '--data-dir', dir], { env: none });
    expect([res.code, res.stdout, res.stderr]).toEqual([0, 'No running jobs\n', '']);
  });
});
