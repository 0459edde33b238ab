import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as hcl2json } from '@cdktf/hcl2json';
import { describe, expect, it } from 'vitest';
import { specError } from './spec-error-of.ts';
import { SpecError, loadJob, loadJobFile, parseJob, parseJobText, validateAllocSpec } from '../../src/jobspec/index.ts';
import type { SpecProblem } from '../../src/jobspec/index.ts';
import { tempDir } from '../temp-dirs.ts';

const examples = new URL('../../examples/', import.meta.url).pathname;
const fixtures = new URL('./fixtures/', import.meta.url).pathname;

const hcl = (text: string) => parseJobText(text, { format: 'hcl', file: 'job.nomad' });

/** A one-group job around `taskBody` (HCL). */
function jobWith({ job = '', group = '', task = 'driver = "mock"' }: { job?: string; group?: string; task?: string }): string {
  return `job "j" {\n${job}\n  group "g" {\n${group}\n    task "t" {\n${task}\n    }\n  }\n}\n`;
}

describe('loadJobFile', () => {
  it('loads the batch example into one alloc with its three tasks in file order', async () => {
    const [alloc, ...rest] = await loadJobFile(join(examples, 'batch.nomad'));
    expect(rest).toHaveLength(0);
    expect(alloc!.id).toBe('batch-work-0');
    expect(alloc!.type).toBe('batch');
    expect(alloc!.tasks.map((t) => [t.name, t.lifecycle?.hook])).toEqual([
      ['setup', 'prestart'],
      ['main', undefined],
      ['cleanup', 'poststop'],
    ]);
    const main = alloc!.tasks[1]!;
    expect(main.killTimeout).toBe(5000);
    expect(main.logs).toEqual({ maxFiles: 2, maxFileSize: 1024 * 1024 });
    expect(main.env).toEqual({ GREETING: 'hello' });
    expect(main.config).toEqual({ run_for: '2s', exit_code: 0, stdout_string: 'working on ${NOMAD_JOB_NAME}' });
    expect(() => validateAllocSpec(alloc)).not.toThrow();
  });

  it('loads the same job from HCL, JSON (hcl2json shape), YAML and Nomad API JSON into equal specs', async () => {
    const fromHcl = await loadJobFile(join(examples, 'batch.nomad'));
    expect(await loadJobFile(join(fixtures, 'batch.json'))).toEqual(fromHcl);
    expect(await loadJobFile(join(fixtures, 'batch.yaml'))).toEqual(fromHcl);
    expect(await loadJobFile(join(fixtures, 'batch.api.json'))).toEqual(fromHcl);
  });

  it("loads hcl2json's own output of the example (its tasks sorted by name, as Go maps are)", async () => {
    const fromHcl = await loadJobFile(join(examples, 'batch.nomad'));
    const hclText = await readFile(join(examples, 'batch.nomad'), 'utf8');
    const fromJson = await parseJobText(JSON.stringify(await hcl2json('batch.nomad', hclText)), { format: 'json' });
    const byName = (specs: typeof fromHcl) => specs.map((a) => ({ ...a, tasks: [...a.tasks].sort((x, y) => x.name.localeCompare(y.name)) }));
    expect(byName(fromJson)).toEqual(byName(fromHcl));
  });

  it('picks the format from the extension and reads .yml and .json files', async () => {
    const dir = tempDir('allocrun-spec-');
    const yaml = await readFile(join(fixtures, 'batch.yaml'), 'utf8');
    await writeFile(join(dir, 'job.yml'), yaml);
    await writeFile(join(dir, 'job.json'), JSON.stringify({ job: { j: { group: { g: { task: { t: { driver: 'mock' } } } } } } }));
    expect((await loadJobFile(join(dir, 'job.yml')))[0]!.job).toBe('batch');
    expect((await loadJobFile(join(dir, 'job.json')))[0]!.id).toBe('j-g-0');
  });

  it('passes read errors through as they are, for the CLI to word', async () => {
    await expect(loadJobFile(join(examples, 'no-such-file.nomad'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('allocations from a job', () => {
  it('makes one alloc per group instance, indexed, for every group', async () => {
    const allocs = await hcl(`job "web" {
  group "api" {
    count = 3
    task "app" { driver = "mock" }
  }
  group "db" {
    task "pg" { driver = "mock" }
  }
}`);
    expect(allocs.map((a) => a.id)).toEqual(['web-api-0', 'web-api-1', 'web-api-2', 'web-db-0']);
    expect(allocs.map((a) => a.group)).toEqual(['api', 'api', 'api', 'db']);
  });

  it('makes no alloc for a group with count 0', async () => {
    expect(await hcl(jobWith({ group: 'count = 0' }))).toEqual([]);
  });

  it('gives every instance its own copy of the spec', async () => {
    const [a, b] = await hcl(jobWith({ group: 'count = 2', task: 'driver = "mock"\nenv { A = "1" }' }));
    a!.tasks[0]!.env!['A'] = 'changed';
    expect(b!.tasks[0]!.env).toEqual({ A: '1' });
  });

  it('keeps tasks in file order although hcl2json sorts them', async () => {
    const [alloc] = await hcl(`job "j" {\n group "g" {\n  task "zeta" { driver = "mock" }\n  task "alpha" { driver = "mock" }\n  task "mid" { driver = "mock" }\n }\n}`);
    expect(alloc!.tasks.map((t) => t.name)).toEqual(['zeta', 'alpha', 'mid']);
  });

  const defaults = [
    { type: 'service', restart: { attempts: 2, interval: 30 * 60_000, delay: 15_000, mode: 'fail' } },
    { type: 'system', restart: { attempts: 2, interval: 30 * 60_000, delay: 15_000, mode: 'fail' } },
    { type: 'batch', restart: { attempts: 3, interval: 24 * 3_600_000, delay: 15_000, mode: 'fail' } },
    { type: 'sysbatch', restart: { attempts: 3, interval: 24 * 3_600_000, delay: 15_000, mode: 'fail' } },
  ] as const;
  for (const { type, restart } of defaults) {
    it(`uses Nomad's ${type} restart defaults for group and tasks`, async () => {
      const [alloc] = await hcl(jobWith({ job: `type = "${type}"` }));
      expect(alloc!.type).toBe(type);
      expect(alloc!.restart).toEqual(restart);
      expect(alloc!.tasks[0]!.restart).toEqual(restart);
    });
  }

  it('defaults the job type to service', async () => {
    const [alloc] = await hcl(jobWith({}));
    expect(alloc!.type).toBe('service');
    expect(alloc!.restart!.attempts).toBe(2);
  });

  it('merges the group restart block over the defaults and the task block over the group', async () => {
    const [alloc] = await hcl(
      jobWith({ job: 'type = "batch"', group: 'restart {\n attempts = 5\n}', task: 'driver = "mock"\nrestart {\n delay = "2s"\n mode = "delay"\n}' }),
    );
    expect(alloc!.restart).toEqual({ attempts: 5, interval: 24 * 3_600_000, delay: 15_000, mode: 'fail' });
    expect(alloc!.tasks[0]!.restart).toEqual({ attempts: 5, interval: 24 * 3_600_000, delay: 2_000, mode: 'delay' });
  });

  it('reads Go durations and millisecond numbers', async () => {
    const [alloc] = await hcl(jobWith({ group: 'shutdown_delay = "1m30s"', task: 'driver = "mock"\nkill_timeout = 2500\nshutdown_delay = "250ms"' }));
    expect(alloc!.shutdownDelay).toBe(90_000);
    expect(alloc!.tasks[0]!.killTimeout).toBe(2_500);
    expect(alloc!.tasks[0]!.shutdownDelay).toBe(250);
  });

  it('merges job meta and group meta into the alloc and keeps task meta on the task', async () => {
    const [alloc] = await hcl(jobWith({ job: 'meta {\n a = "job"\n}\nnamespace = "ns"', group: 'meta {\n b = 2\n}', task: 'driver = "mock"\nmeta = { c = true }' }));
    expect(alloc!.meta).toEqual({ a: 'job', b: '2' });
    expect(alloc!.namespace).toBe('ns');
    expect(alloc!.tasks[0]!.meta).toEqual({ c: 'true' });
  });

  it('turns leader, sidecar and resources into the spec', async () => {
    const [alloc] = await hcl(jobWith({ task: 'driver = "mock"\nleader = true\nlifecycle {\n hook = "poststart"\n sidecar = true\n}\nresources {\n cpu = 500\n memory = 256\n memory_max = 512\n}' }));
    const t = alloc!.tasks[0]!;
    expect(t.leader).toBe(true);
    expect(t.lifecycle).toEqual({ hook: 'poststart', sidecar: true });
    expect(t.resources).toEqual({ cpu: 500, memoryMB: 256, memoryMaxMB: 512 });
  });

  it('keeps $${ as a literal ${ the way HCL means it', async () => {
    const [alloc] = await hcl(jobWith({ task: 'driver = "mock"\nenv {\n A = "$${HOME}"\n B = "${NOMAD_TASK_NAME}"\n}' }));
    expect(alloc!.tasks[0]!.env).toEqual({ A: '${HOME}', B: '${NOMAD_TASK_NAME}' });
  });

  it('loads a Nomad job with blocks allocrun ignores, warning about each', async () => {
    const { allocs, warnings } = await parseJob(
      jobWith({
        job: 'priority = 50\nmigrate {\n max_parallel = 1\n}',
        group: 'network {\n port "http" {}\n}\nephemeral_disk {\n size = 300\n}',
        task: 'driver = "mock"\nconstraint {\n attribute = "x"\n}\nconstraint {\n distinct_hosts = true\n}',
      }),
      { format: 'hcl', file: 'job.nomad' },
    );
    expect(allocs).toHaveLength(1);
    // Constraints are honoured by placement: only one that spreads over nodes (one node here) is warned about.
    expect(warnings.map((w) => w.path)).toEqual([
      'job.j.priority',
      'job.j.migrate',
      'job.j.group.g.ephemeral_disk',
      'job.j.group.g.task.t.constraint[1]',
    ]);
    expect(warnings[0]).toMatchObject({ file: 'job.nomad', line: 2 });
  });
});

describe('problems in job files', () => {
  it.each([
    ['HCL', () => parseJob(jobWith({ job: 'type = "batch"\nparameterized {\n meta_required = ["x"]\n}', task: 'driver = "mock"\ndispatch_payload {\n file = "in.txt"\n}' }), { format: 'hcl', file: 'job.nomad' })],
    ['API JSON', () => parseJob(JSON.stringify({ Job: { ID: 'j', Type: 'batch', ParameterizedJob: { MetaRequired: ['x'] }, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock', DispatchPayload: { File: 'in.txt' } }] }] } }), { format: 'json' })],
  ])('loads a parameterized job from %s without a warning, its tasks told where the payload goes', async (_format, load) => {
    const loaded = await load();
    expect(loaded.warnings).toEqual([]);
    expect(loaded.job.body.parameterized).toEqual({ meta_required: ['x'] });
    expect(loaded.allocs[0]!.tasks[0]!.dispatchPayload).toEqual({ file: 'in.txt' });
  });

  it('refuses a parameterized service job, naming the block (Nomad: batch or sysbatch only)', async () => {
    const e = await specError(hcl(jobWith({ job: 'parameterized {}' })));
    expect(e.problems.map((p) => p.path)).toEqual(['job.j.parameterized']);
    expect(e.problems[0]!.message).toContain('Parameterized job can only be used with "batch" or "sysbatch" jobs');
  });

  it('reports a broken HCL file with its line and column', async () => {
    const err = await specError(loadJobFile(join(examples, 'broken.nomad')));
    expect(err.code).toBe('ErrSpec');
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatchObject({ file: join(examples, 'broken.nomad'), line: 5, column: 9, path: '' });
    expect(err.problems[0]!.message).toMatch(/Invalid expression/);
    expect(err.message).toBe(`${join(examples, 'broken.nomad')}:5:9: ${err.problems[0]!.message}`);
    expect(err.message).not.toMatch(/\n\s+at /);
    expect(err.message).not.toContain('__allocrun');
  });

  it('reports every HCL diagnostic, not just the first', async () => {
    const err = await specError(hcl('job "a" {\n  x = \n  y = "a" "b"\n}\n'));
    expect(err.problems.length).toBeGreaterThanOrEqual(1);
    expect(err.problems.every((p) => p.line !== undefined && p.column !== undefined)).toBe(true);
  });

  it('points a redefined attribute at its line, naming the first one by line', async () => {
    const err = await specError(hcl('job "a" {\n  type = "batch"\n  type = "service"\n}\n'));
    expect(err.problems[0]).toMatchObject({ line: 3, column: 3 });
    expect(err.problems[0]!.message).toContain('line 2, column 3');
  });

  it('reports both schema errors of the bad-schema example with paths and positions', async () => {
    const file = join(examples, 'bad-schema.nomad');
    const err = await specError(loadJobFile(file));
    expect(err.problems).toEqual<SpecProblem[]>([
      {
        path: 'job.bad-schema.group.api.task.app.kill_timeout',
        message: expect.stringContaining('"soon" is not a duration') as unknown as string,
        file,
        line: 12,
        column: 7,
      },
      { path: 'job.bad-schema.group.api.task.app.kill_signall', message: 'unknown key "kill_signall"; did you mean "kill_signal"?', file, line: 13, column: 7 },
    ]);
    expect(err.message.split('\n')).toHaveLength(2);
    expect(err.message.split('\n')[0]).toBe(`${file}:12:7: job.bad-schema.group.api.task.app.kill_timeout: ${err.problems[0]!.message}`);
  });

  it('names every unknown key at every level', async () => {
    const err = await specError(
      hcl(jobWith({ job: 'typo = 1', group: 'cont = 2\nrestart {\n atempts = 1\n}', task: 'driver = "mock"\nlogs {\n max_file = 3\n}' })),
    );
    expect(err.problems.map((p) => [p.path, p.line])).toEqual([
      ['job.j.typo', 2],
      ['job.j.group.g.cont', 4],
      ['job.j.group.g.restart.atempts', 6],
      ['job.j.group.g.task.t.logs.max_file', 11],
    ]);
    expect(err.problems.map((p) => p.message)).toEqual([
      'unknown key "typo"; did you mean "type"?',
      'unknown key "cont"; did you mean "count"?',
      'unknown key "atempts"; did you mean "attempts"?',
      'unknown key "max_file"; did you mean "max_files"?',
    ]);
  });

  it('reports wrong types, bad enums and missing fields all at once', async () => {
    const err = await specError(
      hcl(`job "j" {
  type = "cron"
  group "g" {
    count = "two"
    task "t" {
      leader = "yes"
      lifecycle {
        hook = "prerun"
      }
    }
    task "u" {
      driver = "mock"
      kill_signal = "SIGNOPE"
      logs {
        max_files = 0
      }
    }
  }
}`),
    );
    expect(err.problems.map((p) => `${p.line}: ${p.path}: ${p.message}`)).toEqual([
      '2: job.j.type: must be one of "service", "batch", "system", "sysbatch"; got "cron"',
      '4: job.j.group.g.count: expected a number, got "two"',
      '5: job.j.group.g.task.t.driver: is required',
      '6: job.j.group.g.task.t.leader: expected true or false, got "yes"',
      '8: job.j.group.g.task.t.lifecycle.hook: must be one of "prestart", "poststart", "poststop"; got "prerun"',
      '13: job.j.group.g.task.u.kill_signal: must be a signal name such as "SIGTERM", "SIGINT" or "SIGQUIT"',
      '15: job.j.group.g.task.u.logs.max_files: must be at least 1; got 0',
    ]);
  });

  it('evaluates HCL expressions as Nomad does (count = length(["a", "b"]) is 2)', async () => {
    expect(await hcl(jobWith({ group: 'count = length(["a", "b"])' }))).toHaveLength(2);
  });

  it('reports two leaders, an empty group and an impossible restart policy', async () => {
    const err = await specError(
      hcl(`job "j" {
  group "g" {
    restart {
      attempts = 10
      delay    = "1m"
      interval = "5m"
    }
    task "a" {
      driver = "mock"
      leader = true
    }
    task "b" {
      driver = "mock"
      leader = true
      restart {
        interval = "1s"
      }
    }
  }
  group "empty" {
  }
}`),
    );
    expect(err.problems.map((p) => `${p.line}: ${p.path}: ${p.message}`)).toEqual([
      '3: job.j.group.g.restart: cannot restart 10 times in an interval of 5m0s with a delay of 1m0s',
      '14: job.j.group.g.task.b.leader: only one task of a group can be the leader; "a" already is',
      '20: job.j.group.empty.task: a group needs at least one task',
    ]);
  });

  it('reports repeated blocks and tasks at the repeat', async () => {
    const err = await specError(
      hcl(`job "j" {
  group "g" {
    task "t" {
      driver = "mock"
    }
    task "t" {
      driver = "mock"
      restart {
        attempts = 1
      }
      restart {
        attempts = 2
      }
    }
  }
}`),
    );
    expect(err.problems.map((p) => `${p.line}: ${p.path}: ${p.message}`)).toEqual([
      '6: job.j.group.g.task.t[1]: "t" is defined 2 times; it may appear only once',
    ]);
  });

  it('reports a repeated nested block at its second occurrence', async () => {
    const err = await specError(hcl(jobWith({ task: 'driver = "mock"\nrestart {\n attempts = 1\n}\nrestart {\n attempts = 2\n}' })));
    expect(err.problems.map((p) => `${p.line}: ${p.path}`)).toEqual(['10: job.j.group.g.task.t.restart[1]']);
  });

  it('requires one labelled job, and labelled groups and tasks', async () => {
    expect((await specError(hcl('# nothing\n'))).problems[0]!.message).toMatch(/no job block/);
    expect((await specError(hcl('job {\n}\n'))).problems[0]!.message).toMatch(/needs a name/);
    const two = await specError(hcl('job "a" {\n group "g" {\n  task "t" { driver = "mock" }\n }\n}\njob "b" {\n}\n'));
    expect(two.problems[0]).toMatchObject({ path: 'job.b', line: 6 });
    const unlabelled = await specError(hcl('job "a" {\n group {\n  task "t" { driver = "mock" }\n }\n}\n'));
    expect(unlabelled.problems[0]).toMatchObject({ path: 'job.a.group', line: 2, message: 'a group block needs a name: group "name" { ... }' });
  });

  it('refuses names that cannot be directory names', async () => {
    const err = await specError(hcl('job "a b" {\n group "x/y" {\n  task ".." { driver = "mock" }\n }\n}\n'));
    expect(err.problems.map((p) => `${p.line}:${p.column}: ${p.path}: ${p.message}`)).toEqual([
      '1:1: job["a b"]: job name "a b" must not contain whitespace',
      '2:2: job["a b"].group.x/y: group name "x/y" must not contain "/"',
      '3:3: job["a b"].group.x/y.task[".."]: task name ".." must not be ".." (it names a directory)',
    ]);
  });

  it('refuses path-unsafe names in JSON and YAML files too', async () => {
    const json = await specError(parseJobText('{"job": {"a\\\\b": {"group": {"g": {"task": {"t": {"driver": "mock"}}}}}}}', { format: 'json', file: 'j.json' }));
    expect(json.problems.map((p) => p.message)).toEqual(['job name "a\\\\b" must not contain "\\"']);
    const yaml = await specError(parseJobText('job:\n  j:\n    group:\n      ".":\n        task:\n          t: { driver: mock }\n', { format: 'yaml', file: 'j.yaml' }));
    expect(yaml.problems.map((p) => `${p.line}: ${p.message}`)).toEqual(['4: group name "." must not be "." (it names a directory)']);
  });

  it('refuses top-level blocks other than job, variable and locals', async () => {
    const err = await specError(hcl('variable "x" {\n default = 1\n}\nvault {\n policies = ["a"]\n}\n' + jobWith({})));
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatchObject({ path: 'vault', line: 4, message: expect.stringContaining('a job file holds one job block') as unknown as string });
  });

  it('refuses HCL nested deeper than the WASM parser can take, and keeps parsing afterwards', async () => {
    const deep = `job "j" {\n  x = ${'['.repeat(5000)}${']'.repeat(5000)}\n}\n`;
    const err = await specError(hcl(deep));
    expect(err.problems[0]).toMatchObject({ line: 2, message: 'nested more than 100 levels deep' });
    const blocks = `job "j" {\n${'a {\n'.repeat(3000)}${'}\n'.repeat(3000)}}\n`;
    expect((await specError(hcl(blocks))).problems[0]!.message).toBe('nested more than 100 levels deep');
    expect(await hcl(jobWith({}))).toHaveLength(1);
  });

  it('does not count brackets inside strings, comments and heredocs as nesting', async () => {
    const many = '['.repeat(300);
    const [alloc] = await hcl(jobWith({ task: `driver = "mock"\n# ${many}\nenv {\n A = "${many}"\n B = <<EOT\n${many}\nEOT\n}` }));
    expect(alloc!.tasks[0]!.env!['A']).toBe(many);
  });

  it('refuses the key __proto__ rather than losing what it holds', async () => {
    const text = JSON.stringify({ job: { j: { group: { g: { task: { t: { driver: 'mock' } } } } } } }).replace('"g"', '"__proto__"');
    const err = await specError(parseJobText(text, { format: 'json' }));
    expect(err.problems.map((p) => `${p.path}: ${p.message}`)).toContain('job.j.group.__proto__: the key "__proto__" is reserved');
  });

  it('reports a count above the cap', async () => {
    const err = await specError(hcl(jobWith({ group: 'count = 100000' })));
    expect(err.problems[0]!.message).toMatch(/at most 1000/);
  });
});

describe('problems in JSON and YAML files', () => {
  it('reports a JSON syntax error with line and column', async () => {
    const err = await specError(parseJobText('{\n  "job": {\n    "j": { "type": "batch", }\n  }\n}', { format: 'json', file: 'j.json' }));
    expect(err.problems).toEqual([{ path: '', message: expect.stringMatching(/^JSON syntax error: expected a double-quoted property name/) as unknown as string, file: 'j.json', line: 3, column: 29 }]);
  });

  it('reports JSON schema errors at the key, through hcl2json-style lists', async () => {
    const text = JSON.stringify({ job: { j: [{ group: { g: [{ task: { t: [{ driver: 'mock', kill_timeout: true }] } }] } }] } }, null, 2);
    const err = await specError(parseJobText(text, { format: 'json', file: 'j.json' }));
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes('kill_timeout')) + 1;
    const column = lines[line - 1]!.indexOf('"kill_timeout"') + 1;
    expect(err.problems).toEqual([
      { path: 'job.j.group.g.task.t.kill_timeout', message: 'expected a duration like "15s" or "1m30s", got true', file: 'j.json', line, column },
    ]);
  });

  it('reports a YAML syntax error with line and column', async () => {
    const err = await specError(parseJobText('job:\n  j:\n    type: [batch\n', { format: 'yaml', file: 'j.yaml' }));
    expect(err.problems[0]).toMatchObject({ file: 'j.yaml', line: expect.any(Number) as unknown as number, column: expect.any(Number) as unknown as number });
    expect(err.problems[0]!.message).toMatch(/^YAML syntax error/);
  });

  it('reports YAML schema errors at the key', async () => {
    const err = await specError(
      parseJobText('job:\n  j:\n    group:\n      g:\n        count: -1\n        task:\n          t:\n            driver: mock\n            bogus: 1\n', { format: 'yaml', file: 'j.yaml' }),
    );
    expect(err.problems.map((p) => `${p.line}:${p.column}: ${p.path}`)).toEqual(['5:9: job.j.group.g.count', '9:13: job.j.group.g.task.t.bogus']);
  });

  it('reports a duplicate YAML key as a syntax error', async () => {
    const err = await specError(parseJobText('job:\n  j: {}\n  j: {}\n', { format: 'yaml' }));
    expect(err.problems[0]!.line).toBe(3);
  });

  it('refuses a YAML alias that contains itself', async () => {
    const err = await specError(parseJobText('job:\n  j: &a\n    group: *a\n', { format: 'yaml' }));
    expect(err.problems[0]!.message).toMatch(/alias/);
  });

  it('maps Nomad API JSON paths back to the API fields', async () => {
    const text = JSON.stringify({ Job: { ID: 'j', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock', KillTimeout: 'x', Bogus: 1 }] }] } }, null, 2);
    const err = await specError(parseJobText(text, { format: 'json' }));
    const lineOf = (s: string) => text.split('\n').findIndex((l) => l.includes(s)) + 1;
    expect(err.problems.map((p) => [p.path, p.line])).toEqual([
      ['job.j.group.g.task.t.kill_timeout', lineOf('KillTimeout')],
      ['job.j.group.g.task.t.Bogus', lineOf('Bogus')],
    ]);
  });

  it('loads API JSON durations as nanoseconds and warns about fields it ignores', async () => {
    const { allocs, warnings } = await parseJob(
      JSON.stringify({ Job: { ID: 'j', Priority: 50, TaskGroups: [{ Name: 'g', Count: 2, ShutdownDelay: 5e9, Tasks: [{ Name: 't', Driver: 'mock' }] }] } }),
      { format: 'json' },
    );
    expect(allocs.map((a) => [a.id, a.shutdownDelay])).toEqual([
      ['j-g-0', 5000],
      ['j-g-1', 5000],
    ]);
    expect(warnings.map((w) => w.path)).toEqual(['job.j.priority']);
  });

  it('reads the zeros of Nomad\'s canonical resources (Cores, MemoryMaxMB, CPU beside cores) as not asked', async () => {
    // What GET /v1/job/:id and /v1/jobs/parse?Canonicalize answer: registering it back must not be refused.
    const task = (name: string, Resources: object) => ({ Name: name, Driver: 'mock', Resources });
    const { allocs } = await parseJob(
      JSON.stringify({ Job: { ID: 'j', TaskGroups: [{ Name: 'g', Tasks: [
        task('mhz', { CPU: 100, Cores: 0, MemoryMB: 64, MemoryMaxMB: 0 }),
        task('cores', { CPU: 0, Cores: 2, MemoryMB: 300, MemoryMaxMB: 0 }),
      ] }] } }),
      { format: 'json' },
    );
    expect(allocs[0]!.tasks.map((t) => [t.name, t.resources])).toEqual([
      ['mhz', { cpu: 100, memoryMB: 64 }],
      ['cores', { cores: 2, memoryMB: 300 }],
    ]);
  });
});

describe('loadJob', () => {
  it('returns the warnings beside the allocations', async () => {
    const { allocs, warnings } = await loadJob(join(examples, 'batch.nomad'));
    expect(allocs).toHaveLength(1);
    expect(warnings).toEqual([]);
  });
});

describe('every problem has a place', () => {
  const where = async (text: string, format: 'hcl' | 'json' | 'yaml') => {
    const err = await specError(parseJobText(text, { format, file: `f.${format}` }));
    return err.problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`);
  };

  it.each([
    ['an empty HCL file', '', 'hcl', 'f.hcl:1:1: no job block found: write job "name" { ... }'],
    ['a comment-only HCL file', '# nothing\n', 'hcl', 'f.hcl:1:1: no job block found: write job "name" { ... }'],
    ['an empty JSON object', '{}', 'json', 'f.json:1:1: no job block found: write job "name" { ... }'],
    ['an empty YAML file', '', 'yaml', 'f.yaml:1:1: a job file holds one job block: job "name" { ... }'],
    ['a YAML list', '- a\n', 'yaml', 'f.yaml:1:1: a job file holds one job block: job "name" { ... }'],
  ] as const)('puts the problem of %s at 1:1', async (_, text, format, problem) => {
    expect(await where(text, format)).toEqual([problem]);
  });

  it('points a truncated file at its end', async () => {
    expect(await where('{"job": {"j": ', 'json')).toEqual(['f.json:1:15: JSON syntax error: unexpected end of file']);
    expect((await where('job "j" {\n  group "g" {\n', 'hcl'))[0]).toMatch(/^f\.hcl:2:\d+: /);
  });

  it('points the YAML alias bomb message at the first alias', async () => {
    const bomb = 'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n';
    expect(await where(bomb, 'yaml')).toEqual(['f.yaml:2:8: YAML error: Excessive alias count indicates a resource exhaustion attack']);
  });

  it('puts a second YAML document at its start', async () => {
    expect(await where('job: {}\n---\njob: {}\n', 'yaml')).toEqual(['f.yaml:2:1: YAML syntax error: the file holds more than one YAML document; a job file holds one']);
  });
});
