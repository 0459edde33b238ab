/**
 * A job's `user` through the agent (issue 25, point 3). Under a root agent: a task with `user` runs as that
 * user and one without as `--task-user`; neither can read `D/agent-token` nor connect to `D/agent.sock`, and
 * each writes its own task dir. Under an agent that cannot switch users, a job naming a user is refused on
 * every door, naming the field: really (the CLI run as `nobody`) and faked in this process through
 * `useUserSwitching` (registration, `/v1/validate/job`, `/v1/jobs/parse`, the CLI's loader). An unknown
 * user is refused on every door too.
 */
import { chmod, chown, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadJob as loadJobForCli } from '../../src/cli/job-file.ts';
import { systemUserSwitching, useUserSwitching, type UserSwitching } from '../../src/drivers/raw-exec/task-user.ts';
import { isSpecError } from '../../src/jobspec/index.ts';
import { runCli, ROOT } from '../cli/spawn-cli.ts';
import { call, startAgent, waitForAllocs, type AgentProcess } from './agent-process.ts';
import { cleanUp, serve } from './in-process-agent.ts';

const NOBODY = systemUserSwitching.lookup('nobody');
const DAEMON = systemUserSwitching.lookup('daemon');
const asRoot = process.geteuid?.() === 0 && NOBODY !== undefined && DAEMON !== undefined && systemUserSwitching.setpriv() !== undefined;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'allocrun-task-user-'));
  // Job files here are read by the CLI run as nobody, too.
  await chmod(scratch, 0o755);
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A batch job of raw_exec tasks running `script` under /bin/sh, each with its own `User` (or none). */
function shJob(id: string, tasks: Record<string, { script: string; user?: string }>) {
  return {
    Job: {
      ID: id, Type: 'batch',
      TaskGroups: [{
        Name: 'g',
        RestartPolicy: { Attempts: 0, Mode: 'fail', Interval: 60e9, Delay: 0 },
        Tasks: Object.entries(tasks).map(([Name, t]) => ({
          Name, Driver: 'raw_exec', ...(t.user !== undefined && { User: t.user }), Config: { command: '/bin/sh', args: ['-c', t.script] },
        })),
      }],
    },
  };
}

/**
 * What a task checks about itself: its uid, whether it can read the token or connect to the socket (by
 * their real paths, with node's own connect, which reports the errno), and whether it can write its task dir.
 */
const probe = (dataDir: string): string =>
  [
    'id -u',
    `cat ${dataDir}/agent-token >/dev/null 2>&1 && echo token-read || echo token-denied`,
    `cat ${dataDir}/state.mdb >/dev/null 2>&1 && echo store-read || echo store-denied`,
    `${process.execPath} -e "require('net').connect(process.argv[1]).on('connect', () => { console.log('socket-connected'); process.exit(0); }).on('error', (e) => console.log('socket-refused ' + e.code))" ${dataDir}/agent.sock`,
    'echo mine > ./written && echo dir-writable',
    // By absolute path, as Nomad jobs write their config files: the data dir lets it pass, not list.
    'echo abs > "$NOMAD_TASK_DIR/by-path" && echo abs-writable || echo abs-denied',
    `ls ${dataDir} >/dev/null 2>&1 && echo dir-listed || echo dir-unlisted`,
  ].join('; ');

describe.runIf(asRoot)('a root agent runs each task as its user', () => {
  let agent: AgentProcess;
  beforeAll(async () => {
    agent = await startAgent({ http: true, args: ['--task-user', 'nobody'] });
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
  }, 60_000);

  it('runs a task with user = "daemon" as daemon and one without as --task-user nobody; neither reaches the token or the socket', async () => {
    const D = agent.dataDir;
    // The agent's own files are there, and the agent's: what the tasks fail to reach exists.
    for (const [file, mode] of [['agent-token', 0o600], ['agent.sock', 0o600], ['state.mdb', 0o600], ['.', 0o711]] as const) {
      const st = await stat(join(D, file));
      expect([file, st.uid, st.mode & 0o777]).toEqual([file, 0, mode]);
    }
    const res = await call(agent.socket, 'PUT', '/v1/jobs', shJob('who', { named: { script: probe(D), user: 'daemon' }, fallback: { script: probe(D) } }));
    expect(res.status, res.text).toBe(200);
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/who/allocations', (l) => l.length === 1 && l[0]!.ClientStatus === 'complete');
    const logs = join(D, 'allocs', alloc!.ID, 'alloc', 'logs');
    const lines = (task: string) => readFileSync(join(logs, `${task}.stdout.0`), 'utf8').trim().split('\n');
    expect(lines('named')).toEqual([String(DAEMON!.uid), 'token-denied', 'store-denied', 'socket-refused EACCES', 'dir-writable', 'abs-writable', 'dir-unlisted']);
    expect(lines('fallback')).toEqual([String(NOBODY!.uid), 'token-denied', 'store-denied', 'socket-refused EACCES', 'dir-writable', 'abs-writable', 'dir-unlisted']);
    // What each wrote in its task dir is its own.
    expect((await stat(join(D, 'allocs', alloc!.ID, 'named', 'written'))).uid).toBe(DAEMON!.uid);
    expect((await stat(join(D, 'allocs', alloc!.ID, 'fallback', 'written'))).uid).toBe(NOBODY!.uid);
  }, 60_000);

  it('refuses a job naming a user this machine does not have, on registration and validate, naming the field', async () => {
    const body = shJob('ghost', { t: { script: 'true', user: 'no-such-user-allocrun' } });
    const line = 'job.ghost.group.g.task.t.user: no user "no-such-user-allocrun" on this machine';
    const res = await call(agent.socket, 'PUT', '/v1/jobs', body);
    expect([res.status, res.text]).toEqual([400, expect.stringContaining(line)]);
    const validate = await call(agent.socket, 'PUT', '/v1/validate/job', body);
    expect(validate.json<{ ValidationErrors: string[] }>().ValidationErrors).toContainEqual(expect.stringContaining(line));
    expect((await call(agent.socket, 'GET', '/v1/job/ghost')).status).toBe(404);
  });
});

describe.runIf(asRoot)('the CLI, run as a user that cannot switch users (nobody)', () => {
  /** Runs `allocrun ...args` as nobody, the way an unprivileged operator would. */
  const asNobody = (args: string[]) => runAs(NOBODY!.uid, NOBODY!.gid, args);

  it('allocrun validate refuses a job naming a user, naming the field and why', async () => {
    const file = join(scratch, 'web.hcl');
    await writeFile(file, 'job "web" {\n  type = "batch"\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      user = "nobody"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n', { mode: 0o644 });
    const res = await asNobody(['validate', file]);
    expect(res.code).toBe(1);
    expect(res.stdout + res.stderr).toContain(
      `${file}:6:7: job.web.group.g.task.t.user: cannot run the task as "nobody": allocrun runs as uid ${NOBODY!.uid}, not root, so it cannot run a task as another user; remove "user" from the task, or run the agent as root`,
    );
  }, 60_000);

  it('allocrun agent --task-user is refused at start by an agent that is not root', async () => {
    const dir = await mkdtemp(join(scratch, 'nobody-agent-'));
    await chown(dir, NOBODY!.uid, NOBODY!.gid);
    const res = await asNobody(['agent', '--data-dir', dir, '--task-user', 'daemon']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('agent: --task-user "daemon": cannot run the task as "daemon": allocrun runs as uid 65534, not root');
    expect(res.stderr).toContain('leave out --task-user, or run the agent as root');
    expect(existsSync(join(dir, 'agent.sock'))).toBe(false);
  }, 60_000);

  it('allocrun agent --task-user names a user that does not exist and is refused at start', async () => {
    const dir = await mkdtemp(join(scratch, 'root-agent-'));
    const res = await runCli(['agent', '--data-dir', dir, '--task-user', 'no-such-user-allocrun']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('agent: --task-user "no-such-user-allocrun": no user "no-such-user-allocrun" on this machine');
    expect(existsSync(join(dir, 'agent.sock'))).toBe(false);
  }, 60_000);
});

describe('an agent that cannot switch users refuses a job naming one, on every door', () => {
  /** This machine, except that switching users is not possible (as for an agent not running as root). */
  const notRoot: UserSwitching = { ...systemUserSwitching, cannotSwitch: () => 'allocrun runs as uid 1000, not root, so it cannot run a task as another user' };
  let restore: (() => void) | undefined;
  afterEach(async () => {
    restore?.();
    restore = undefined;
    await cleanUp();
  });

  const WHY = 'cannot run the task as "nobody": allocrun runs as uid 1000, not root, so it cannot run a task as another user; remove "user" from the task, or run the agent as root';

  it('refuses it on registration (400), validate (ValidationErrors) and parse, naming job.x.group.y.task.z.user', async () => {
    const s = await serve();
    restore = useUserSwitching(notRoot);
    const body = shJob('named', { t: { script: 'id -u' }, u: { script: 'id -u', user: 'nobody' } });
    const line = `job.named.group.g.task.u.user: ${WHY}`;
    for (const [method, url] of [['PUT', '/v1/jobs'], ['POST', '/v1/jobs'], ['PUT', '/v1/job/named']] as const) {
      const res = await call(s.socket, method, url, body);
      expect([method, url, res.status]).toEqual([method, url, 400]);
      expect(res.text).toContain(line);
      // Only the task naming a user is refused.
      expect(res.text).not.toContain('task.t.');
    }
    const validate = await call(s.socket, 'PUT', '/v1/validate/job', body);
    expect(validate.status).toBe(200);
    expect(validate.json<{ ValidationErrors: string[] }>().ValidationErrors).toEqual([line]);
    const hcl = 'job "named" {\n  group "g" {\n    task "u" {\n      driver = "raw_exec"\n      user = "nobody"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n';
    const parse = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: hcl });
    expect([parse.status, parse.text]).toEqual([400, expect.stringContaining(`job.named.group.g.task.u.user: ${WHY}`)]);
    expect((await call(s.socket, 'GET', '/v1/job/named')).status).toBe(404);

    // The same job without the user is taken: the refusal is the user's, not the job's.
    const fine = await call(s.socket, 'PUT', '/v1/validate/job', shJob('plain', { t: { script: 'id -u' } }));
    expect(fine.json<{ ValidationErrors: string[] }>().ValidationErrors).toEqual([]);
  }, 60_000);

  it('refuses it in the loader allocrun validate and job files use, at the user line', async () => {
    restore = useUserSwitching(notRoot);
    const file = join(scratch, 'named.nomad');
    await writeFile(file, 'job "named" {\n  type = "batch"\n  group "g" {\n    task "u" {\n      driver = "raw_exec"\n      user   = "nobody"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n');
    const err = await loadJobForCli(file).then(() => undefined, (e: unknown) => e);
    expect(isSpecError(err)).toBe(true);
    expect((err as { problems: unknown[] }).problems).toEqual([expect.objectContaining({ path: 'job.named.group.g.task.u.user', message: WHY, line: 6, column: 7 })]);
  });

  it('accepts the same job once the agent can switch users (the check asks, it does not assume)', async () => {
    restore = useUserSwitching({ ...systemUserSwitching, cannotSwitch: () => undefined });
    const file = join(scratch, 'ok.nomad');
    await writeFile(file, 'job "ok" {\n  type = "batch"\n  group "g" {\n    task "u" {\n      driver = "raw_exec"\n      user = "nobody"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n');
    const loaded = await loadJobForCli(file);
    expect(loaded.allocs[0]!.tasks[0]).toMatchObject({ name: 'u', user: 'nobody' });
    expect(loaded.warnings).toEqual([]);
  });
});

/** Runs `allocrun ...args` as uid:gid (setpriv), with a HOME it can write for tsx's cache. */
async function runAs(uid: number, gid: number, args: string[]) {
  const child = spawn('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--init-groups', '--', process.execPath, join(ROOT, 'bin', 'allocrun.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, HOME: tmpdir(), NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}
