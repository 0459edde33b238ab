/**
 * consul-template's functions as Nomad's template runner offers them: env, services and variables from the
 * agent's registries (shaped as consul-template's Go types), what a render records as read and missing, and
 * validation refusing the functions that need Consul or Vault.
 */
import { describe, expect, it } from 'vitest';
import { consulTemplateFuncs, newTracker, type TemplateScope } from '../../src/template/consul-template-funcs.ts';
import { Template } from '../../src/template/template.ts';
import { templateProblems } from '../../src/template/validate-template.ts';

const NOW = new Date(Date.UTC(2026, 10, 26, 7, 5, 9, 120));
const service = (id: string, name: string, port: number, tags: string[] = []) => ({
  ID: id, ServiceName: name, NodeID: 'node-1', Datacenter: 'dc1', JobID: 'web', AllocID: `alloc-${id}`, Tags: tags, Address: '127.0.0.1', Port: port,
});
const variable = (path: string, items: Record<string, string>) => ({
  Namespace: 'default', Path: path, CreateIndex: 3, ModifyIndex: 7, CreateTime: 1_700_000_000_000_000_000, ModifyTime: 1_700_000_001_000_000_000, Items: items,
});

function scope(over: Partial<TemplateScope> = {}): TemplateScope {
  const vars = [variable('nomad/jobs/web', { user: 'admin', pass: 's3cret' }), variable('nomad/jobs/web/api', { port: '8080' })];
  const services = [service('b', 'redis', 6380, ['replica']), service('a', 'redis', 6379, ['primary', 'cache']), service('c', 'api', 80)];
  return {
    env: { NOMAD_TASK_NAME: 'app', HOME_DIR: '/home/x' },
    namespace: 'default',
    readFile: (p) => (p === 'local/seed.txt' ? 'seeded' : undefined),
    now: () => NOW,
    variables: {
      get: (path, ns = 'default') => vars.find((v) => v.Path === path && v.Namespace === ns),
      list: (prefix, ns = 'default') => vars.filter((v) => v.Path.startsWith(prefix) && v.Namespace === ns),
    },
    services: {
      list: (name) => services.filter((s) => s.ServiceName === name).sort((x, y) => (x.ID < y.ID ? -1 : 1)),
      names: () => [{ Namespace: 'default', Services: [{ ServiceName: 'api', Tags: [] }, { ServiceName: 'redis', Tags: ['cache', 'primary', 'replica'] }] }],
    },
    addresses: () => [
      { iface: 'lo', address: '127.0.0.1', family: 'IPv4', internal: true },
      { iface: 'eth0', address: '10.1.2.3', family: 'IPv4', internal: false },
      { iface: 'eth1', address: '203.0.113.9', family: 'IPv4', internal: false },
    ],
    ...over,
  };
}

function render(text: string, s = scope()) {
  const tracker = newTracker();
  const out = new Template('t', { funcs: consulTemplateFuncs(s, tracker) }).parse(text).execute(undefined);
  return { out, tracker };
}

describe('consul-template functions', () => {
  it('reads the task environment with env', () => {
    expect(render('{{ env "NOMAD_TASK_NAME" }}|{{ env "UNSET" }}|{{ envOrDefault "UNSET" "d" }}').out).toBe('app||d');
  });

  it('renders a service from the registry as consul-template NomadService structs', () => {
    const { out, tracker } = render('{{ range nomadService "redis" }}{{ .Name }} {{ .Address }}:{{ .Port }} {{ .Tags }} {{ .AllocID }}\n{{ end }}');
    expect(out).toBe('redis 127.0.0.1:6379 [cache primary] alloc-a\nredis 127.0.0.1:6380 [replica] alloc-b\n');
    expect([...tracker.used]).toEqual(['nomad.service(redis)']);
  });

  it('filters services by tag and lists service names', () => {
    expect(render('{{ range nomadService "replica.redis" }}{{ .Port }}{{ end }}').out).toBe('6380');
    expect(render('{{ range nomadServices }}{{ .Name }}={{ join "," .Tags }};{{ end }}').out).toBe('api=;redis=cache,primary,replica;');
  });

  it('chooses a stable subset with nomadService count key name', () => {
    const a = render('{{ range nomadService 1 "alloc-1" "redis" }}{{ .ID }}{{ end }}').out;
    expect(['a', 'b']).toContain(a);
    expect(render('{{ range nomadService 1 "alloc-1" "redis" }}{{ .ID }}{{ end }}').out).toBe(a);
  });

  it('renders a variable: items by key, ranged in key order, .Key/.Value, Keys and metadata', () => {
    const text = '{{ with nomadVar "nomad/jobs/web" }}{{ .user }}/{{ .pass.Value }}|{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}|{{ .Keys }}|{{ .Metadata.ModifyIndex }}|{{ (index . "user").Key }}{{ end }}';
    const { out, tracker } = render(text);
    expect(out).toBe('admin/s3cret|pass=s3cret;user=admin;|[pass user]|7|user');
    expect(tracker.missing).toEqual([]);
  });

  it('marshals a variable to JSON as its values, keys sorted', () => {
    expect(render('{{ nomadVar "nomad/jobs/web" | toJSON }}').out).toBe('{"pass":"s3cret","user":"admin"}');
  });

  it('records an absent variable as missing, as Nomad names it', () => {
    const { out, tracker } = render('x{{ with nomadVar "nomad/jobs/nope" }}{{ .a }}{{ end }}');
    expect(out).toBe('x');
    expect(tracker.missing).toEqual(['nomad.var.block(nomad/jobs/nope@default.global)']);
  });

  it('answers nomadVarExists and nomadVarList without blocking', () => {
    const { out, tracker } = render('{{ nomadVarExists "nomad/jobs/nope" }} {{ nomadVarExists "nomad/jobs/web" }} {{ range nomadVarList "nomad/jobs" }}{{ . }},{{ end }}');
    expect(out).toBe('false true nomad/jobs/web,nomad/jobs/web/api,');
    expect(tracker.missing).toEqual([]);
  });

  it('reads files through the scope and waits for a missing one', () => {
    expect(render('{{ file "local/seed.txt" }}').out).toBe('seeded');
    expect(render('{{ file "local/later.txt" }}').tracker.missing).toEqual(['file(local/later.txt)']);
  });

  it('formats timestamps with Go layouts, in UTC', () => {
    expect(render('{{ timestamp }}|{{ timestamp "2006-01-02 15:04:05.000" }}|{{ timestamp "unix" }}|{{ timestamp "Jan _2 03:04PM" }}').out).toBe(
      `2026-11-26T07:05:09Z|2026-11-26 07:05:09.120|${Math.floor(NOW.getTime() / 1000)}|Nov 26 07:05AM`,
    );
  });

  it('parses and formats JSON, numbers and booleans as consul-template does', () => {
    expect(render('{{ with parseJSON `{"b":[1,2],"a":"<x>"}` }}{{ .a }} {{ index .b 1 }} {{ toJSON . }}{{ end }}').out).toBe('<x> 2 {"a":"\\u003cx\\u003e","b":[1,2]}');
    expect(render('{{ toJSONPretty (parseJSON `{"a":{"b":1}}`) }}').out).toBe('{\n  "a": {\n    "b": 1\n  }\n}');
    expect(render('{{ add 1 (parseInt "41") }} {{ parseBool "T" }} {{ subtract 2 5 }} {{ divide 2 7 }}').out).toBe('42 true 3 3');
    expect(() => render('{{ parseInt "x1" }}')).toThrow('parseInt: strconv.ParseInt: parsing "x1": invalid syntax');
  });

  it('splits, joins, replaces and changes case', () => {
    expect(render('{{ "a,b,c" | split "," | join ";" }} {{ "a-b" | replaceAll "-" "+" }} {{ toUpper "ab" }} {{ toLower "AB" }} [{{ trimSpace "  x \\n" }}] {{ "prod" | contains "ro" }} {{ contains "x" (split "," "x,y") }}').out).toBe(
      'a;b;c a+b AB ab [x] true true',
    );
  });

  it('answers sockaddr basics from the host addresses', () => {
    expect(render('{{ sockaddr "GetPrivateIP" }} {{ sockaddr "GetPublicIP" }} {{ sockaddr `GetInterfaceIP "eth1"` }}').out).toBe('10.1.2.3 203.0.113.9 203.0.113.9');
  });
});

describe('template validation', () => {
  it('refuses functions that need Consul or Vault, naming each', () => {
    expect(templateProblems('{{ key "a" }}{{ with secret "kv/x" }}{{ .Data }}{{ end }}{{ range service "db" }}{{ end }}', { name: 'cfg' })).toEqual([
      'function "key" needs Consul, which allocrun does not run',
      'function "secret" needs Vault, which allocrun does not run',
      'function "service" needs Consul, which allocrun does not run',
    ]);
  });

  it('reports a parse error with the template name and line', () => {
    expect(templateProblems('ok\n{{ if }}', { name: 'local/app.conf' })).toEqual(['template: local/app.conf:2: missing value for if']);
  });

  it('accepts Nomad functions and custom delimiters', () => {
    expect(templateProblems('[[ with nomadVar "nomad/jobs/x" ]][[ .a ]][[ end ]] {{ key }}', { name: 't', leftDelim: '[[', rightDelim: ']]' })).toEqual([]);
  });
});

describe('more consul-template helpers', () => {
  it('matches and replaces with Go regular expressions', () => {
    expect(render('{{ "foo.bar" | regexMatch "^foo[.a-z]+$" }} {{ "v1.2.3" | regexReplaceAll "v(\\\\d+)\\\\..*" "major=${1}" }}').out).toBe('true major=1');
  });

  it('indents, trims prefixes and suffixes', () => {
    expect(render('{{ "a\\nb" | indent 2 }}|{{ "app-web" | trimPrefix "app-" }}|{{ "web.conf" | trimSuffix ".conf" }}').out).toBe('  a\n  b|web|web');
  });

  it('checks lists against lists', () => {
    expect(render('{{ $t := split "," "a,b,c" }}{{ containsAll (split "," "a,b") $t }} {{ containsAny (split "," "x,c") $t }} {{ containsNone (split "," "x,y") $t }} {{ containsNotAll (split "," "a,x") $t }}').out).toBe('true true true true');
  });

  it('groups services by tag and reads and writes YAML', () => {
    expect(render('{{ range $tag, $s := nomadService "redis" | byTag }}{{ $tag }}={{ len $s }};{{ end }}').out).toBe('cache=1;primary=1;replica=1;');
    expect(render('{{ with parseYAML "b: 2\\na: [x, y]" }}{{ index .a 1 }} {{ toYAML . }}{{ end }}').out).toBe('y a:\n  - x\n  - y\nb: 2');
  });
});
