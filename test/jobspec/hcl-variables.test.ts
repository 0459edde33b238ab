/**
 * HCL2 input variables and locals in job files, as Nomad's jobspec2 evaluates them: declarations, where values
 * come from and in which order, type conversion, validations, locals, and the expressions allocrun refuses
 * (rows; each parse is milliseconds once the HCL worker is up).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJob, stopHclWorker, warmHclWorker, type LoadedJob, type VariableInputs } from '../../src/jobspec/index.ts';
import { convertToType, parseTypeConstraint, typeName } from '../../src/jobspec/hcl-type-constraint.ts';
import { mentionsVariables, templateParts } from '../../src/jobspec/hcl-references.ts';
import { specError } from './spec-error-of.ts';

beforeAll(() => warmHclWorker(), 30_000);
afterAll(() => stopHclWorker());

/** A job file: `head` (declarations) before a job whose group has `group` lines and whose task has `task` lines. */
const jobFile = (head: string, group = '', task = '') => `${head}
job "web" {
  group "api" {
    ${group}
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["1"]
      }
      ${task}
    }
  }
}
`;
const load = (text: string, variables: VariableInputs = {}): Promise<LoadedJob> => parseJob(text, { format: 'hcl', file: 'web.nomad', variables });
const task = (l: LoadedJob) => l.job.body.group['api']!.task['app']!;
const problems = async (text: string, variables: VariableInputs = {}) => (await specError(load(text, variables))).problems;
const lines = async (text: string, variables: VariableInputs = {}) => (await problems(text, variables)).map((p) => `${p.file}:${p.line}:${p.column}: ${p.path ? `${p.path}: ` : ''}${p.message}`);

const declarations = `variable "image" {
  type        = string
  default     = "v1"
  description = "the release"
}

variable "instances" {
  type    = number
  default = 2
}

variable "tags" {
  type    = list(string)
  default = ["blue"]
}

locals {
  name = "api-\${var.image}-\${local.suffix}"
  suffix = var.tags[0]
}
`;
const used = jobFile(declarations, 'count = var.instances', 'env {\n        NAME  = local.name\n        IMAGE = "${var.image}"\n        PORT  = "${NOMAD_PORT_http}"\n        LIT   = "$${var.image}"\n        MIXED = "${NOMAD_ALLOC_DIR}/${var.image}/${attr.kernel.name}"\n      }\n      meta {\n        tag = var.tags[0]\n      }');

describe('variables and locals in a job file', () => {
  it('a field that is only a reference takes the value with its type; templates interpolate; runtime interpolation and $${ stay', async () => {
    const l = await load(used);
    expect(l.allocs).toHaveLength(2);
    expect(task(l).env).toEqual({ NAME: 'api-v1-blue', IMAGE: 'v1', PORT: '${NOMAD_PORT_http}', LIT: '${var.image}', MIXED: '${NOMAD_ALLOC_DIR}/v1/${attr.kernel.name}' });
    expect(task(l).meta).toEqual({ tag: 'blue' });
  });

  it.each<[string, VariableInputs, number, string, string]>([
    ['defaults', {}, 2, 'v1', 'blue'],
    ['-var, converted to the declared type (a number, a list)', { args: ['instances=3', 'image=v2', 'tags=["green", "red"]'] }, 3, 'v2', 'green'],
    ['a later -var wins over an earlier one', { args: ['instances=3', 'instances=1'] }, 1, 'v1', 'blue'],
    ['NOMAD_VAR_* from the environment', { env: { NOMAD_VAR_instances: '4', NOMAD_VAR_unknown: 'x', HOME: '/root' } }, 4, 'v1', 'blue'],
    ['a var file wins over the environment', { env: { NOMAD_VAR_instances: '4' }, files: [{ file: 'prod.vars.hcl', text: 'instances = 5\nimage = "v5"\n' }] }, 5, 'v5', 'blue'],
    ['a later var file wins over an earlier one', { files: [{ file: 'a.hcl', text: 'instances = 5\n' }, { file: 'b.json', text: '{ "instances": 6, "tags": ["x"] }' }] }, 6, 'v1', 'x'],
    ['-var wins over var files and the environment', { env: { NOMAD_VAR_image: 'env' }, files: [{ file: 'a.hcl', text: 'image = "file"\n' }], args: ['image=flag'] }, 2, 'flag', 'blue'],
    ['a list from the environment is read as HCL', { env: { NOMAD_VAR_tags: '["env"]' } }, 2, 'v1', 'env'],
  ])('%s', async (_, inputs, count, image, tag) => {
    const l = await load(used, inputs);
    expect(l.allocs).toHaveLength(count);
    expect(task(l).env!['IMAGE']).toBe(image);
    expect(task(l).meta).toEqual({ tag });
  });

  it('a list variable is a whole list field (datacenters = var.dcs)', async () => {
    const text = jobFile('variable "dcs" {\n  type    = list(string)\n  default = ["dc1"]\n}\n').replace('job "web" {', 'job "web" {\n  datacenters = var.dcs');
    expect((await load(text)).job.body.datacenters).toEqual(['dc1']);
    expect((await load(text, { args: ['dcs=["dc1", "dc2"]'] })).job.body.datacenters).toEqual(['dc1', 'dc2']);
  });

  it('variable and locals blocks are no longer unknown top-level keys, and a bare `variables` block declares too', async () => {
    const l = await load(jobFile('variables {\n  n = 3\n}\n', 'count = var.n'));
    expect(l.allocs).toHaveLength(3);
  });

  it('an untyped variable takes its default\'s type, so -var n=4 is the number 4', async () => {
    const head = 'variable "n" {\n  default = 1\n}\nvariable "on" {\n  default = false\n}\n';
    const l = await load(jobFile(head, 'count = var.n', 'meta {\n        on = var.on\n      }'), { args: ['n=4', 'on=true'] });
    expect(l.allocs).toHaveLength(4);
    expect(task(l).meta).toEqual({ on: 'true' });
    expect((await problems(jobFile(head, 'count = var.n'), { args: ['n=four'] })).map((p) => p.message)).toEqual([expect.stringContaining('the value for n is not compatible with the variable\'s type constraint number')]);
  });

  it('a bool, a map and an untyped variable (a string from -var) convert as HCL converts them', async () => {
    const head = 'variable "on" {\n  type = bool\n}\nvariable "m" {\n  type = map(string)\n}\nvariable "free" {}\n';
    const l = await load(jobFile(head, '', 'meta {\n        on   = "${var.on}"\n        m    = var.m.k\n        free = var.free\n      }'), { args: ['on=true', 'm={ k = 1 }', 'free=[1]'] });
    expect(task(l).meta).toEqual({ on: 'true', m: '1', free: '[1]' });
  });
});

describe('problems, with file, line and column', () => {
  it.each<[string, string, VariableInputs, string[]]>([
    ['an unset variable names itself at its declaration', jobFile('variable "image" {\n  type = string\n}\n'), {}, ['web.nomad:1:1: variable.image: Unset variable "image": a used variable must be set or have a default value']],
    ['an undeclared -var', used, { args: ['imgae=v2'] }, ['web.nomad:1:1: Undefined -var variable: a "imgae" variable was passed in the command line but was not found in known variables']],
    ['a -var without =', used, { args: ['image'] }, ['-var "image": expected -var NAME=VALUE']],
    ['a -var that does not convert', used, { args: ['instances=many'] }, ['<value for var.instances from arguments>:1:1: Invalid value for variable: the value for instances is not compatible with the variable\'s type constraint number: a number required, got "many"']],
    ['a list -var that is not HCL', used, { args: ['tags=[a'] }, ['<value for var.tags from arguments>:1:1: Invalid value "[a"']],
    ['an undeclared name in a var file, at its line', used, { files: [{ file: 'prod.hcl', text: 'image = "v2"\nimgae = "v3"\n' }] }, ['prod.hcl:2:1: imgae: Undefined variable: a "imgae" variable was set but was not found in known variables']],
    ['a declaration in a var file', used, { files: [{ file: 'prod.hcl', text: 'variable "image" {\n  default = "x"\n}\n' }] }, ['prod.hcl:1:1: Variable declaration in a .var file']],
    ['an expression in a var file', used, { files: [{ file: 'prod.hcl', text: 'image = "${var.other}"\n' }] }, ['prod.hcl:1:1: image: a var file holds literal values, not expressions: ${var.other}']],
    ['a default of the wrong type', jobFile('variable "n" {\n  type    = number\n  default = "x"\n}\n'), {}, ['web.nomad:3:3: variable.n.default: Invalid default value for variable: this default value is not compatible with the variable\'s type constraint number: a number required, got "x"']],
    ['an unknown type', jobFile('variable "n" {\n  type = integer\n}\n'), {}, ['web.nomad:2:3: variable.n.type: Invalid type of variable "n": unknown type "integer"']],
    ['a reference to an undeclared variable', jobFile('', 'count = var.nope'), {}, ['web.nomad:4:13: job.web.group.api.count: there is no variable named "nope"']],
    ['a reference to an undefined local', jobFile('', '', 'env {\n        A = "x-${local.nope}"\n      }'), {}, ['web.nomad:12:18: job.web.group.api.task.app.env.A: there is no local named "nope"']],
    ['locals in a cycle, named', jobFile('locals {\n  a = local.b\n  b = "${local.a}-x"\n}\n'), {}, ['web.nomad:2:3: locals.a: locals refer to each other in a cycle: local.a → local.b → local.a']],
    ['a function given the wrong type', jobFile('variable "l" {\n  default = ["a"]\n}\n', '', 'meta {\n        up = upper(var.l)\n      }'), {}, ['web.nomad:15:20: job.web.group.api.task.app.meta.up: Invalid function argument: upper(): invalid value for "str" parameter: string required, got a list of 1 item(s)']],
    ['arithmetic on a string inside a template', jobFile('variable "s" {\n  default = "a"\n}\n', '', 'meta {\n        n = "x${var.s + 1}"\n      }'), {}, ['web.nomad:15:17: job.web.group.api.task.app.meta.n: Invalid operand: the left operand of + must be a number, got "a"']],
    ['a conditional on a string', jobFile('variable "n" {\n  default = "yes"\n}\n', 'count = var.n ? 2 : 1'), {}, ['web.nomad:7:13: job.web.group.api.count: Incorrect condition type: the condition must be true or false, got "yes"']],
    ['a for-expression over a number, in a local', jobFile('variable "l" {\n  default = 3\n}\nlocals {\n  up = [for s in var.l : s]\n}\n'), {}, ['web.nomad:5:18: locals.up: Iteration over non-iterable value: the collection of this "for" expression (var.l) is 3']],
    ['an unknown function, named', jobFile('', '', 'meta {\n        n = "${uppercase("x")}"\n      }'), {}, ['web.nomad:12:16: job.web.group.api.task.app.meta.n: Call to unknown function: there is no function named "uppercase"']],
    ['a runtime value in arithmetic', jobFile('', '', 'meta {\n        n = NOMAD_ALLOC_INDEX + 1\n      }'), {}, ['web.nomad:12:13: job.web.group.api.task.app.meta.n: Invalid operand: the left operand of + must be a number, got "${NOMAD_ALLOC_INDEX}" (a runtime value, known only when the task runs)']],
    ['file() on a job given as text', jobFile('', '', 'meta {\n        n = file("x.txt")\n      }'), {}, ['web.nomad:12:13: job.web.group.api.task.app.meta.n: Error in function call: call to file() failed: filesystem functions are disabled: this job was given as text']],
    ['a list interpolated into a string', jobFile('variable "l" {\n  default = ["a"]\n}\n', '', 'meta {\n        l = "x-${var.l}"\n      }'), {}, ['job.web.group.api.task.app.meta.l: Invalid template interpolation value: var.l is a list, which cannot be part of a string']],
    ['an index past the end', jobFile('variable "l" {\n  default = ["a"]\n}\n', '', 'meta {\n        l = var.l[3]\n      }'), {}, ['job.web.group.api.task.app.meta.l: var.l has 1 item(s): there is no index 3']],
    ['a default that refers to another variable', jobFile('variable "a" {\n  default = "x"\n}\nvariable "b" {\n  default = "${var.a}"\n}\n'), {}, ['web.nomad:5:14: variable.b.default: a variable\'s default must be a literal value']],
    ['a default that calls a function', jobFile('variable "a" {\n  default = upper("x")\n}\n'), {}, ['web.nomad:2:13: variable.a.default: a variable\'s default must be a literal value; functions, operators and references are not evaluated there (${upper("x")})']],
    ['a duplicate variable', jobFile('variable "a" {\n  default = 1\n}\nvariable "a" {\n  default = 2\n}\n'), {}, ['variable.a[1]: Duplicate variable: variable "a" is declared more than once']],
    ['an unknown argument in a variable block', jobFile('variable "a" {\n  default = 1\n  defualt = 2\n}\n'), {}, ['web.nomad:3:3: variable.a.defualt: Unsupported argument "defualt" in variable "a"']],
  ])('%s', async (_, text, inputs, want) => {
    const got = await lines(text, inputs);
    expect(got).toHaveLength(want.length);
    want.forEach((w, i) => expect(got[i]).toContain(w));
  });

  it('-var and -var-file on a JSON or YAML job file are refused, not ignored', async () => {
    const json = JSON.stringify({ job: { web: { group: { api: { task: { app: { driver: 'raw_exec', config: { command: '/bin/true' } } } } } } } });
    const err = await specError(parseJob(json, { format: 'json', variables: { args: ['a=b'] } }));
    expect(err.message).toContain('-var and -var-file give values to the input variables of HCL job files; this is a JSON job file');
  });
});

describe('expressions, evaluated as Nomad evaluates them', () => {
  const head = 'variable "env" {\n  default = "prod"\n}\nvariable "extra" {\n  default = ["-v"]\n}\nvariable "ports" {\n  default = [80, 443]\n}\nlocals {\n  base = { A = "1" }\n  sizes = { prod = 512 }\n}\n';
  it.each<[string, string, string, unknown]>([
    ['a conditional gives count a number', 'count = var.env == "prod" ? 3 : 1', 'count', 3],
    ['functions in a template', 'meta {\n        n = "${upper(var.env)}-api"\n      }', 'meta', { n: 'PROD-api' }],
    ['concat() builds a list (jsonencode shows it)', 'meta {\n        args = jsonencode(concat(["-c"], var.extra))\n      }', 'meta', { args: '["-c","-v"]' }],
    ['a for-expression with a template', 'meta {\n        p = join(",", [for p in var.ports : "${p}/tcp"])\n      }', 'meta', { p: '80/tcp,443/tcp' }],
    ['merge() of a local and an object', 'env = merge(local.base, { X = "1" })', 'env', { A: '1', X: '1' }],
    ['lookup() with a default, and arithmetic', 'meta {\n        mem = lookup(local.sizes, var.env, 256) * 2\n      }', 'meta', { mem: '1024' }],
    ['a %{if} directive in a heredoc', 'meta {\n        t = <<EOT\n%{ if var.env == "prod" ~}\nlive\n%{ else ~}\ntest\n%{ endif ~}\nEOT\n      }', 'meta', { t: 'live\n' }],
    ['runtime names stay for the client, beside evaluated parts', 'meta {\n        a = "${attr.kernel.name}-${var.env}"\n        b = meta.rack\n        c = "${NOMAD_ALLOC_DIR}/${lower("X")}"\n      }', 'meta', { a: '${attr.kernel.name}-prod', b: '${meta.rack}', c: '${NOMAD_ALLOC_DIR}/x' }],
    ['an escaped $${ stays literal', 'meta {\n        a = "$${var.env}-${var.env}"\n      }', 'meta', { a: '${var.env}-prod' }],
  ])('%s', async (_, line, field, want) => {
    const l = await load(jobFile(head, field === 'count' ? line : '', field === 'count' ? '' : line));
    const got = field === 'count' ? l.job.body.group['api']!.count : (task(l) as unknown as Record<string, unknown>)[field];
    expect(got).toEqual(want);
  });
});

describe('dynamic blocks, expanded as jobspec2 expands them', () => {
  const files = 'variable "files" {\n  default = { a = "1", b = "2" }\n}\n';
  const dynamicTemplates = (forEach: string) =>
    jobFile(files, 'network {\n      dynamic "port" {\n        for_each = ["http", "admin"]\n        labels   = [port.value]\n        content {\n          to = 8080 + port.key\n        }\n      }\n    }', `dynamic "template" {\n        for_each = ${forEach}\n        iterator = f\n        content {\n          data        = "v=\${f.value}"\n          destination = "local/\${f.key}.txt"\n        }\n      }\n      template {\n        data        = "x"\n        destination = "local/x"\n      }`);

  it('one block per element, beside the static ones; labels from `labels`', async () => {
    const l = await load(dynamicTemplates('var.files'));
    expect(task(l).template).toEqual([
      { destination: 'local/x', data: 'x' },
      { destination: 'local/a.txt', data: 'v=1' },
      { destination: 'local/b.txt', data: 'v=2' },
    ]);
    expect(l.job.body.group['api']!.network).toMatchObject({ port: { http: { to: 8080 }, admin: { to: 8081 } } });
  });

  it('refuses a for_each that is not a collection, at its line', async () => {
    expect(await lines(dynamicTemplates('"x"'))).toEqual(['web.nomad:23:9: job.web.group.api.task.app.dynamic.template.for_each: Invalid dynamic for_each value: for_each needs a list, set, map or object, got "x"']);
  });
});

describe('validation blocks', () => {
  const validated = (condition: string, message = 'Must be between 1 and 9.') =>
    jobFile(`variable "n" {\n  type    = number\n  default = 2\n  validation {\n    condition     = ${condition}\n    error_message = "${message}"\n  }\n}\n`, 'count = var.n');

  it.each([
    ['var.n > 0', ['n=3'], true],
    ['var.n < 10', ['n=10'], false],
    ['var.n != 4', ['n=4'], false],
    ['var.n == 2', [], true],
    ['5 >= var.n', ['n=6'], false],
    ['var.n > 0 && var.n < 10', ['n=10'], false],
    ['contains([1, 2, 3], var.n)', ['n=4'], false],
    ['var.n % 2 == 0', [], true],
  ])('%s with %j: passes = %s', async (condition, args, passes) => {
    const p = load(validated(condition), { args });
    if (passes) await expect(p).resolves.toBeDefined();
    else expect((await specError(p)).problems.map((x) => x.message)).toEqual([expect.stringMatching(/^Invalid value for variable "n" \(from -var n=\d+\): Must be between 1 and 9\. \(checked by the validation rule at line 4 of web\.nomad\)$/)]);
  });

  it.each([
    ['a condition that fails names why', validated('length(var.n) > 0'), 'Invalid variable validation result: Error in function call: call to length() failed: length() takes a string, list, map or object, got 2'],
    ['a condition that is not true or false', validated('var.n + 1'), 'Invalid variable validation result: the condition must be true or false'],
    ['a condition about another variable', validated('var.m > 0'), 'Invalid variable validation condition: the condition for variable "n" must refer to var.n, and only to it'],
    ['an error message that is not a sentence', validated('var.n > 0', 'too small'), 'Invalid validation error message'],
  ])('%s', async (_, text, want) => {
    expect((await problems(text)).map((p) => p.message).join('\n')).toContain(want);
  });
});

describe('the pieces (pure rows)', () => {
  it.each([
    ['string', 'string'],
    ['${list(number)}', 'list(number)'],
    ['map(list(string))', 'map(list(string))'],
    ['object({ a = string, b = list(number) })', 'object({a = string, b = list(number)})'],
    ['tuple([string, bool])', 'tuple([string, bool])'],
  ])('type %s reads as %s', (text, name) => {
    expect(typeName(parseTypeConstraint(text))).toBe(name);
  });

  it.each<[string, unknown, unknown]>([
    ['number', '42', 42],
    ['number', '-1.5', -1.5],
    ['string', 3, '3'],
    ['string', true, 'true'],
    ['bool', 'false', false],
    ['list(number)', ['1', 2], [1, 2]],
    ['set(string)', ['a', 'a', 'b'], ['a', 'b']],
    ['map(number)', { a: '1' }, { a: 1 }],
    ['object({ a = number })', { a: '1', extra: 2 }, { a: 1 }],
    ['any', { a: [1] }, { a: [1] }],
  ])('%s converts %j to %j', (type, value, want) => {
    expect(convertToType(value, parseTypeConstraint(type))).toEqual({ ok: true, value: want });
  });

  it.each<[string, unknown, string]>([
    ['number', 'x', 'a number required, got "x"'],
    ['bool', 'yes', 'a bool required, got "yes"'],
    ['string', ['a'], 'a string required, got a list'],
    ['list(number)', [1, 'b'], '[1]: a number required, got "b"'],
    ['object({ a = number })', {}, 'attribute "a" is required'],
  ])('%s refuses %j', (type, value, error) => {
    expect(convertToType(value, parseTypeConstraint(type))).toEqual({ ok: false, error });
  });

  it.each([
    ['upper(var.x)', true],
    ['var.n + 1', true],
    ['local.z', true],
    ['attr.kernel.name', false],
    ['meta.local', false],
    ['NOMAD_VAR_x', false],
    ['env["var.x"]', false],
  ])('%s mentions a variable: %s', (expr, want) => {
    expect(mentionsVariables(expr)).toBe(want);
  });

  it('splits templates, keeping escapes and nested braces', () => {
    expect(templateParts('a-${var.x}-$${y}-${env["}"]}%{ if z }')).toEqual([
      { kind: 'literal', text: 'a-' },
      { kind: 'interpolation', expr: 'var.x', text: '${var.x}' },
      { kind: 'literal', text: '-$${y}-' },
      { kind: 'interpolation', expr: 'env["}"]', text: '${env["}"]}' },
      { kind: 'directive', expr: 'if z', text: '%{ if z }' },
    ]);
  });

});
