/**
 * The HCL2 expression evaluator (src/jobspec/hcl-expr/) as pure rows: each construct of hclsyntax's spec and
 * each function of Nomad's jobspec2 table, with the value HCL gives and, for bad input, the message and the
 * offset it points at. Strings are written as hcl2json hands them over (`${...}` around an expression).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExprError, FUNCTION_NAMES, evaluateString, type EvalScope } from '../../src/jobspec/hcl-expr/index.ts';
import { formatNumber } from '../../src/jobspec/hcl-expr/values.ts';
import { tempDir } from '../temp-dirs.ts';

const VARS: Record<string, unknown> = {
  env: 'prod',
  name: 'web',
  host: 'db',
  port: 5432,
  n: 3,
  on: true,
  extra: ['-v', '-q'],
  ports: [80, 443],
  sizes: { prod: 512, dev: 128 },
  servers: [{ name: 'a', ip: '10.0.0.1' }, { name: 'b', ip: '10.0.0.2' }],
  nothing: null,
};
const LOCALS: Record<string, unknown> = { base_env: { A: '1' } };

let dir: string;
beforeAll(() => {
  dir = tempDir('allocrun-hclexpr-');
  mkdirSync(join(dir, 'conf'));
  writeFileSync(join(dir, 'conf', 'app.tpl'), 'port={{ env "NOMAD_PORT_http" }}\n');
  writeFileSync(join(dir, 'conf', 'b.yml'), 'a: 1\n');
});

const scope = (baseDir: string | undefined = dir): EvalScope => ({
  ...(baseDir !== undefined && { baseDir }),
  reference: (root, name, at) => {
    const table = root === 'var' ? VARS : LOCALS;
    if (!Object.hasOwn(table, name)) throw new ExprError(`there is no ${root === 'var' ? 'variable' : 'local'} named "${name}"`, at);
    return table[name];
  },
});
const ev = (text: string, baseDir?: string): unknown => evaluateString(text, scope(baseDir ?? dir));
const failure = (text: string, baseDir?: string): { message: string; at: number } => {
  try {
    ev(text, baseDir);
  } catch (err) {
    if (err instanceof ExprError) return { message: err.message, at: err.at };
    throw err;
  }
  throw new Error(`${text} did not fail`);
};

describe('expressions', () => {
  it.each<[string, unknown]>([
    ['${1}', 1],
    ['${1.5e3}', 1500],
    ['${"a\\tb\\u00e9"}', 'a\tbé'],
    ['${[1, "a", true, null]}', [1, 'a', true, null]],
    ['${{ a = 1, "b" = 2, (var.env) = 3 }}', { a: 1, b: 2, prod: 3 }],
    ['${var.sizes.prod}', 512],
    ['${var.sizes["dev"]}', 128],
    ['${var.ports[1]}', 443],
    ['${var.ports.0}', 80],
    ['${var.servers[*].ip}', ['10.0.0.1', '10.0.0.2']],
    ['${var.servers.*.name}', ['a', 'b']],
    ['${var.nothing[*]}', []],
    ['${var.n * 2 + 1}', 7],
    ['${(var.n + 1) * 2}', 8],
    ['${7 / 2} ${7 % 4} ${-var.n}', '3.5 3 -3'],
    ['${"3" + 1}', 4],
    ['${var.n > 2 && !false || false}', true],
    ['${1 == "1"}', false],
    ['${[1, 2] == [1, 2]}', true],
    ['${var.env == "prod" ? 3 : 1}', 3],
    ['${var.on ? 1 : "x"}', '1'],
    ['${[for p in var.ports : "${p}/tcp"]}', ['80/tcp', '443/tcp']],
    ['${[for i, p in var.ports : i + p if p > 100]}', [444]],
    ['${{ for k, v in var.sizes : upper(k) => v }}', { DEV: 128, PROD: 512 }],
    ['${{ for s in ["a", "b", "a"] : s => s... }}', { a: ['a', 'a'], b: ['b'] }],
    ['${max(var.ports...)}', 443],
    ['${upper(var.name)}-api', 'WEB-api'],
    ['${var.n}', 3],
    ['x${var.n}', 'x3'],
    ['${1e21} ${0.5}', '1000000000000000000000 0.5'],
    ['%{ for i, p in var.ports }${i}:${p};%{ endfor }', '0:80;1:443;'],
    ['%{if var.on}yes%{else}no%{endif}', 'yes'],
    ['${"a ${~ " b " ~} c"}', 'a b c'],
    ['${upper(<<EOT\nabc\nEOT\n)}', 'ABC\n'],
    ['${trimspace(<<-EOT\n    a\n      b\n    EOT\n)}', 'a\n  b'],
    ['$${var.n} %%{x}', '$${var.n} %%{x}'],
    ['${try(var.nope, "fallback")} ${can(var.ports[9])}', 'fallback false'],
    ['${convert(3, string)}', '3'],
  ])('%s is %j', (text, want) => {
    expect(ev(text)).toEqual(want);
  });

  it.each<[string, unknown]>([
    ['${attr.kernel.name}', '${attr.kernel.name}'],
    ['${ NOMAD_PORT_http }', '${ NOMAD_PORT_http }'],
    ['${env["HOME"]}/x-${var.n}', '${env["HOME"]}/x-3'],
    ['${meta.rack}', '${meta.rack}'],
    ['${format("%s/local", NOMAD_TASK_DIR)}', '${NOMAD_TASK_DIR}/local'],
    ['${[node.unique.name, device.model]}', ['${node.unique.name}', '${device.model}']],
  ])('runtime names stay as their text: %s is %j', (text, want) => {
    expect(ev(text)).toEqual(want);
  });

  it.each<[string, string, number]>([
    ['${var.ports[2]}', 'var.ports has 2 item(s): there is no index 2', 11],
    ['${var.sizes.test}', 'Unsupported attribute: var.sizes has no attribute "test"', 11],
    ['${var.sizes["test"]}', 'Invalid index: var.sizes has no key "test"', 11],
    ['${var.ports.name}', 'Unsupported attribute: var.ports is a list, which has no attribute "name"; for that attribute of each item write var.ports[*].name', 11],
    ['${var.name.first}', 'Unsupported attribute: var.name is a string, which has no attributes (asked for "first")', 10],
    ['${var.nothing.x}', 'Attempt to get attribute from null value: var.nothing is null, so it has no attribute "x"', 13],
    ['${var.nope}', 'there is no variable named "nope"', 2],
    ['${var.name + 1}', 'Invalid operand: the left operand of + must be a number, got "web"', 2],
    ['${!var.n}', 'Invalid operand: the operand of ! must be true or false, got 3', 3],
    ['${1 / 0}', 'Division by zero: the right operand of / is 0', 6],
    ['${var.name ? 1 : 2}', 'Incorrect condition type: the condition must be true or false, got "web"', 2],
    ['${var.nothing ? 1 : 2}', 'Null condition: the condition of a conditional (c ? a : b) is null', 2],
    ['${[for x in var.n : x]}', 'Iteration over non-iterable value: the collection of this "for" expression (var.n) is 3; it needs a list, set, map or object', 12],
    ['${[for x in var.nothing : x]}', 'Iteration over null value: the collection of this "for" expression (var.nothing) is null', 12],
    ['${{for s in ["a", "a"] : s => 1}}', 'Duplicate object key: two items produced the key "a" in this "for" expression; to group them, put ... after the value expression', 25],
    ['${[for x in var.ports : x if x]}', 'Invalid "for" condition: the condition after "if" must be true or false, got 80', 29],
    ['x-${var.ports}', 'Invalid template interpolation value: var.ports is a list, which cannot be part of a string', 2],
    ['x-${var.nothing}', 'Invalid template interpolation value: var.nothing is null, which cannot be part of a string', 2],
    ['%{if var.n}a%{endif}', 'Invalid template directive: the condition of %{if} must be true or false, got 3', 5],
    ['%{if true}a', 'Unterminated template directive: %{if} has no %{endif}', 0],
    ['${NOMAD_ALLOC_INDEX * 2}', 'Invalid operand: the left operand of * must be a number, got "${NOMAD_ALLOC_INDEX}" (a runtime value, known only when the task runs)', 2],
    ['${attr.cpu[var.n]}', 'Invalid index: attr.cpu is a runtime value (${attr.cpu}), known only when the task runs; it cannot be indexed here', 10],
    ['${upper(var.extra...)}', 'Too many function arguments: upper() takes only 1 argument(s), got 2', 8],
    ['${(1}', 'Missing ")": expected the ")" closing a parenthesis, found "}"', 4],
  ])('%s fails: %s', (text, message, at) => {
    expect(failure(text)).toEqual({ message, at });
  });
});

describe("Nomad's function table", () => {
  it('has exactly the names jobspec2/functions.go registers', () => {
    expect(FUNCTION_NAMES).toEqual(
      ('abs abspath base64decode base64encode basename bcrypt can ceil chomp chunklist cidrhost cidrnetmask cidrsubnet cidrsubnets coalesce coalescelist compact concat contains convert csvdecode dirname distinct element file filebase64 fileexists fileset flatten floor format formatdate formatlist indent index join jsondecode jsonencode keys length log lookup lower max md5 merge min parseint pathexpand pow range regex_replace replace reverse rsadecrypt setintersection setproduct setunion sha1 sha256 sha512 signum slice sort split strlen strrev substr timeadd title trim trimprefix trimspace trimsuffix try upper urlencode uuidv4 uuidv5 values yamldecode yamlencode zipmap').split(' '),
    );
  });

  it.each<[string, unknown]>([
    ['${abs(-2)} ${ceil(1.2)} ${floor(1.8)} ${signum(-5)} ${pow(2, 10)} ${log(8, 2)}', '2 2 1 -1 1024 3'],
    ['${max(1, "7", 3)} ${min(4, 2)} ${parseint("ff", 16)} ${parseint("-101", 2)}', '7 2 255 -5'],
    ['${upper("é")} ${lower("AB")} ${title("hello world")} ${strlen("héllo")} ${strrev("abc")} ${reverse("ab")}', 'É ab Hello World 5 cba ba'],
    ['${title("don\'t-stop me_now")}', "Don'T-Stop Me_now"],
    ['${substr("hello", 1, 3)} ${substr("hello", -3, -1)} ${trim("?!hi?", "?!")} ${trimprefix("ab", "a")} ${trimsuffix("ab", "b")}', 'ell llo hi b a'],
    ['${chomp("x\\n\\n")}|${trimspace("  x ")}|${indent(2, "a\\nb")}', 'x|x|a\n  b'],
    ['${format("%s:%d %05.1f %q %t %v %#v %x %-3s|", var.host, var.port, 3.14159, "q", true, var.n, "s", 255, "a")}', 'db:5432 003.1 "q" true 3 "s" ff a  |'],
    ['${format("%[2]s-%[1]s", "a", "b")} ${format("100%%")}', 'b-a 100%'],
    ['${join(",", formatlist("%s=%d", ["a", "b"], 1))}', 'a=1,b=1'],
    ['${join("-", ["a"], ["b", "c"])} ${replace("a-b", "-", "+")} ${replace("a1b22", "/\\\\d+/", "#")} ${regex_replace("ab", "(a)(b)", "$2$1")}', 'a-b-c a+b a#b# ba'],
    ['${split(",", "a,b")}', ['a', 'b']],
    ['${concat([1], [2, 3])}', [1, 2, 3]],
    ['${contains(var.extra, "-q")} ${length(var.sizes)} ${length("ab")} ${index(var.ports, 443)} ${element(var.ports, 3)}', 'true 2 2 1 443'],
    ['${coalesce(var.nothing, "", "x")} ${coalesce(1, "a")}', 'x 1'],
    ['${coalescelist([], [1])}', [1]],
    ['${compact(["a", "", "b"])}', ['a', 'b']],
    ['${distinct([1, 2, 1])}', [1, 2]],
    ['${flatten([[1, [2]], 3])}', [1, 2, 3]],
    ['${keys(var.sizes)}', ['dev', 'prod']],
    ['${values(var.sizes)}', [128, 512]],
    ['${lookup(var.sizes, "test", 256)} ${lookup(var.sizes, "dev")}', '256 128'],
    ['${merge(local.base_env, { X = "1" }, null)}', { A: '1', X: '1' }],
    ['${range(3)}', [0, 1, 2]],
    ['${range(10, 0, -4)}', [10, 6, 2]],
    ['${slice(var.ports, 0, 1)}', [80]],
    ['${sort(["b", "a", "c"])}', ['a', 'b', 'c']],
    ['${zipmap(["a", "b"], [1, 2])}', { a: 1, b: 2 }],
    ['${chunklist([1, 2, 3], 2)}', [[1, 2], [3]]],
    ['${setunion([1], [1, 2])}', [1, 2]],
    ['${setintersection([1, 2], [2, 3])}', [2]],
    ['${setproduct(["a"], [1, 2])}', [['a', 1], ['a', 2]]],
    ['${jsonencode({ b = [1, true], a = "<x>" })}', '{"a":"\\u003cx\\u003e","b":[1,true]}'],
    ['${jsondecode("{\\"b\\": [1.5, null]}")}', { b: [1.5, null] }],
    ['${yamlencode({ a = [1] })}', 'a:\n  - 1\n'],
    ['${yamldecode("a: [x]")}', { a: ['x'] }],
    ['${base64encode("hi")} ${base64decode("aGk=")} ${urlencode("a b&c/é")}', 'aGk= hi a+b%26c%2F%C3%A9'],
    ['${csvdecode("a,b\\n1,\\"x,y\\"\\n")}', [{ a: '1', b: 'x,y' }]],
    ['${md5("a")} ${sha1("a")}', '0cc175b9c0f1b6a831c399e269772661 86f7e437faa5a7fce15d1ddcb9eaeaea377667b8'],
    ['${substr(sha256("a"), 0, 8)} ${substr(sha512("a"), 0, 8)}', 'ca978112 1f40fc92'],
    ['${uuidv5("dns", "example.com")}', 'cfbff0d1-9375-5685-968c-48ce8b15ae17'],
    ['${formatdate("DD MMM YYYY hh:mm ZZZ EEE", "2024-03-05T07:08:09Z")} ${formatdate("H:mmaa Z", "2024-03-05T17:08:09+02:00")}', '05 Mar 2024 07:08 UTC Tue 5:08pm +02:00'],
    ['${timeadd("2024-03-05T23:30:00Z", "1h")} ${timeadd("2024-03-05T00:00:00+01:00", "-90m")}', '2024-03-06T00:30:00Z 2024-03-04T22:30:00+01:00'],
    ['${cidrhost("10.0.0.0/24", 5)} ${cidrnetmask("172.16.0.0/12")} ${cidrsubnet("10.0.0.0/16", 8, 2)} ${cidrsubnet("fd00::/56", 8, 1)}', '10.0.0.5 255.240.0.0 10.0.2.0/24 fd00:0:0:1::/64'],
    ['${cidrsubnets("10.0.0.0/16", 8, 4)}', ['10.0.0.0/24', '10.0.16.0/20']],
    ['${file("conf/app.tpl")}', 'port={{ env "NOMAD_PORT_http" }}\n'],
    ['${fileexists("conf/app.tpl")} ${fileexists("conf/none")}', 'true false'],
    ['${fileset(".", "conf/*.{tpl,yml}")}', ['conf/app.tpl', 'conf/b.yml']],
    ['${fileset("conf", "**")}', ['app.tpl', 'b.yml']],
    ['${basename("a/b.txt")} ${dirname("a/b.txt")} ${filebase64("conf/b.yml")}', 'b.txt a YTogMQo='],
  ])('%s is %j', (text, want) => {
    expect(ev(text)).toEqual(want);
  });

  it('uuidv4() is a new random UUID each time, as in Nomad', () => {
    const [a, b] = [ev('${uuidv4()}'), ev('${uuidv4()}')];
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
  });

  it.each<[string, string, number]>([
    ['${nope(1)}', 'Call to unknown function: there is no function named "nope" in Nomad\'s job files', 2],
    ['${timestamp()}', 'Call to unknown function: there is no function named "timestamp" in Nomad\'s job files', 2],
    ['${upper()}', 'Not enough function arguments: upper() takes 1 argument(s); missing "str"', 2],
    ['${upper(var.extra)}', 'Invalid function argument: upper(): invalid value for "str" parameter: string required, got a list of 2 item(s)', 8],
    ['${upper(var.nothing)}', 'Invalid function argument: upper(): invalid value for "str" parameter: the value must not be null', 8],
    ['${lookup(var.sizes, "x")}', 'Error in function call: call to lookup() failed: the key "x" is not in the map, and no default was given', 2],
    ['${element([], 0)}', 'Error in function call: call to element() failed: cannot use element function with an empty list', 2],
    ['${index(var.ports, 1)}', 'Error in function call: call to index() failed: item 1 not found', 2],
    ['${format("%d", "x")}', 'Error in function call: call to format() failed: unsupported value for "%d" at offset 0: number required, got string', 2],
    ['${format("%s %s", "a")}', 'Error in function call: call to format() failed: not enough arguments for %s at offset 3', 2],
    ['${format("%s", "a", "b")}', 'Error in function call: call to format() failed: too many arguments; no verbs left to use argument 2', 2],
    ['${jsondecode("{")}', 'Error in function call: call to jsondecode() failed: the text is not valid JSON', 2],
    ['${zipmap(["a"], [])}', 'Error in function call: call to zipmap() failed: number of keys (1) does not match number of values (0)', 2],
    ['${range(0, 2000)}', 'Error in function call: call to range() failed: more than 1024 values were generated', 2],
    ['${parseint("12", 1)}', 'Error in function call: call to parseint() failed: base must be a whole number between 2 and 62 inclusive, got 1', 2],
    ['${cidrhost("10.0.0.0/30", 9)}', 'Error in function call: call to cidrhost() failed: prefix of 30 bits has no host number 9', 2],
    ['${formatdate("YYYY", "yesterday")}', 'Error in function call: call to formatdate() failed: not a valid RFC 3339 timestamp: "yesterday"', 2],
    ['${timeadd("2024-03-05T00:00:00Z", "1 day")}', 'Error in function call: call to timeadd() failed: invalid duration "1 day"', 2],
    ['${file("conf/none.txt")}', 'Error in function call: call to file() failed: no file exists at "conf/none.txt"', 2],
    ['${bcrypt("x")}', 'Error in function call: call to bcrypt() failed: allocrun does not implement bcrypt()', 2],
    ['${convert("x", number)}', 'Invalid value for "value" parameter: cannot convert to number', 10],
    ['${try(var.nope, var.nada)}', 'Error in function call: call to try() failed: no expression succeeded: there is no variable named "nope"; there is no variable named "nada"', 2],
  ])('%s fails: %s', (text, message, at) => {
    const got = failure(text);
    expect(got.message.startsWith(message), got.message).toBe(true);
    expect(got.at).toBe(at);
  });

  it('refuses file functions for a job given as text (no directory), as Nomad does for /v1/jobs/parse', () => {
    const noDir = (text: string) => {
      try {
        evaluateString(text, { reference: () => null });
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    };
    for (const f of ['file("a")', 'fileexists("a")', 'fileset(".", "*")', 'filebase64("a")', 'abspath("a")']) {
      expect(noDir(`\${${f}}`)).toMatch(/^Error in function call: call to \w+\(\) failed: filesystem functions are disabled: this job was given as text, not read from a file/);
    }
  });
});

describe('numbers as cty writes them', () => {
  it.each([
    [3, '3'],
    [0.5, '0.5'],
    [1e21, '1000000000000000000000'],
    [-2.5e22, '-25000000000000000000000'],
    [1.25e-8, '0.0000000125'],
  ])('%d is written %s', (n, want) => {
    expect(formatNumber(n)).toBe(want);
  });
});
