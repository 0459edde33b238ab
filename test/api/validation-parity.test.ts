/**
 * Validation parity (issue 25): every task the runtime refuses to run is refused before it runs, by the
 * loader `allocrun validate` uses, by `POST /v1/validate/job`, by registration (`PUT /v1/jobs`,
 * `PUT /v1/job/:id`) with a 400, and by `POST /v1/jobs/parse`, each naming the field; and bodies nested or
 * sized past the limits are a 400 on every endpoint, never a 500. One real agent (socket only) serves the
 * API; the runtime side runs each task through createAllocRunner with the default drivers.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJob as loadJobForCli } from '../../src/cli/job-file.ts';
import { isSpecError, type AllocSpec, type TaskSpec } from '../../src/jobspec/index.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { runCli } from '../cli/spawn-cli.ts';
import { call, startAgent, type AgentProcess } from './agent-process.ts';

let agent: AgentProcess;
let scratch: string;
beforeAll(async () => {
  agent = await startAgent();
  scratch = await mkdtemp(join(tmpdir(), 'allocrun-parity-'));
}, 60_000);
afterAll(async () => {
  await agent?.stop();
  await rm(scratch, { recursive: true, force: true });
}, 60_000);

const NO_RESTART = { attempts: 0, interval: 60_000, delay: 0, mode: 'fail' as const };

/** A task as the runtime takes it; `name` defaults to `t`. */
type TaskRow = Pick<TaskSpec, 'driver' | 'config'> & { name?: string };

/** The one-task Nomad API job of a row. */
function apiJob(id: string, task: TaskRow) {
  return { Job: { ID: id, Type: 'batch', TaskGroups: [{ Name: 'g', Tasks: [{ Name: task.name ?? 't', Driver: task.driver, Config: task.config }] }] } };
}

/**
 * How the runtime takes the task: refused before it runs (a SpecError from createAllocRunner, or a task
 * that fails without ever starting), or run.
 */
async function runtimeVerdict(task: TaskRow): Promise<'refused' | 'ran'> {
  const dataDir = await mkdtemp(join(scratch, 'rt-'));
  const spec: AllocSpec = {
    id: 'parity', job: 'parity', group: 'g', type: 'batch', restart: NO_RESTART,
    tasks: [{ name: task.name ?? 't', driver: task.driver, config: task.config, restart: NO_RESTART, killTimeout: 1000 }],
  };
  let runner;
  try {
    runner = createAllocRunner(spec, { dataDir });
  } catch (err) {
    if (isSpecError(err)) return 'refused';
    throw err;
  }
  runner.start();
  const final = await runner.done;
  const events = Object.values(final.taskStates).flatMap((s) => s.events.map((e) => e.type));
  return final.clientStatus === 'failed' && !events.includes('Started') ? 'refused' : 'ran';
}

const TEN_THOUSAND = 'x'.repeat(10_000);
const ok = { driver: 'raw_exec', config: { command: '/bin/true' } };

/** [what, the task, the field named (as `allocrun validate` writes paths), words of the message]. */
const REFUSED: [string, TaskRow, string, string][] = [
  ['a task name with a space', { ...ok, name: 'web server' }, 'job.parity.group.g.task["web server"]', 'may only use ASCII letters, digits'],
  ['a unicode task name', { ...ok, name: 'wëb' }, 'job.parity.group.g.task.wëb', 'may only use ASCII letters, digits'],
  ['a task name with a newline', { ...ok, name: 'a\nb' }, 'job.parity.group.g.task["a\\nb"]', 'must not contain a control character'],
  ['a task name with a slash', { ...ok, name: 'a/b' }, 'job.parity.group.g.task.a/b', 'must not contain "/"'],
  ['a 10,000-character task name', { ...ok, name: TEN_THOUSAND }, `job.parity.group.g.task["${'x'.repeat(40)}…"]`, 'is 10000 bytes long; it becomes a directory name, so it may have at most 100'],
  ['an unknown driver', { driver: 'docker', config: { image: 'redis' } }, 'job.parity.group.g.task.t.driver', 'unknown driver "docker": this runtime has "mock", "raw_exec"'],
  ['raw_exec without a command', { driver: 'raw_exec', config: {} }, 'job.parity.group.g.task.t.config.command', 'must be a non-empty string (got nothing)'],
  ['raw_exec with a blank command', { driver: 'raw_exec', config: { command: '  ' } }, 'job.parity.group.g.task.t.config.command', 'must be a non-empty string'],
  ['raw_exec with a number for a command', { driver: 'raw_exec', config: { command: 42 } }, 'job.parity.group.g.task.t.config.command', 'must be a non-empty string (got number)'],
  ['raw_exec with args that are not a list', { driver: 'raw_exec', config: { command: '/bin/true', args: '-c true' } }, 'job.parity.group.g.task.t.config.args', 'must be a list of strings'],
  ['raw_exec with an object among its args', { driver: 'raw_exec', config: { command: '/bin/true', args: ['a', { b: 1 }] } }, 'job.parity.group.g.task.t.config.args[1]', 'must be a string (got object)'],
  ['raw_exec with an option it does not have', { driver: 'raw_exec', config: { command: '/bin/true', image: 'x' } }, 'job.parity.group.g.task.t.config.image', 'is not a raw_exec option'],
  ['mock with an option it does not have', { driver: 'mock', config: { run_for: '1s', bogus: 1 } }, 'job.parity.group.g.task.t.config.bogus', 'unknown mock driver option'],
  ['mock with a run_for that is no duration', { driver: 'mock', config: { run_for: 'soon' } }, 'job.parity.group.g.task.t.config.run_for', 'soon'],
  ['mock with a string exit code', { driver: 'mock', config: { exit_code: 'one' } }, 'job.parity.group.g.task.t.config.exit_code', 'expected an integer, got "one"'],
];

describe('validation parity: what the runtime refuses is refused before it runs', { timeout: 60_000 }, () => {
  it('runs the control task, which every door accepts', async () => {
    expect(await runtimeVerdict(ok)).toBe('ran');
    const body = apiJob('parity', ok);
    expect((await call(agent.socket, 'PUT', '/v1/validate/job', body)).json()).toMatchObject({ ValidationErrors: [], Error: '' });
    const file = join(scratch, 'ok.json');
    await writeFile(file, JSON.stringify(body));
    await expect(loadJobForCli(file)).resolves.toMatchObject({ allocs: [{ id: 'parity-g-0' }] });
  });

  it.each(REFUSED)('%s: the runtime refuses it, and so do validate, the API and registration, naming the field', async (_what, task, path, words) => {
    expect(await runtimeVerdict(task)).toBe('refused');
    const body = apiJob('parity', task);

    // The loader `allocrun validate` (and `run`, `job run`) uses.
    const file = join(scratch, `${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify(body));
    const problems = await loadJobForCli(file).then(
      () => [],
      (err: unknown) => (isSpecError(err) ? err.problems : Promise.reject(err)),
    );
    expect(problems).toContainEqual(expect.objectContaining({ path, message: expect.stringContaining(words) }));

    const line = `${path}: `;
    for (const [method, url] of [['PUT', '/v1/jobs'], ['POST', '/v1/jobs'], ['PUT', '/v1/job/parity']] as const) {
      const res = await call(agent.socket, method, url, body);
      expect([method, url, res.status]).toEqual([method, url, 400]);
      expect(res.text).toContain(line);
      expect(res.text).toContain(words);
    }
    // Nomad's validate endpoint answers 200 with the errors in ValidationErrors (nomad job validate reads them).
    const validate = await call(agent.socket, 'PUT', '/v1/validate/job', body);
    expect(validate.status).toBe(200);
    const errors = validate.json<{ ValidationErrors: string[]; DriverConfigValidated: boolean }>();
    expect(errors.DriverConfigValidated).toBe(false);
    expect(errors.ValidationErrors.some((e) => e.startsWith(line) && e.includes(words))).toBe(true);
    expect((await call(agent.socket, 'GET', '/v1/job/parity')).status).toBe(404);
  });

  it('refuses the same tasks written in HCL on /v1/jobs/parse with a 400 at their line', async () => {
    const hcl = (task: string, driver: string, config: string) =>
      `job "parity" {\n  type = "batch"\n  group "g" {\n    task "${task}" {\n      driver = "${driver}"\n      config {\n${config}\n      }\n    }\n  }\n}\n`;
    const cases: [string, string][] = [
      [hcl('web server', 'raw_exec', 'command = "/bin/true"'), '4:5: job.parity.group.g.task["web server"]: task name "web server" may only use ASCII letters'],
      [hcl(TEN_THOUSAND, 'raw_exec', 'command = "/bin/true"'), 'is 10000 bytes long'],
      [hcl('t', 'docker', 'image = "redis"'), '5:7: job.parity.group.g.task.t.driver: unknown driver "docker"'],
      [hcl('t', 'raw_exec', 'args = ["x"]'), 'job.parity.group.g.task.t.config.command: must be a non-empty string (got nothing)'],
    ];
    for (const [JobHCL, expected] of cases) {
      const res = await call(agent.socket, 'POST', '/v1/jobs/parse', { JobHCL });
      expect([res.status, res.text]).toEqual([400, expect.stringContaining(expected)]);
    }
    const fine = await call(agent.socket, 'POST', '/v1/jobs/parse', { JobHCL: hcl('t', 'raw_exec', 'command = "/bin/true"') });
    expect(fine.status).toBe(200);
  });

  it('refuses a group name with a newline and a job ID too long for a directory', async () => {
    const newline = apiJob('parity', ok);
    newline.Job.TaskGroups[0]!.Name = 'g\nh';
    const res = await call(agent.socket, 'PUT', '/v1/jobs', newline);
    expect([res.status, res.text]).toEqual([400, expect.stringContaining('group name "g\\nh" must not contain a control character')]);
    const long = apiJob('j'.repeat(101), ok);
    const longRes = await call(agent.socket, 'PUT', '/v1/jobs', long);
    expect([longRes.status, longRes.text]).toEqual([400, expect.stringContaining('is 101 bytes long; it becomes a directory name, so it may have at most 100')]);
  });

  it('takes group and task names that are also Object\'s own keys ("constructor", "toString") like any other, never a 500', async () => {
    const body = { Job: { ID: 'constructor', Type: 'batch', TaskGroups: [{ Name: 'constructor', Tasks: [{ Name: 'toString', Driver: 'mock', Config: {} }] }] } };
    const res = await call(agent.socket, 'PUT', '/v1/validate/job', body);
    expect([res.status, res.json().ValidationErrors]).toEqual([200, []]);
    const file = join(scratch, 'constructor.json');
    await writeFile(file, JSON.stringify(body));
    await expect(loadJobForCli(file)).resolves.toMatchObject({ allocs: [{ id: 'constructor-constructor-0', tasks: [{ name: 'toString' }] }] });
  });

  it('refuses a job whose groups add up to more allocations than one node takes', async () => {
    const big = apiJob('parity', ok);
    big.Job.TaskGroups = [1, 2, 3].map((i) => ({ Name: `g${i}`, Count: 1000, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' } }] })) as never;
    const res = await call(agent.socket, 'PUT', '/v1/jobs', big);
    expect([res.status, res.text]).toEqual([400, expect.stringContaining("job.parity.group: the groups' counts add up to 3000 allocations; a job may place at most 1000")]);
  });
});

describe('depth and size limits answer 400 on every endpoint, never 500', { timeout: 60_000 }, () => {
  /** `{"Job":{"ID":"deep","Job":{"Job":...1...}}}` nested `levels` deep, as text (serialising it would overflow). */
  const deepJob = (levels: number) => `{"Job":{"ID":"deep","Meta":${'{"Job":'.repeat(levels)}1${'}'.repeat(levels)}}}`;

  it('refuses a Job nested 4,500 levels deep on register, validate and parse', async () => {
    const body = deepJob(4500);
    for (const [method, url] of [['PUT', '/v1/jobs'], ['POST', '/v1/jobs'], ['PUT', '/v1/job/deep'], ['PUT', '/v1/validate/job'], ['POST', '/v1/validate/job'], ['POST', '/v1/jobs/parse']] as const) {
      const res = await call(agent.socket, method, url, body, { 'content-type': 'application/json' });
      expect([url, res.status, res.text]).toEqual([url, 400, expect.stringContaining('nests objects and lists more than 100 levels deep')]);
    }
    // Brackets inside strings are text, not nesting.
    const inString = await call(agent.socket, 'PUT', '/v1/validate/job', JSON.stringify({ Job: { ID: 'deep', Meta: { a: '['.repeat(5000) } } }));
    expect(inString.text).not.toContain('levels deep');
  });

  it('refuses deep HCL on /v1/jobs/parse and an oversize body everywhere with a 4xx', async () => {
    const deepHcl = `job "x" {\n  meta = ${'['.repeat(4500)}${']'.repeat(4500)}\n}\n`;
    const res = await call(agent.socket, 'POST', '/v1/jobs/parse', { JobHCL: deepHcl });
    expect([res.status, res.text]).toEqual([400, expect.stringContaining('nested more than 100 levels deep')]);
    const huge = JSON.stringify({ Job: { ID: 'huge', Meta: { pad: 'x'.repeat(2 * 1024 * 1024) } } });
    for (const url of ['/v1/jobs', '/v1/validate/job']) {
      const big = await call(agent.socket, 'PUT', url, huge).catch((err: NodeJS.ErrnoException) => ({ status: err.code === 'EPIPE' || err.code === 'ECONNRESET' ? 413 : 0, text: '' }));
      expect(big.status).toBe(413);
    }
  });
});

describe('allocrun validate refuses what the runtime would', { timeout: 60_000 }, () => {
  it('names a spaced task name, an unknown driver and a missing command, with their lines, and exits 1', async () => {
    const file = join(scratch, 'bad.nomad');
    await writeFile(file, 'job "cli" {\n  group "g" {\n    task "my task" {\n      driver = "raw_exec"\n      config {\n        args = ["x"]\n      }\n    }\n    task "d" {\n      driver = "docker"\n    }\n  }\n}\n');
    const res = await runCli(['validate', file]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${file}:3:5: job.cli.group.g.task["my task"]: task name "my task" may only use ASCII letters`);
    expect(res.stderr).toContain(`${file}:10:7: job.cli.group.g.task.d.driver: unknown driver "docker"`);
    expect(res.stderr).toContain('job.cli.group.g.task["my task"].config.command: must be a non-empty string (got nothing)');
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });
});
