import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { canonicalJob, sameJob, withoutDefaults } from '../../src/api/job-canonical.ts';
import { jobToApiJson } from '../../src/api/job-json.ts';
import { parseJob, SpecError, type JobFileFormat } from '../../src/jobspec/index.ts';
import { problemsOf } from './problems-of.ts';

const hcl = (groupServices: string, taskServices = '') => `job "web" {
  group "app" {
    network {
      port "http" {}
      port "admin" {
        static = 9901
      }
    }
${groupServices}
    task "server" {
      driver = "raw_exec"
      config {
        command = "python3"
      }
${taskServices}
    }
  }
}
`;

const webService = `    service {
      name     = "web"
      port     = "http"
      provider = "nomad"
      tags     = ["v\${NOMAD_META_version}"]
      meta {
        team = "a"
      }
      check_restart {
        limit = 3
      }
      check {
        type     = "http"
        path     = "/health"
        method   = "POST"
        interval = "5s"
        timeout  = "2s"
        header {
          Authorization = ["Basic x"]
        }
        check_restart {
          grace = "10s"
        }
      }
      check {
        name     = "tcp"
        type     = "tcp"
        port     = "admin"
        interval = "10s"
        timeout  = "1s"
        success_before_passing   = 2
        failures_before_critical = 3
        initial_status           = "passing"
      }
    }`;

/** What every format of the web job must load into. */
const expectedServices = [
  {
    name: 'web',
    provider: 'nomad',
    port: 'http',
    tags: ['v${NOMAD_META_version}'],
    meta: { team: 'a' },
    addressMode: 'auto',
    onUpdate: 'require_healthy',
    checks: [
      {
        name: 'service: "web" check', type: 'http', path: '/health', method: 'POST', header: { Authorization: ['Basic x'] },
        interval: 5_000, timeout: 2_000, successBeforePassing: 0, failuresBeforeCritical: 0,
        checkRestart: { limit: 3, grace: 10_000, ignoreWarnings: false }, onUpdate: 'require_healthy',
      },
      {
        name: 'tcp', type: 'tcp', port: 'admin', interval: 10_000, timeout: 1_000, initialStatus: 'passing',
        successBeforePassing: 2, failuresBeforeCritical: 3, checkRestart: { limit: 3, grace: 1_000, ignoreWarnings: false }, onUpdate: 'require_healthy',
      },
    ],
  },
];

const jsonJob = {
  job: {
    web: {
      group: {
        app: {
          network: { port: { http: {}, admin: { static: 9901 } } },
          service: [
            {
              name: 'web', port: 'http', provider: 'nomad', tags: ['v${NOMAD_META_version}'], meta: { team: 'a' }, check_restart: { limit: 3 },
              check: [
                { type: 'http', path: '/health', method: 'POST', interval: '5s', timeout: '2s', header: { Authorization: ['Basic x'] }, check_restart: { grace: '10s' } },
                { name: 'tcp', type: 'tcp', port: 'admin', interval: '10s', timeout: '1s', success_before_passing: 2, failures_before_critical: 3, initial_status: 'passing' },
              ],
            },
          ],
          task: { server: { driver: 'raw_exec', config: { command: 'python3' } } },
        },
      },
    },
  },
};

const apiJob = {
  Job: {
    ID: 'web',
    TaskGroups: [
      {
        Name: 'app',
        Networks: [{ Mode: 'host', ReservedPorts: [{ Label: 'admin', Value: 9901 }], DynamicPorts: [{ Label: 'http', Value: 0 }] }],
        Services: [
          {
            Name: 'web', PortLabel: 'http', Provider: 'nomad', Tags: ['v${NOMAD_META_version}'], Meta: { team: 'a' }, Namespace: 'default', CheckRestart: { Limit: 3 },
            Checks: [
              { Type: 'http', Path: '/health', Method: 'POST', Interval: 5e9, Timeout: 2e9, Header: { Authorization: ['Basic x'] }, CheckRestart: { Grace: 10e9 }, Expose: false, SuccessBeforePassing: 0 },
              { Name: 'tcp', Type: 'tcp', PortLabel: 'admin', Interval: 10e9, Timeout: 1e9, SuccessBeforePassing: 2, FailuresBeforeCritical: 3, InitialStatus: 'passing' },
            ],
          },
        ],
        Tasks: [{ Name: 'server', Driver: 'raw_exec', Config: { command: 'python3' } }],
      },
    ],
  },
};

describe('the service block', () => {
  it.each<[string, JobFileFormat, string]>([
    ['HCL', 'hcl', hcl(webService)],
    ['JSON', 'json', JSON.stringify(jsonJob)],
    ['YAML', 'yaml', `job:\n  web:\n    group:\n      app:\n        network:\n          port:\n            http: {}\n            admin:\n              static: 9901\n        service:\n          - name: web\n            port: http\n            provider: nomad\n            tags: ["v\${NOMAD_META_version}"]\n            meta:\n              team: a\n            check_restart:\n              limit: 3\n            check:\n              - type: http\n                path: /health\n                method: POST\n                interval: 5s\n                timeout: 2s\n                header:\n                  Authorization: ["Basic x"]\n                check_restart:\n                  grace: 10s\n              - name: tcp\n                type: tcp\n                port: admin\n                interval: 10s\n                timeout: 1s\n                success_before_passing: 2\n                failures_before_critical: 3\n                initial_status: passing\n        task:\n          server:\n            driver: raw_exec\n            config:\n              command: python3\n`],
    ['Nomad API JSON', 'json', JSON.stringify(apiJob)],
  ])('loads a group service with its checks from %s, check_restart inherited from the service', async (_name, format, text) => {
    const job = await parseJob(text, { format });
    expect(job.allocs[0]!.services).toEqual(expectedServices);
    expect(job.warnings).toEqual([]);
  });

  it('gives task services Nomad\'s default name and keeps them on their task', async () => {
    const job = await parseJob(hcl('', '      service {\n        provider = "nomad"\n        port     = "http"\n      }\n      service {\n        name     = "${TASK}-admin"\n        provider = "nomad"\n        port     = 9901\n      }'), { format: 'hcl' });
    const alloc = job.allocs[0]!;
    expect(alloc.services).toBeUndefined();
    expect(alloc.tasks[0]!.services!.map((s) => [s.name, s.port])).toEqual([['web-app-server', 'http'], ['server-admin', '9901']]);
  });

  it('loads the example web job with its service and check', async () => {
    const text = await readFile(new URL('../../examples/web.nomad', import.meta.url), 'utf8');
    const job = await parseJob(text, { format: 'hcl', file: 'examples/web.nomad' });
    expect(job.allocs).toHaveLength(2);
    expect(job.allocs[0]!.services).toMatchObject([{ name: 'web', port: 'http', tags: ['v${NOMAD_META_version}'], checks: [{ type: 'http', path: '/', interval: 5_000, timeout: 2_000, checkRestart: { limit: 3, grace: 10_000 } }] }]);
    expect(job.warnings).toEqual([]);
  });

  it('writes services as Nomad API JSON that loads back into the same allocations and re-registers as the same job', async () => {
    const fromHcl = await parseJob(hcl(webService), { format: 'hcl' });
    const api = jobToApiJson(fromHcl.job.name, fromHcl.job.body);
    expect((api['TaskGroups'] as Record<string, unknown>[])[0]!['Services']).toMatchObject([{ Name: 'web', PortLabel: 'http', Provider: 'nomad', CheckRestart: { Limit: 3 }, Checks: [{ Type: 'http', Interval: 5e9, Timeout: 2e9, CheckRestart: { Grace: 10e9 } }, { Name: 'tcp' }] }]);
    const stored = canonicalJob(api);
    const storedService = ((stored['TaskGroups'] as Record<string, unknown>[])[0]!['Services'] as Record<string, unknown>[])[0]!;
    expect(storedService).toMatchObject({ Name: 'web', AddressMode: 'auto', OnUpdate: 'require_healthy', Namespace: 'default', Checks: [{ Name: 'service: "web" check', OnUpdate: 'require_healthy', CheckRestart: { Limit: 3, Grace: 10e9, IgnoreWarnings: false } }, { CheckRestart: { Limit: 3, Grace: 1e9 } }] });
    expect(storedService['CheckRestart']).toBeUndefined();
    // What GET /v1/job answers, registered again: the same job, and the same allocations.
    expect(sameJob(stored, api)).toBe(true);
    expect(sameJob(canonicalJob(stored), stored)).toBe(true);
    const fromStored = await parseJob(JSON.stringify({ Job: withoutDefaults(stored) }), { format: 'json' });
    // Nomad's canonical job names the default namespace; otherwise the allocations are the same.
    expect(fromStored.allocs.map(({ namespace: _, ...a }) => a)).toEqual(fromHcl.allocs);
    expect(fromStored.warnings).toEqual([]);
  });

  it('sees a changed tag as a changed job', async () => {
    const a = await parseJob(hcl(webService), { format: 'hcl' });
    const b = await parseJob(hcl(webService.replace('tags     = ["v${NOMAD_META_version}"]', 'tags     = ["blue"]')), { format: 'hcl' });
    expect(sameJob(canonicalJob(jobToApiJson(a.job.name, a.job.body)), jobToApiJson(b.job.name, b.job.body))).toBe(false);
  });

  it('warns about Consul-only settings and loads the service', async () => {
    const job = await parseJob(hcl('    service {\n      provider = "nomad"\n      port = "http"\n      enable_tag_override = true\n      check {\n        type = "tcp"\n        interval = "5s"\n        timeout = "1s"\n        notes = "x"\n      }\n    }'), { format: 'hcl' });
    expect(job.warnings.map((w) => w.path)).toEqual(['job.web.group.app.service[0].enable_tag_override', 'job.web.group.app.service[0].check[0].notes']);
    expect(job.allocs[0]!.services).toHaveLength(1);
  });

  it.each<[string, string, string]>([
    ['a service without a provider', '    service {\n      port = "http"\n    }', 'job.web.group.app.service[0].provider: a service needs provider = "nomad": Nomad\'s default provider is Consul'],
    ['the consul provider', '    service {\n      provider = "consul"\n      port = "http"\n    }', 'job.web.group.app.service[0].provider: provider "consul" is not supported: allocrun has no Consul; set provider = "nomad"'],
    ['a port the network block lacks', '    service {\n      provider = "nomad"\n      port = "htp"\n    }', 'job.web.group.app.service[0].port: port "htp" is not a port of the group\'s network block (its ports are'],
    ['a script check', '    service {\n      provider = "nomad"\n      port = "http"\n      check {\n        type = "script"\n        command = "/bin/true"\n        interval = "5s"\n        timeout = "1s"\n      }\n    }', 'job.web.group.app.service[0].check[0].type: check type "script" is not supported'],
    ['a grpc check', '    service {\n      provider = "nomad"\n      port = "http"\n      check {\n        type = "grpc"\n        interval = "5s"\n        timeout = "1s"\n      }\n    }', 'job.web.group.app.service[0].check[0].type: check type "grpc" is not supported'],
    ['an http check without a path', '    service {\n      provider = "nomad"\n      port = "http"\n      check {\n        type = "http"\n        interval = "5s"\n        timeout = "1s"\n      }\n    }', 'job.web.group.app.service[0].check[0].path: an http check needs a path'],
    ['a check without an interval', '    service {\n      provider = "nomad"\n      port = "http"\n      check {\n        type = "tcp"\n        timeout = "1s"\n      }\n    }', 'job.web.group.app.service[0].check[0].interval: a check needs interval'],
    ['an interval under a second', '    service {\n      provider = "nomad"\n      port = "http"\n      check {\n        type = "tcp"\n        interval = "500ms"\n        timeout = "1s"\n      }\n    }', 'job.web.group.app.service[0].check[0].interval: interval cannot be less than 1s'],
    ['a check with no port anywhere', '    service {\n      provider = "nomad"\n      check {\n        type = "tcp"\n        interval = "5s"\n        timeout = "1s"\n      }\n    }', 'job.web.group.app.service[0].check[0]: an tcp check needs a port'],
    ['expose', '    service {\n      provider = "nomad"\n      port = "http"\n      check {\n        type = "tcp"\n        interval = "5s"\n        timeout = "1s"\n        expose = true\n      }\n    }', 'job.web.group.app.service[0].check[0].expose: expose may only be set for Consul service checks'],
    ['address_mode driver', '    service {\n      provider = "nomad"\n      port = "http"\n      address_mode = "driver"\n    }', 'job.web.group.app.service[0].address_mode: service address_mode "driver" is not supported'],
    ['a connect block', '    service {\n      provider = "nomad"\n      port = "http"\n      connect {\n        native = true\n      }\n    }', 'job.web.group.app.service[0].connect: a service with provider "nomad" cannot have a connect block'],
    ['a name that is no DNS label', '    service {\n      provider = "nomad"\n      name = "web_api"\n      port = "http"\n    }', 'job.web.group.app.service[0].name: service name "web_api" is not valid'],
    ['the same service twice', '    service {\n      provider = "nomad"\n      name = "web"\n      port = "http"\n    }\n    service {\n      provider = "nomad"\n      name = "web"\n      port = "http"\n    }', 'job.web.group.app.service[1]: service "web" with this port is already defined'],
    ['on_update ignore with check_restart', '    service {\n      provider = "nomad"\n      port = "http"\n      check {\n        type = "tcp"\n        interval = "5s"\n        timeout = "1s"\n        on_update = "ignore"\n        check_restart {\n          limit = 2\n        }\n      }\n    }', 'job.web.group.app.service[0].check[0].on_update: on_update = "ignore" is not compatible with check_restart'],
    ['an unknown check field', '    service {\n      provider = "nomad"\n      port = "http"\n      check {\n        type = "tcp"\n        interval = "5s"\n        timeout = "1s"\n        intervall = "5s"\n      }\n    }', 'job.web.group.app.service[0].check[0].intervall: unknown key "intervall"; did you mean "interval"?'],
    ['a bad check_restart field', '    service {\n      provider = "nomad"\n      port = "http"\n      check_restart {\n        limit = -1\n      }\n    }', 'job.web.group.app.service[0].check_restart.limit: must be at least 0'],
  ])('refuses %s, naming the field', async (_what, services, expected) => {
    const problems = await problemsOf(hcl(services));
    expect(problems.some((p) => p.startsWith(expected)), problems.join('\n')).toBe(true);
  });

  it('refuses a task service without a provider, naming the task\'s service', async () => {
    const problems = await problemsOf(hcl('', '      service {\n        port = "http"\n      }'));
    expect(problems).toEqual([expect.stringMatching(/^job\.web\.group\.app\.task\.server\.service\[0\]\.provider: a service needs provider = "nomad"/)]);
  });

  it('names the API field and line of a refused provider in API JSON', async () => {
    const job = structuredClone(apiJob);
    job.Job.TaskGroups[0]!.Services[0]!.Provider = 'consul';
    const text = JSON.stringify(job, null, 2);
    try {
      await parseJob(text, { format: 'json', file: 'web.json' });
      expect.unreachable();
    } catch (err) {
      const p = (err as SpecError).problems[0]!;
      expect(p.path).toBe('job.web.group.app.service[0].provider');
      expect(text.split('\n')[p.line! - 1]).toContain('"Provider": "consul"');
    }
  });

  it('names the path and line of a problem in JSON and YAML files', async () => {
    const json = structuredClone(jsonJob);
    (json.job.web.group.app.service[0]!.check[1] as Record<string, unknown>)['type'] = 'script';
    const jsonText = JSON.stringify(json, null, 2);
    const yamlText = 'job:\n  web:\n    group:\n      app:\n        service:\n          - name: web\n            provider: consul\n        task:\n          server:\n            driver: raw_exec\n            config:\n              command: x\n';
    for (const [text, format, path, line] of [
      [jsonText, 'json', 'job.web.group.app.service[0].check[1].type', '"type": "script"'],
      [yamlText, 'yaml', 'job.web.group.app.service[0].provider', 'provider: consul'],
    ] as const) {
      try {
        await parseJob(text, { format });
        expect.unreachable();
      } catch (err) {
        const p = (err as SpecError).problems.find((q) => q.path === path);
        expect(p, (err as Error).message).toBeDefined();
        expect(text.split('\n')[p!.line! - 1]).toContain(line);
      }
    }
  });

  it('places an HCL problem on its line', async () => {
    const text = hcl('    service {\n      provider = "nomad"\n      port = "http"\n      check {\n        type = "script"\n        interval = "5s"\n        timeout = "1s"\n      }\n    }');
    try {
      await parseJob(text, { format: 'hcl', file: 'web.nomad' });
      expect.unreachable();
    } catch (err) {
      const p = (err as SpecError).problems.find((q) => q.path.endsWith('.type'))!;
      expect(p.file).toBe('web.nomad');
      expect(text.split('\n')[p.line! - 1]).toContain('type = "script"');
    }
  });
});
