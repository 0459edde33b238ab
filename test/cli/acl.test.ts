/**
 * `allocrun acl token create|list|info|self|delete` against a real agent serving its socket and TCP: the
 * socket and the agent's token manage tokens, a client token cannot, a client token works within its
 * policy through the other commands, and a deleted one is refused at once.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startAgent, type AgentProcess } from '../api/agent-process.ts';
import { runCli } from './spawn-cli.ts';

const scratch = mkdtempSync(join(tmpdir(), 'allocrun-acl-cli-'));
let agent: AgentProcess;
let address: string;
// Nothing from the test's own environment may pick a token for these runs.
const env = { ALLOCRUN_TOKEN: '', ALLOCRUN_TOKEN_FILE: '', NOMAD_TOKEN: '', ALLOCRUN_ADDR: '', ALLOCRUN_DATA_DIR: '' };
const cli = (args: string[]) => runCli(args, { env });

beforeAll(async () => {
  agent = await startAgent({ http: true });
  address = `http://127.0.0.1:${agent.tcp!.port}`;
}, 60_000);
afterAll(async () => {
  await agent?.stop();
  await rm(scratch, { recursive: true, force: true });
}, 60_000);

/** A 0600 file holding `secret`, for --token-file. */
function tokenFile(secret: string): string {
  const file = join(scratch, `token-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return file;
}

/** The `Key = value` lines `acl token create` prints, as a record. */
function fields(stdout: string): Record<string, string> {
  return Object.fromEntries(stdout.trim().split('\n').map((l) => l.split(/\s+=\s+/, 2) as [string, string]));
}

describe('allocrun acl token', { timeout: 120_000 }, () => {
  it('creates a client token through the socket, prints its secret once, and lists it without the secret', async () => {
    const made = await cli(['acl', 'token', 'create', '-type', 'client', '-policy', 'read', '-name', 'viewer', '--data-dir', agent.dataDir]);
    expect([made.code, made.stderr]).toEqual([0, 'Keep the Secret ID now: the agent keeps only its hash and cannot show it again.\n']);
    const t = fields(made.stdout);
    expect(t).toMatchObject({ Name: 'viewer', Type: 'client', Global: 'false', Policies: '[read]' });
    expect(t['Secret ID']).toMatch(/^[0-9a-f]{64}$/);

    const list = await cli(['acl', 'token', 'list', '--data-dir', agent.dataDir]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^viewer\\s+client\\s+false\\s+${t['Accessor ID']}\\s+read$`, 'm'));
    expect(list.stdout).not.toContain(t['Secret ID']);

    const info = await cli(['acl', 'token', 'info', t['Accessor ID']!, '--data-dir', agent.dataDir]);
    expect(info.code).toBe(0);
    expect(fields(info.stdout)).toMatchObject({ 'Accessor ID': t['Accessor ID'], Name: 'viewer', Policies: '[read]' });
    expect(info.stdout).not.toContain('Secret ID');
  });

  it('lets a client token work within its policy through the other commands, and nothing more', async () => {
    const made = await cli(['acl', 'token', 'create', '-policy=read', '-json', '--data-dir', agent.dataDir]);
    expect(made.code).toBe(0);
    const { SecretID, AccessorID } = JSON.parse(made.stdout) as { SecretID: string; AccessorID: string };
    const file = tokenFile(SecretID);

    const status = await cli(['job', 'status', '--address', address, '--token-file', file]);
    expect([status.code, status.stderr]).toEqual([0, '']);
    const self = await cli(['acl', 'token', 'self', '--address', address, '--token-file', file]);
    expect(fields(self.stdout)).toMatchObject({ 'Accessor ID': AccessorID, Type: 'client', Policies: '[read]' });

    const stop = await cli(['job', 'stop', 'anything', '--address', address, '--token-file', file]);
    expect(stop.code).toBe(1);
    expect(stop.stderr).toContain('Permission denied');
    for (const args of [['create', '-policy', 'submit'], ['list'], ['delete', AccessorID]]) {
      const res = await cli(['acl', 'token', ...args, '--address', address, '--token-file', file]);
      expect([args.join(' '), res.code]).toEqual([args.join(' '), 1]);
      expect(res.stderr).toContain('Permission denied');
    }
  });

  it("manages tokens over TCP with the agent's token, and a deleted token is refused at once", async () => {
    const management = join(agent.dataDir, 'agent-token');
    const made = await cli(['acl', 'token', 'create', '-policy', 'submit', '-policy', 'lifecycle', '-name', 'deployer', '--json', '--address', address, '--token-file', management]);
    expect([made.code, made.stderr]).toEqual([0, '']);
    const { SecretID, AccessorID, Policies } = JSON.parse(made.stdout) as { SecretID: string; AccessorID: string; Policies: string[] };
    expect(Policies).toEqual(['submit', 'lifecycle']);
    const tcp = { host: '127.0.0.1', port: agent.tcp!.port, token: SecretID };
    expect((await call(tcp, 'GET', '/v1/jobs')).status).toBe(200);

    const del = await cli(['acl', 'token', 'delete', AccessorID, '--address', address, '--token-file', management]);
    expect([del.code, del.stdout]).toEqual([0, `Token ${AccessorID} successfully deleted\n`]);
    expect((await call(tcp, 'GET', '/v1/jobs')).status).toBe(403);
    const listed = await cli(['acl', 'token', 'list', '--json', '--data-dir', agent.dataDir]);
    expect((JSON.parse(listed.stdout) as { AccessorID: string }[]).map((t) => t.AccessorID)).not.toContain(AccessorID);

    const again = await cli(['acl', 'token', 'delete', AccessorID, '--data-dir', agent.dataDir]);
    expect([again.code, again.stderr]).toEqual([1, `allocrun: ACL token not found: no token with accessor ID "${AccessorID}" on the agent at ${agent.dataDir} ('allocrun acl token list' lists them)\n`]);
    const info = await cli(['acl', 'token', 'info', AccessorID, '--data-dir', agent.dataDir]);
    expect([info.code, info.stderr]).toEqual([1, `allocrun: ACL token not found: no token with accessor ID "${AccessorID}" on the agent at ${agent.dataDir} ('allocrun acl token list' lists them)\n`]);
  });

  it.each([
    [['-policy', 'write'], 'acl token create: unknown policy "write"; the policies are read, submit, lifecycle'],
    [[], 'acl token create: a client token needs at least one -policy: read, submit, lifecycle'],
    [['-type', 'management', '-policy', 'read'], "acl token create: -type management is not made here: the agent's own token (--token-file) is the management token"],
    [['-type', 'root', '-policy', 'read'], 'acl token create: -type must be client (got "root")'],
  ])('refuses acl token create %j before asking the agent, exit 2', async (args, message) => {
    const res = await cli(['acl', 'token', 'create', ...args, '--data-dir', agent.dataDir]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
    expect(res.stderr).toContain("Run 'allocrun acl token create --help'");
  });

  it('names an unknown subcommand, and lists acl among the commands', async () => {
    const res = await cli(['acl', 'token', 'revoke', 'x']);
    expect([res.code, res.stderr.split('\n')[0]]).toEqual([2, 'allocrun: acl token: unknown subcommand "revoke"; subcommands: create, list, info, self, delete']);
    const group = await cli(['acl', 'tokens']);
    expect([group.code, group.stderr.split('\n')[0]]).toEqual([2, 'allocrun: acl: unknown subcommand "tokens"; subcommands: token']);
    const help = await cli(['--help']);
    expect(help.stdout).toMatch(/^ {2}acl\s+Create, list and revoke/m);
  });
});
