/**
 * `allocrun replay --check` and `--to-test` on a recording `allocrun run --record` made of real processes
 * (raw_exec, failing and restarted): identical today (exit 0); a recording whose recorded exit was changed
 * diverges (exit 1, the divergence printed with the machine source); another format version is refused
 * (exit 2); the generated test passes on today's machines and fails on a changed restart decision.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, waitForAllocs } from '../api/agent-process.ts';
import { ROOT, fixture, runCli } from './spawn-cli.ts';

const exec = promisify(execFile);
let dir: string;
let recording: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'allocrun-replay-cli-'));
  recording = join(dir, 'run.jsonl');
  const run = await runCli(['run', fixture('restarting.nomad'), '--data-dir', join(dir, 'data'), '--record', recording, '--json'], { timeoutMs: 60_000 });
  expect(run.code, run.stderr).toBe(1);
}, 90_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The recording with `edit` applied to each parsed line (undefined drops it). */
async function edited(name: string, edit: (line: Record<string, unknown>, i: number) => Record<string, unknown> | undefined): Promise<string> {
  const lines = (await readFile(recording, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const out = join(dir, name);
  await writeFile(out, lines.map(edit).filter((l) => l !== undefined).map((l) => JSON.stringify(l)).join('\n') + '\n');
  return out;
}

describe('allocrun replay --check', () => {
  it('exits 0 on a recording of real restarts: today the machines take every recorded step', async () => {
    const res = await runCli(['replay', '--check', recording], { timeoutMs: 60_000 });
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(/^replay check: .*run\.jsonl is identical: \d+ inputs re-driven through today's machines took the \d+ recorded steps of 2 actors\n$/);
    expect(res.code).toBe(0);
  });

  it('exits 1 and prints the first divergence when a recorded exit differs from what the run recorded of it', async () => {
    // The first exit's code changed to 0 (as if the driver had said so): today's machines record that exit differently.
    let seen = false;
    const file = await edited('changed-exit.jsonl', (l) => {
      const event = l.event as { type?: string; output?: { exitCode?: number } } | undefined;
      if (l.kind !== 'replay-input' || l.src !== 'driverWait' || seen) return l;
      seen = true;
      return { ...l, event: { ...event, output: { ...event!.output, exitCode: 0 } } };
    });
    const res = await runCli(['replay', '--check', file], { timeoutMs: 60_000 });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stdout).toMatch(/diverges at step \d+ \(\S+\/main's step \d+\), after input #\d+ \(result xstate\.done\.actor\.driver:wait to \S+\/main, clock \d{4}-/);
    expect(res.stdout).toContain("/main's TaskState differs after xstate.done.actor.driver:wait");
    expect(res.stdout).toMatch(/\n  recorded: event #3 Terminated: exitCode 2, displayMessage "Exit Code: 2"\n  now: +event #3 Terminated: exitCode 0, displayMessage "Exit Code: 0"\n/);
    // The transition that took the exit (with its guard and actions when it has any) and where it is written.
    expect(res.stdout).toMatch(/\n  machine:  task\.\S+ → task\.\S+ (\([^)]*\) )?at machines\/task-runner\.ts:\d+/);
  });

  it('exits 2 naming the versions for a recording of a newer replay format', async () => {
    const file = await edited('newer.jsonl', (l, i) => (i === 0 ? { ...l, replay: 99 } : l));
    for (const flag of ['--check', '--to-test']) {
      const res = await runCli(['replay', flag, file]);
      expect(res.code).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(/replay format version 99, by a newer allocrun; this allocrun checks replay format version 1/);
    }
  });

  it('exits 2 for a recording made before recordings held inputs', async () => {
    const file = await edited('older.jsonl', (l, i) => {
      if (i === 0) {
        const { replay: _replay, ...header } = l;
        return header;
      }
      return String(l.kind).startsWith('replay-') ? undefined : l;
    });
    const res = await runCli(['replay', '--check', file]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/has no replay inputs \(made by an older allocrun, replay format version 0\)/);
  });
});

describe('allocrun replay --to-test', () => {
  /** Runs one test file with vitest, in a config of its own (the patch, when given, rewrites a machine file as it loads). */
  async function vitest(testFile: string, patch?: { file: string; from: string; to: string }): Promise<{ code: number; out: string }> {
    const config = join(testFile, '..', 'vitest.config.mjs');
    const plugin = patch
      ? `plugins: [{ name: 'changed-machine', enforce: 'pre', transform(code, id) {
          if (!id.endsWith(${JSON.stringify(patch.file)})) return;
          if (!code.includes(${JSON.stringify(patch.from)})) throw new Error('the patch no longer applies to ' + id);
          return code.replace(${JSON.stringify(patch.from)}, ${JSON.stringify(patch.to)});
        } }],`
      : '';
    await writeFile(
      config,
      `export default { ${plugin} resolve: { alias: { 'allocrun/testing': ${JSON.stringify(join(ROOT, 'src/testing/index.ts'))} } }, test: { include: [${JSON.stringify(relative(ROOT, testFile))}], testTimeout: 60000 } };\n`,
    );
    try {
      const { stdout, stderr } = await exec(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--root', ROOT, '--config', config], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } });
      return { code: 0, out: stdout + stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? 1, out: (e.stdout ?? '') + (e.stderr ?? '') };
    }
  }

  it('writes a test that passes on today\'s machines and fails on a restart decision allowing one restart fewer', async () => {
    const res = await runCli(['replay', '--to-test', recording], { timeoutMs: 60_000 });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain("import { replayRecording } from 'allocrun/testing';");
    // Inside the repo (vitest's root), outside test/ so no other run picks it up.
    const where = await mkdtemp(join(ROOT, '.replay-incident-'));
    try {
      const testFile = join(where, 'incident.test.ts');
      await writeFile(testFile, res.stdout);
      const today = await vitest(testFile);
      expect(today.out).toMatch(/1 passed/);
      expect(today.code).toBe(0);
      const changed = await vitest(testFile, { file: 'machines/restart-tracker.ts', from: 'if (next.count > policy.attempts) {', to: 'if (next.count > policy.attempts - 1) {' });
      expect(changed.code).toBe(1);
      expect(changed.out).toMatch(/1 failed/);
      expect(changed.out).toContain('terminal');
    } finally {
      await rm(where, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('allocrun agent --record', () => {
  it("records the agent's allocations as the API runs and stops them, and replay --check finds them identical", async () => {
    const file = join(dir, 'agent.jsonl');
    const service = join(dir, 'svc.nomad');
    await writeFile(service, `job "svc" {
  group "api" {
    task "server" {
      driver = "raw_exec"
      kill_timeout = "5s"
      config {
        command = "/bin/sh"
        args    = ["-c", "trap 'exit 0' TERM; while true; do sleep 0.1; done"]
      }
    }
  }
}
`);
    const agent = await startAgent({ args: ['--record', file] });
    try {
      await runCli(['job', 'run', fixture('restarting.nomad'), '--data-dir', agent.dataDir], { timeoutMs: 60_000 });
      await waitForAllocs(agent.socket, '/v1/job/restarting/allocations', (l) => l.length === 1 && l[0]!.ClientStatus === 'failed');
      const running = await runCli(['job', 'run', service, '--data-dir', agent.dataDir], { timeoutMs: 60_000 });
      expect(running.code, running.stderr).toBe(0);
    } finally {
      // Purges the jobs (the running allocation stopped through the API) and shuts the agent down.
      await agent.stop();
    }
    const res = await runCli(['replay', '--check', file], { timeoutMs: 60_000 });
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(/is identical: \d+ inputs re-driven/);
    expect(res.code).toBe(0);
    const commands = (await readFile(file, 'utf8'))
      .split('\n')
      .filter((l) => l.includes('"kind":"replay-input"') && l.includes('"input":"command"'))
      .map((l) => (JSON.parse(l) as { event: { type: string } }).event.type);
    // The service's stop came through the API as an update of its allocation.
    expect(commands).toContain('UPDATE');
  }, 120_000);
});
