import { describe, expect, it } from 'vitest';
import { buildTaskEnv } from '../../src/env/task-env.ts';
import { localNodeInfo } from '../../src/env/node-info.ts';
import { RUNTIME_ENV_NAMES, RUNTIME_ENV_PREFIXES, envKeyProblem } from '../../src/jobspec/env-names.ts';
import { SpecError, parseJobText, validateAllocSpec, type AllocSpec } from '../../src/jobspec/index.ts';

const spec = (env: Record<string, string>): AllocSpec => ({
  id: 'j-g-0',
  job: 'j',
  group: 'g',
  type: 'batch',
  meta: { owner: 'me' },
  tasks: [{ name: 't', driver: 'mock', config: {}, env, meta: { 'tier.x': 'a' }, resources: { cpu: 100, memoryMB: 64, memoryMaxMB: 128 } }],
});

describe('env keys', () => {
  it.each(['PATH', 'my_key', '_X', 'discovery.type', 'A1', '.hidden'])('accepts %j, a name Nomad keeps as it is', (key) => {
    expect(envKeyProblem(key)).toBeUndefined();
  });

  it.each([
    ['K=V', '"K=V" is not a valid environment variable name: use letters, digits, "_" and "." and do not start with a digit; Nomad would rename it "K_V"'],
    ['my-key', '"my-key" is not a valid environment variable name: use letters, digits, "_" and "." and do not start with a digit; Nomad would rename it "my_key"'],
    ['1X', '"1X" is not a valid environment variable name: use letters, digits, "_" and "." and do not start with a digit; Nomad would rename it "_X"'],
    ['', '"" is not a valid environment variable name: use letters, digits, "_" and "." and do not start with a digit'],
    ['NOMAD_TASK_NAME', '"NOMAD_TASK_NAME" would override the variable of that name the runtime sets for every task; choose another name'],
    ['NOMAD_META_owner', '"NOMAD_META_owner" would override the variable of that name the runtime sets for every task; choose another name'],
  ])('refuses %j', (key, message) => {
    expect(envKeyProblem(key)).toBe(message);
  });

  it('leaves NOMAD_ names the runtime does not set to the job (NOMAD_ADDR for a task that talks to Nomad)', () => {
    expect(envKeyProblem('NOMAD_ADDR')).toBeUndefined();
  });

  it('knows every NOMAD_ variable the runtime sets for a task', () => {
    const alloc = spec({});
    const env = buildTaskEnv({ node: localNodeInfo(), alloc, task: alloc.tasks[0]!, allocDir: '/tmp/alloc', hostEnv: {} });
    const nomad = Object.keys(env.vars).filter((k) => k.startsWith('NOMAD_'));
    expect(nomad.length).toBeGreaterThan(10);
    const unknown = nomad.filter((k) => !RUNTIME_ENV_NAMES.has(k) && !RUNTIME_ENV_PREFIXES.some((p) => k.startsWith(p)));
    expect(unknown).toEqual([]);
  });

  it('refuses bad env keys in an AllocSpec, naming each path', () => {
    const err = (() => {
      try {
        validateAllocSpec(spec({ 'K=V': 'x', NOMAD_TASK_NAME: 'evil', OK: 'y' }));
      } catch (e) {
        return e as SpecError;
      }
    })();
    expect(err).toBeInstanceOf(SpecError);
    expect(err!.problems.map((p) => p.path)).toEqual(['tasks[0].env.K=V', 'tasks[0].env.NOMAD_TASK_NAME']);
  });

  it('refuses bad env keys in a job file, at the key', async () => {
    const text = 'job "j" {\n  group "g" {\n    task "t" {\n      driver = "mock"\n      env = {\n        "K=V" = "eq"\n        NOMAD_TASK_NAME = "evil"\n        GOOD = "1"\n      }\n    }\n  }\n}\n';
    const err = await parseJobText(text, { format: 'hcl', file: 'env.nomad' }).catch((e: unknown) => e as SpecError);
    expect(err).toBeInstanceOf(SpecError);
    expect((err as SpecError).message.split('\n')).toEqual([
      'env.nomad:6:9: job.j.group.g.task.t.env.K=V: "K=V" is not a valid environment variable name: use letters, digits, "_" and "." and do not start with a digit; Nomad would rename it "K_V"',
      'env.nomad:7:9: job.j.group.g.task.t.env.NOMAD_TASK_NAME: "NOMAD_TASK_NAME" would override the variable of that name the runtime sets for every task; choose another name',
    ]);
  });

  it('refuses bad env keys in YAML and JSON files too', async () => {
    const yaml = 'job:\n  j:\n    group:\n      g:\n        task:\n          t:\n            driver: mock\n            env:\n              my-key: x\n';
    await expect(parseJobText(yaml, { format: 'yaml', file: 'j.yaml' })).rejects.toThrow('j.yaml:9:15: job.j.group.g.task.t.env.my-key: "my-key" is not a valid');
    const json = JSON.stringify({ job: { j: { group: { g: { task: { t: { driver: 'mock', env: { NOMAD_ALLOC_DIR: '/' } } } } } } } });
    await expect(parseJobText(json, { format: 'json', file: 'j.json' })).rejects.toThrow('job.j.group.g.task.t.env.NOMAD_ALLOC_DIR: "NOMAD_ALLOC_DIR" would override');
  });
});
