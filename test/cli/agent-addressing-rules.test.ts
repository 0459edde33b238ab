/**
 * How the CLI client addresses an agent and which token it sends (src/cli/api-client.ts): a scheme is
 * recognised only at the start of --address; an IPv6 address is reached without its brackets; a bad address
 * is a usage error that shows an example; with --address, the token comes from --token-file, and failing
 * every other source, from the agent-token file of --data-dir or $ALLOCRUN_DATA_DIR.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_FLAGS, AGENT_FLAGS_HELP, agentClient } from '../../src/cli/api-client.ts';
import { startFakeAgent, type FakeAgent } from './agent-server.ts';

const ENV_NAMES = ['ALLOCRUN_ADDR', 'ALLOCRUN_TOKEN', 'ALLOCRUN_TOKEN_FILE', 'NOMAD_TOKEN', 'ALLOCRUN_DATA_DIR'] as const;
const saved = Object.fromEntries(ENV_NAMES.map((n) => [n, process.env[n]]));
const TOKEN = 'b7c2'.repeat(16);
let agent: FakeAgent;

beforeAll(async () => {
  agent = await startFakeAgent();
  const file = join(agent.dataDir, 'agent-token');
  writeFileSync(file, `${TOKEN}\n`);
  chmodSync(file, 0o600);
});
afterAll(async () => {
  for (const n of ENV_NAMES) if (saved[n] === undefined) delete process.env[n];
  else process.env[n] = saved[n];
  await agent.close();
});
beforeEach(() => {
  for (const n of ENV_NAMES) delete process.env[n];
  agent.seen.length = 0;
});
afterEach(() => {
  for (const n of ENV_NAMES) delete process.env[n];
});

describe('the address', () => {
  it('an IPv6 address in brackets is reached on that address', async () => {
    await agentClient('x', { address: `http://[::1]:${agent.port6}`, token: TOKEN }).get('/v1/jobs');
    expect(agent.seen.map((s) => [s.via, s.url])).toEqual([['tcp6', '/v1/jobs']]);
  });

  it('a scheme counts only at the start: an address whose query holds "://" is still http to that host', async () => {
    await agentClient('x', { address: `localhost:${agent.port}/?next=http://elsewhere`, token: TOKEN }).get('/v1/jobs');
    expect(agent.seen.map((s) => s.via)).toEqual(['tcp']);
  });

  it('an address that is not a URL is a usage error naming it and showing one that is', () => {
    expect(() => agentClient('job status', { address: 'http://[bad' })).toThrow(
      expect.objectContaining({ code: 'ErrUsage', message: 'job status: --address "http://[bad" is not a URL; e.g. http://127.0.0.1:4646' }),
    );
  });
});

describe('the token sent with --address', () => {
  it('comes from --token-file', async () => {
    const file = join(agent.dataDir, 'other-token');
    writeFileSync(file, 'from-file-0000000000000000\n');
    chmodSync(file, 0o600);
    await agentClient('x', { address: `http://127.0.0.1:${agent.port}`, 'token-file': file }).get('/v1/jobs');
    expect(agent.seen[0]!.headers['x-nomad-token']).toBe('from-file-0000000000000000');
  });

  it("comes from --data-dir D's agent-token file when nothing else names one", async () => {
    await agentClient('x', { address: `http://127.0.0.1:${agent.port}`, 'data-dir': agent.dataDir }).get('/v1/jobs');
    expect(agent.seen.map((s) => [s.via, s.headers['x-nomad-token']])).toEqual([['tcp', TOKEN]]);
  });

  it("comes from $ALLOCRUN_DATA_DIR's agent-token file when no --data-dir is given", async () => {
    process.env.ALLOCRUN_DATA_DIR = agent.dataDir;
    await agentClient('x', { address: `http://127.0.0.1:${agent.port}` }).get('/v1/jobs');
    expect(agent.seen[0]!.headers['x-nomad-token']).toBe(TOKEN);
  });

  it('is none when no source names one (an empty --data-dir is no data dir)', async () => {
    await agentClient('x', { address: `http://127.0.0.1:${agent.port}`, 'data-dir': '' }).get('/v1/jobs');
    expect(agent.seen[0]!.headers['x-nomad-token']).toBeUndefined();
  });
});

describe('the help', () => {
  it('documents every agent flag', () => {
    for (const [name, flag] of Object.entries(AGENT_FLAGS)) {
      expect(AGENT_FLAGS_HELP).toContain(`--${name} `);
      if ('short' in flag) expect(AGENT_FLAGS_HELP).toContain(`-${flag.short}, --${name}`);
    }
  });
});
