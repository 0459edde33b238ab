/**
 * The template hook in a real allocation: raw_exec tasks on the real clock, variables and services from
 * in-memory sources with change streams. A first render waits for its data, says what is missing, and is
 * released by the data; a kill while waiting ends the wait; re-renders act per change_mode; env = true
 * feeds the task env; render_templates re-renders on a restart.
 */
import { mkdtemp, readFile, rm, stat, symlink, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import type { AllocSpec, TaskSpec, TemplateSpec } from '../../src/jobspec/types.ts';
import type { VariableSource } from '../../src/variables/variable-source.ts';
import type { Variable } from '../../src/variables/variable.ts';
import { ServiceRegistry } from '../../src/services/index.ts';
import { renderTemplateFile } from '../../src/hooks/template/render-template.ts';
import { tempDir } from '../temp-dirs.ts';

/** Variables in memory with Nomad's shape and a change stream, as the variables store gives them. */
class MemoryVariables implements VariableSource {
  private readonly vars = new Map<string, Variable>();
  private index = 0;
  readonly changes = new Subject<{ namespace: string; path: string; index: number; deleted: boolean }>();
  readonly changes$ = this.changes.asObservable();
  get(path: string, namespace = 'default') {
    return this.vars.get(`${namespace}/${path}`);
  }
  list(prefix: string, namespace = 'default') {
    return [...this.vars.values()].filter((v) => v.Namespace === namespace && v.Path.startsWith(prefix));
  }
  allowed() {
    return true;
  }
  put(path: string, items: Record<string, string>) {
    const index = ++this.index;
    const old = this.get(path);
    this.vars.set(`default/${path}`, { Namespace: 'default', Path: path, Items: items, CreateIndex: old?.CreateIndex ?? index, ModifyIndex: index, CreateTime: 1e18, ModifyTime: 1e18 });
    this.changes.next({ namespace: 'default', path, index, deleted: false });
  }
}

/** The agent's service registry, with one redis instance registered as another allocation's hook would. */
const services = new ServiceRegistry();
services.sync('cache-alloc', 'redis', [
  { ID: '_nomad-task-cache-alloc-redis-redis-db', ServiceName: 'redis', Namespace: 'default', NodeID: 'n1', Datacenter: 'dc1', JobID: 'cache', AllocID: 'cache-alloc', Tags: ['primary'], Address: '127.0.0.1', Port: 6379 },
]);

const dirs: string[] = [];
const runners: AllocRunner[] = [];
afterEach(async () => {
  for (const r of runners.splice(0)) {
    r.send({ type: 'KILL' });
    await r.done.catch(() => undefined);
  }
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const template = (t: Partial<TemplateSpec> & Pick<TemplateSpec, 'destination'>): TemplateSpec => ({
  changeMode: 'noop', splay: 0, perms: '0644', leftDelim: '{{', rightDelim: '}}', env: false, errMissingKey: false, ...t,
});

/** A shell task that writes what it sees and records the SIGHUPs it gets, then waits. */
const shellTask = (templates: TemplateSpec[], extra: Partial<TaskSpec> = {}): TaskSpec => ({
  name: 'app',
  driver: 'raw_exec',
  config: { command: '/bin/sh', args: ['-c', 'trap "echo hup >> local/signals" HUP; echo "mode=$APP_MODE" > local/env.out; while true; do sleep 0.05; done'] },
  killTimeout: 2_000,
  templates,
  ...extra,
});

async function start(task: TaskSpec, variables = new MemoryVariables(), restart?: AllocSpec['restart']) {
  const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-template-'));
  dirs.push(dataDir);
  const spec: AllocSpec = { id: 'tpl', job: 'web', group: 'g', type: 'service', tasks: [task], ...(restart && { restart }) };
  const runner = createAllocRunner(spec, {
    dataDir,
    hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    variables: { forTask: () => variables },
    services,
    templateWait: { min: 0, max: 0 },
  }).start();
  runners.push(runner);
  const taskDir = join(dataDir, 'allocs', 'tpl', 'app');
  return { runner, variables, taskDir, read: (p: string) => readFile(join(taskDir, p), 'utf8') };
}

/** Waits for `check` to hold, polling; generous for a loaded machine. */
async function until<T>(check: () => T | Promise<T>, what: string, ms = 20_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const events = (r: AllocRunner) => r.getState().taskStates.app?.events ?? [];
const state = (r: AllocRunner) => r.getState().taskStates.app?.state;

describe('the template hook', () => {
  it('renders the task env (with the node\'s attr.* and node.* keys, as Nomad\'s TaskEnv.All), a service and a variable before the task starts', async () => {
    const variables = new MemoryVariables();
    variables.put('nomad/jobs/web', { user: 'admin' });
    const data = 'task={{ env "NOMAD_TASK_NAME" }}\n{{ range nomadService "redis" }}redis={{ .Address }}:{{ .Port }}{{ end }}\n{{ with nomadVar "nomad/jobs/web" }}user={{ .user }}{{ end }}\n'
      + 'node={{ env "node.region" }}/{{ env "node.datacenter" }}/{{ env "attr.kernel.name" }}/{{ env "attr.unique.hostname" | len | lt 0 }}\n';
    const { runner, read, taskDir } = await start(shellTask([template({ data, destination: 'local/app.conf', perms: '0640' })]), variables);
    await until(() => state(runner) === 'running', 'the task to run');
    expect(await read('local/app.conf')).toBe(`task=app\nredis=127.0.0.1:6379\nuser=admin\nnode=global/dc1/${process.platform}/true\n`);
    expect((await stat(join(taskDir, 'local/app.conf'))).mode & 0o777).toBe(0o640);
  });

  it('merges an env = true template into the task environment', async () => {
    const { runner, read } = await start(shellTask([template({ data: 'APP_MODE={{ "blue" | toUpper }}\n# a comment\n', destination: 'secrets/app.env', env: true })]));
    await until(() => state(runner) === 'running', 'the task to run');
    expect(await until(() => read('local/env.out'), 'the task to write its env')).toBe('mode=BLUE\n');
  });

  it('blocks the first render on a missing variable, says so, and is released when it is put', async () => {
    const { runner, variables, read } = await start(shellTask([template({ data: '{{ with nomadVar "nomad/jobs/web/g/app" }}port={{ .port }}{{ end }}', destination: 'local/port' })]));
    const missing = await until(() => events(runner).find((e) => e.type === 'Template'), 'the Template event');
    expect(missing.displayMessage ?? missing.message).toBe('Missing: nomad.var.block(nomad/jobs/web/g/app@default.global)');
    expect(state(runner)).toBe('pending');
    await expect(read('local/port')).rejects.toThrow();
    variables.put('nomad/jobs/web/g/app', { port: '8080' });
    await until(() => state(runner) === 'running', 'the task to run');
    expect(await read('local/port')).toBe('port=8080');
  });

  it('returns promptly, without a hook failure, when the allocation is stopped while a render is blocked', async () => {
    const { runner } = await start(shellTask([template({ data: '{{ with nomadVar "nomad/jobs/nope" }}{{ .x }}{{ end }}', destination: 'local/x' })]));
    await until(() => events(runner).some((e) => e.type === 'Template'), 'the Template event');
    // A hook that kept waiting would hold the allocation until the test times out.
    runner.send({ type: 'KILL' });
    const final = await runner.done;
    expect(final.taskStates.app?.state).toBe('dead');
    expect(final.taskStates.app?.events.map((e) => e.type)).not.toContain('Task hook failed');
    expect(final.hookErrors ?? []).toEqual([]);
  });

  it('restarts the task (not as a failure) when a change_mode "restart" template re-renders after a variable update', async () => {
    const variables = new MemoryVariables();
    variables.put('nomad/jobs/web', { v: '1' });
    const { runner, read } = await start(
      shellTask([template({ data: '{{ with nomadVar "nomad/jobs/web" }}v={{ .v }}{{ end }}', destination: 'local/v', changeMode: 'restart', splay: 50 })]),
      variables,
      { attempts: 0, interval: 60_000, delay: 10, mode: 'fail' },
    );
    await until(() => state(runner) === 'running', 'the task to run');
    variables.put('nomad/jobs/web', { v: '2' });
    await until(async () => (await read('local/v')) === 'v=2', 'the re-render');
    const restart = await until(() => events(runner).find((e) => e.type === 'Restart Signaled'), 'the restart');
    expect(restart.displayMessage).toBe('Template with change_mode restart re-rendered');
    await until(() => state(runner) === 'running' && events(runner).some((e) => e.type === 'Restarting'), 'the task to run again');
    // Attempts 0: a failure restart would have ended the task; this one does not count.
    expect(runner.getState().taskStates.app?.failed).toBe(false);
  });

  it('signals the task when a change_mode "signal" template re-renders after a variable update', async () => {
    const variables = new MemoryVariables();
    variables.put('nomad/jobs/web', { v: '1' });
    const { runner, read } = await start(
      shellTask([template({ data: '{{ with nomadVar "nomad/jobs/web" }}v={{ .v }}{{ end }}', destination: 'local/v', changeMode: 'signal', changeSignal: 'SIGHUP' })]),
      variables,
    );
    await until(() => state(runner) === 'running', 'the task to run');
    await until(() => read('local/env.out'), 'the task to set its trap');
    variables.put('nomad/jobs/web', { v: '2' });
    expect(await until(() => read('local/signals'), 'the task to get SIGHUP')).toBe('hup\n');
    expect(await read('local/v')).toBe('v=2');
    // One Signaling event saying why, as Nomad's template manager records it (was: a Template event, then a Signaling one).
    expect(events(runner).filter((e) => e.type === 'Signaling')).toEqual([expect.objectContaining({ displayMessage: 'Template re-rendered', details: { signal: 'SIGHUP' } })]);
    expect(events(runner).some((e) => e.type === 'Template' && (e.displayMessage ?? e.message) === 'Template re-rendered')).toBe(false);
  });

  it('does not act on a re-render that leaves the file unchanged', async () => {
    const variables = new MemoryVariables();
    variables.put('nomad/jobs/web', { v: '1', other: 'a' });
    const { runner } = await start(
      shellTask([template({ data: '{{ with nomadVar "nomad/jobs/web" }}v={{ .v }}{{ end }}', destination: 'local/v', changeMode: 'restart' })]),
      variables,
    );
    await until(() => state(runner) === 'running', 'the task to run');
    variables.put('nomad/jobs/web', { v: '1', other: 'b' });
    await new Promise((r) => setTimeout(r, 300));
    variables.put('nomad/jobs/web', { v: '1', other: 'c' });
    await until(() => events(runner).length > 0, 'events');
    // A later restart-mode change proves the watcher was live all along; the unchanged ones did nothing.
    variables.put('nomad/jobs/web', { v: '3', other: 'c' });
    await until(() => events(runner).some((e) => e.type === 'Restart Signaled'), 'the restart');
    expect(events(runner).filter((e) => e.type === 'Restart Signaled')).toHaveLength(1);
  });

  it('runs change_script in the task when a change_mode "script" template re-renders, and says so', async () => {
    const variables = new MemoryVariables();
    variables.put('nomad/jobs/web', { v: '1' });
    const script = { command: 'reload', args: ['--graceful'], timeout: 5_000, failOnError: false };
    const task: TaskSpec = {
      name: 'app', driver: 'mock', config: { run_for: '1h', exec_command: { exit_code: 0, stdout_string: 'ok' } },
      templates: [template({ data: '{{ with nomadVar "nomad/jobs/web" }}{{ .v }}{{ end }}', destination: 'local/v', changeMode: 'script', changeScript: script })],
    };
    const { runner } = await start(task, variables);
    await until(() => state(runner) === 'running', 'the task to run');
    variables.put('nomad/jobs/web', { v: '2' });
    // Nomad's event type and words (processScript), which were allocrun's own ("Template": "Template ran script ...").
    const ran = await until(() => events(runner).find((e) => e.type === 'Task hook message'), 'the script event');
    expect(ran.displayMessage ?? ran.message).toBe('Template successfully ran script reload with arguments: [--graceful]. Exit code: 0');
  });

  it('restarts the task as a failure when a fail_on_error change_script fails', async () => {
    const variables = new MemoryVariables();
    variables.put('nomad/jobs/web', { v: '1' });
    const task: TaskSpec = {
      name: 'app', driver: 'mock', config: { run_for: '1h', exec_command: { exit_code: 3, stdout_string: '' } },
      templates: [template({ data: '{{ with nomadVar "nomad/jobs/web" }}{{ .v }}{{ end }}', destination: 'local/v', changeMode: 'script', changeScript: { command: 'reload', args: [], timeout: 5_000, failOnError: true } })],
    };
    const { runner } = await start(task, variables, { attempts: 0, interval: 60_000, delay: 10, mode: 'fail' });
    await until(() => state(runner) === 'running', 'the task to run');
    variables.put('nomad/jobs/web', { v: '2' });
    const failed = await until(() => events(runner).find((e) => e.type === 'Task hook failed'), 'the failure event');
    expect(failed.displayMessage ?? failed.message).toBe('Template ran script reload with arguments [] on change but it exited with code: 3');
    // Attempts 0: a failure restart ends the task.
    await until(() => runner.getState().taskStates.app?.failed === true, 'the task to fail');
  });

  it('waits for a file a template reads, and renders once it appears', async () => {
    const { runner, taskDir, read } = await start(shellTask([template({ data: 'seed={{ file "local/seed.txt" }}', destination: 'local/out' })]));
    const missing = await until(() => events(runner).find((e) => e.type === 'Template'), 'the Template event');
    expect(missing.displayMessage ?? missing.message).toBe('Missing: file(local/seed.txt)');
    await writeFile(join(taskDir, 'local', 'seed.txt'), '42');
    await until(() => state(runner) === 'running', 'the task to run');
    expect(await read('local/out')).toBe('seed=42');
  });

  it('renders again on a restart only with render_templates', async () => {
    // A timestamp has no change stream: only a render on the restart can change the file.
    const data = '{{ timestamp "2006-01-02T15:04:05.000Z07:00" }}';
    for (const renderTemplates of [false, true]) {
      const { runner, read } = await start(shellTask([template({ data, destination: 'local/stamp' })]), undefined, {
        attempts: 3, interval: 60_000, delay: 10, mode: 'fail', renderTemplates,
      });
      await until(() => state(runner) === 'running', 'the task to run');
      const first = await read('local/stamp');
      await new Promise((r) => setTimeout(r, 20));
      runner.send({ type: 'RESTART', task: 'app' });
      await until(() => state(runner) === 'running' && events(runner).some((e) => e.type === 'Restarting'), 'the task to run again');
      const second = await read('local/stamp');
      if (renderTemplates) expect(second).not.toBe(first);
      else expect(second).toBe(first);
    }
  });

  it('fails the task with "Template failed" when the template cannot execute', async () => {
    const { runner } = await start(shellTask([template({ data: '{{ index (parseJSON "[1]") 5 }}', destination: 'local/x' })], { restart: { attempts: 0, interval: 1_000, delay: 10, mode: 'fail' } }));
    const final = await runner.done;
    expect(final.clientStatus).toBe('failed');
    const failed = final.taskStates.app!.events.find((e) => (e.displayMessage ?? e.message ?? '').includes('Template failed'));
    expect(failed?.displayMessage ?? failed?.message).toContain('index out of range: 5');
  });

  it('refuses a destination that leads out of the task dir through a symlink, writing nothing outside', async () => {
    const taskDir = tempDir('allocrun-taskdir-');
    const outside = tempDir('allocrun-outside-');
    dirs.push(taskDir, outside);
    await mkdir(join(taskDir, 'local'));
    await symlink(outside, join(taskDir, 'local', 'out'));
    const scope = { env: {}, namespace: 'default', readFile: () => undefined, now: () => new Date() };
    await expect(renderTemplateFile(template({ data: 'x', destination: 'local/out/x' }), taskDir, scope)).rejects.toThrow(
      'destination "local/out/x" leads out of the task directory through a symlink',
    );
    await expect(stat(join(outside, 'x'))).rejects.toThrow();
    await expect(renderTemplateFile(template({ data: 'x', destination: '../x' }), taskDir, scope)).rejects.toThrow('escapes the task directory');
  });
});
