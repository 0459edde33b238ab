import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startCli } from '../cli/spawn-cli.ts';

let dataDir: string;
beforeAll(async () => (dataDir = await mkdtemp(join(tmpdir(), 'allocrun-cli-inspect-'))));
afterAll(() => rm(dataDir, { recursive: true, force: true }));

/** Starts an agent on the data dir with the inspector (and the Stately stream); returns its URLs and a stopper. */
async function agent(extra: string[] = []) {
  const cli = startCli(['agent', '--data-dir', dataDir, '--inspect', '--stately', ...extra]);
  await cli.waitFor(/inspector: (\S+)/);
  const url = /inspector: (\S+)/.exec(cli.stdout())![1]!;
  return {
    url,
    async stop() {
      cli.child.kill('SIGTERM');
      const r = await cli.exited;
      return r;
    },
  };
}

describe('allocrun agent --inspect', () => {
  it('keeps its token in the data dir (0600) across restarts, and serves the Stately stream with --stately', async () => {
    const first = await agent();
    const token = new URL(first.url).searchParams.get('token')!;
    const file = join(dataDir, 'inspect-token');
    expect((await readFile(file, 'utf8')).trim()).toBe(token);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const r1 = await first.stop();
    expect(r1.stderr).toMatch(/stately: @statelyai\/inspect stream at ws:\/\/127\.0\.0\.1:\d+\/stately\?token=/);
    const stately = /stately: @statelyai\/inspect stream at (\S+)/.exec(r1.stderr)![1]!;
    expect(new URL(stately).searchParams.get('token')).toBe(token);

    const second = await agent();
    expect(new URL(second.url).searchParams.get('token')).toBe(token);
    // The same address too (the port kept in D/inspect-port): a page left open finds the restarted agent.
    expect(new URL(second.url).port).toBe(new URL(first.url).port);
    expect((await readFile(join(dataDir, 'inspect-port'), 'utf8')).trim()).toBe(new URL(first.url).port);
    // The Stately stream answers on the restarted agent, with the kept token.
    const port = new URL(second.url).port;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/stately?token=${encodeURIComponent(token)}`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.close();
    await second.stop();
  }, 60_000);

  it('takes --inspect-token, and refuses a short one and --stately without --inspect', async () => {
    const given = await agent(['--inspect-token', 'a-token-from-the-command-line']);
    expect(new URL(given.url).searchParams.get('token')).toBe('a-token-from-the-command-line');
    await given.stop();
    const short = startCli(['agent', '--data-dir', dataDir, '--inspect', '--inspect-token', 'short']);
    const r = await short.exited;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--inspect-token must be at least 16 characters/);
    const alone = await startCli(['agent', '--data-dir', dataDir, '--stately']).exited;
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--stately needs --inspect/);
  }, 60_000);

  it('serves a new port, and says so, when the kept one is taken by another program', async () => {
    const blocker = createServer();
    const port = await new Promise<number>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)));
    try {
      await writeFile(join(dataDir, 'inspect-port'), `${port}\n`);
      const cli = startCli(['agent', '--data-dir', dataDir, '--inspect']);
      await cli.waitFor(/inspector: (\S+)/);
      const url = /inspector: (\S+)/.exec(cli.stdout())![1]!;
      expect(new URL(url).port).not.toBe(String(port));
      expect((await readFile(join(dataDir, 'inspect-port'), 'utf8')).trim()).toBe(new URL(url).port);
      cli.child.kill('SIGTERM');
      const r = await cli.exited;
      expect(r.stderr).toContain(`the inspector's port ${port} (kept in ${join(dataDir, 'inspect-port')}) is taken by another program; serving on port ${new URL(url).port} instead`);
    } finally {
      blocker.close();
    }
  }, 60_000);
});

describe('allocrun run --inspect with its output piped', () => {
  it('keeps serving after the run while a page is open, and exits once it closes', async () => {
    const job = join(dataDir, 'wait.nomad');
    await writeFile(job, 'job "wait" {\n  type = "batch"\n  group "g" {\n    task "t" {\n      driver = "mock"\n      config {\n        run_for = "2s"\n      }\n    }\n  }\n}\n');
    const cli = startCli(['run', job, '--data-dir', join(dataDir, 'piped'), '--inspect']);
    let stderr = '';
    cli.child.stderr!.on('data', (d: string) => (stderr += d));
    await cli.waitFor(/inspector: (\S+)/);
    const url = new URL(/inspector: (\S+)/.exec(cli.stdout())![1]!);
    const page = new WebSocket(`ws://${url.host}/ws${url.search}`);
    await new Promise<void>((resolve, reject) => (page.once('open', () => resolve()), page.once('error', reject)));
    // The run ends (the task ran its 2 s), and the page still has its server.
    await cli.waitFor(/complete/);
    const deadline = Date.now() + 30_000;
    while (!stderr.includes('inspector still serving') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(stderr).toContain(`inspector still serving at ${url.href} while a page is open`);
    expect(page.readyState).toBe(WebSocket.OPEN);
    page.close();
    const r = await cli.exited;
    expect(r.code).toBe(0);
  }, 60_000);

  it('exits at the end of the run when no page is open', async () => {
    const cli = startCli(['run', join(dataDir, 'wait.nomad'), '--data-dir', join(dataDir, 'unwatched'), '--inspect']);
    const r = await cli.exited;
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('inspector still serving');
  }, 60_000);
});
