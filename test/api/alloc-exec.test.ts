/**
 * `GET /v1/client/allocation/:id/exec` against an in-process agent running a real raw_exec task
 * (`sleep 30`): a command's output, its stdin, its stderr and exit code over Nomad's JSON frames; a task
 * that has run to its end refused in Nomad's words; a tty refused; the route's ACL class held on TCP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { call, processRunning } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, until, type Served } from './in-process-agent.ts';

interface Outcome {
  stdout: string;
  stderr: string;
  exit?: number;
}

/** Runs one exec session to its end: `input` is sent as stdin, then closed. */
function execSession(url: string, headers: Record<string, string>, input?: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const out: Outcome = { stdout: '', stderr: '' };
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += String(d)));
      res.on('end', () => reject(new Error(`${res.statusCode} ${text}`)));
    });
    ws.once('open', () => {
      if (input !== undefined) ws.send(JSON.stringify({ stdin: { data: Buffer.from(input).toString('base64') } }));
      ws.send(JSON.stringify({ stdin: { close: true } }));
    });
    ws.on('message', (raw) => {
      const f = JSON.parse(String(raw)) as { stdout?: { data: string }; stderr?: { data: string }; exited?: boolean; result?: { exit_code: number } };
      if (f.stdout) out.stdout += Buffer.from(f.stdout.data, 'base64').toString();
      if (f.stderr) out.stderr += Buffer.from(f.stderr.data, 'base64').toString();
      if (f.exited) out.exit = f.result!.exit_code;
    });
    ws.once('close', () => resolve(out));
    ws.once('error', reject);
  });
}

let s: Served;
let allocId: string;
let mockAllocId: string;
const query = (task: string, command: string[], extra = '') => `/v1/client/allocation/${allocId}/exec?task=${task}&command=${encodeURIComponent(JSON.stringify(command))}${extra}`;
const overSocket = (path: string, input?: string) => execSession(`ws+unix://${s.api.socketPath}:${path}`, {}, input);

beforeAll(async () => {
  s = await serve(undefined, undefined, { api: { http: '127.0.0.1:0' } });
  const job = {
    Job: {
      ID: 'exec', Type: 'service',
      TaskGroups: [{
        Name: 'g',
        Tasks: [
          { Name: 'main', Driver: 'raw_exec', Env: { GREETING: 'from-the-task' }, Config: { command: '/bin/sleep', args: ['30'] } },
          { Name: 'init', Driver: 'raw_exec', Lifecycle: { Hook: 'prestart', Sidecar: false }, Config: { command: '/bin/true' } },
        ],
      }],
    },
  };
  expect((await call(s.socket, 'PUT', '/v1/jobs', job)).status).toBe(200);
  const [alloc] = await until(
    async () => (await call(s.socket, 'GET', '/v1/job/exec/allocations')).json() as { ID: string; TaskStates?: Record<string, { State: string }> }[],
    (list) => list[0]?.TaskStates?.['main']?.State === 'running' && list[0]?.TaskStates?.['init']?.State === 'dead',
    'main running after init ran to its end',
    60_000,
  );
  allocId = alloc!.ID;
  mockAllocId = (await runJob(s, mockJob('mocked', { played: { run_for: '1h', exec_command: { run_for: '10ms', stdout_string: 'mocked\n', exit_code: 4 } }, bare: { run_for: '1h' } }))).ID;
}, 90_000);
afterAll(cleanUp);

describe('alloc exec over the WebSocket', { timeout: 60_000 }, () => {
  it("runs a command in the task's directory with its environment and sends its stdout and exit code", async () => {
    const out = await overSocket(query('main', ['/bin/sh', '-c', 'echo hi; echo "$GREETING"; pwd']));
    expect(out.stdout).toBe(`hi\nfrom-the-task\n${s.dataDir}/allocs/${allocId}/main\n`);
    expect(out.exit).toBe(0);
  });

  it("passes stdin to the command until the client closes it", async () => {
    const out = await overSocket(query('main', ['cat']), 'line one\nline two\n');
    expect(out).toEqual({ stdout: 'line one\nline two\n', stderr: '', exit: 0 });
  });

  it("sends stderr apart and the command's own exit code", async () => {
    const out = await overSocket(query('main', ['/bin/sh', '-c', 'echo oops >&2; exit 3']));
    expect(out).toEqual({ stdout: '', stderr: 'oops\n', exit: 3 });
  });

  it('kills the command, and what it started, when the client goes away', async () => {
    const ws = new WebSocket(`ws+unix://${s.api.socketPath}:${query('main', ['/bin/sh', '-c', 'sleep 30 & echo $!; wait'])}`);
    const pid = await new Promise<number>((resolve, reject) => {
      ws.on('message', (raw) => {
        const f = JSON.parse(String(raw)) as { stdout?: { data: string } };
        if (f.stdout) resolve(Number(Buffer.from(f.stdout.data, 'base64').toString().trim()));
      });
      ws.once('error', reject);
    });
    expect(processRunning(pid)).toBe(true);
    ws.terminate();
    await until(async () => processRunning(pid), (alive) => !alive, `the exec's sleep ${pid} to be killed`);
  });

  it('refuses a task that has run to its end, in Nomad\'s words', async () => {
    await expect(overSocket(query('init', ['true']))).rejects.toThrow('404 task "init" is not running.');
  });

  it('refuses an unknown task, a missing command and a tty before the handshake', async () => {
    await expect(overSocket(query('nope', ['true']))).rejects.toThrow('400 unknown task name "nope"');
    await expect(overSocket(`/v1/client/allocation/${allocId}/exec?task=main`)).rejects.toThrow('400 command is not present');
    await expect(overSocket(query('main', ['true'], '&tty=true'))).rejects.toThrow(/^400 tty=true: allocrun cannot give the command a terminal/);
    await expect(overSocket(query('main', ['no-such-command-here']))).rejects.toThrow(/^400 exec "no-such-command-here" in task "main": no executable file found/);
  });

  it('answers an unknown allocation 404', async () => {
    await expect(overSocket(`/v1/client/allocation/00000000-0000-0000-0000-000000000000/exec?task=main&command=["true"]`)).rejects.toThrow(/^404 /);
  });

  it("plays a mock task's exec_command, echoes its input to showinput, and refuses one without, as Nomad's mock driver", async () => {
    const mocked = (task: string, command: string[]) => `/v1/client/allocation/${mockAllocId}/exec?task=${task}&command=${encodeURIComponent(JSON.stringify(command))}`;
    expect(await overSocket(mocked('played', ['anything']))).toEqual({ stdout: 'mocked\n', stderr: '', exit: 4 });
    expect(await overSocket(mocked('played', ['showinput']), 'typed')).toEqual({ stdout: 'TTY: false\nStdin:\ntyped\n', stderr: '', exit: 0 });
    await expect(overSocket(mocked('bare', ['true']))).rejects.toThrow('400 no exec command is configured');
  });

  it("is the agent's token's alone on TCP: a client token with every policy is refused", async () => {
    const created = (await call(s.socket, 'POST', '/v1/acl/token', { Name: 'all', Type: 'client', Policies: ['read', 'submit', 'lifecycle'] })).json() as { SecretID: string };
    const url = `ws://${new URL(s.api.url!).host}${query('main', ['echo', 'tcp'])}`;
    await expect(execSession(url, { 'x-nomad-token': created.SecretID })).rejects.toThrow(/^403 Permission denied/);
    await expect(execSession(url, {})).rejects.toThrow(/^403 Permission denied/);
    expect(await execSession(url, { 'x-nomad-token': s.api.token! })).toEqual({ stdout: 'tcp\n', stderr: '', exit: 0 });
  });
});
