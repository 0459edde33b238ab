import { describe, expect, it } from 'vitest';
import { parseJob, SpecError, type JobFileFormat } from '../../src/jobspec/index.ts';
import { problemsOf } from './problems-of.ts';

const hcl = (network: string) => `job "web" {
  group "app" {
    network {
${network}
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "python3"
      }
    }
  }
}
`;

describe('the group network block', () => {
  it.each<[string, JobFileFormat, string]>([
    ['HCL', 'hcl', hcl('      port "http" {}\n      port "admin" {\n        static = 9901\n      }')],
    ['JSON', 'json', JSON.stringify({ job: { web: { group: { app: { network: { port: { http: {}, admin: { static: 9901 } } }, task: { server: { driver: 'raw_exec', config: { command: 'python3' } } } } } } } })],
    ['YAML', 'yaml', 'job:\n  web:\n    group:\n      app:\n        network:\n          port:\n            http: {}\n            admin:\n              static: 9901\n        task:\n          server:\n            driver: raw_exec\n            config:\n              command: python3\n'],
    ['Nomad API JSON', 'json', JSON.stringify({ Job: { ID: 'web', TaskGroups: [{ Name: 'app', Networks: [{ Mode: 'host', IP: '', ReservedPorts: [{ Label: 'admin', Value: 9901, To: 0, HostNetwork: 'default' }], DynamicPorts: [{ Label: 'http', Value: 0, To: 0, HostNetwork: 'default' }] }], Tasks: [{ Name: 'server', Driver: 'raw_exec', Config: { command: 'python3' } }] }] } })],
  ])('loads ports from %s in host mode, without a warning', async (_name, format, text) => {
    const job = await parseJob(text, { format });
    const network = job.allocs[0]!.network!;
    expect(network.mode).toBe('host');
    expect([...network.ports].sort((a, b) => a.label.localeCompare(b.label))).toEqual([{ label: 'admin', static: 9901 }, { label: 'http' }]);
    expect(job.warnings).toEqual([]);
  });

  it('keeps a port\'s "to" and warns that host mode maps nothing', async () => {
    const job = await parseJob(hcl('      port "http" {\n        to = 8080\n      }'), { format: 'hcl' });
    expect(job.allocs[0]!.network!.ports).toEqual([{ label: 'http', to: 8080 }]);
    expect(job.warnings.map((w) => w.path)).toEqual(['job.web.group.app.network.port.http.to']);
  });

  it('warns about host_network and loads the port on the one host network', async () => {
    const job = await parseJob(hcl('      port "http" {\n        host_network = "public"\n      }'), { format: 'hcl' });
    expect(job.allocs[0]!.network!.ports).toEqual([{ label: 'http' }]);
    expect(job.warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([expect.stringMatching(/^job\.web\.group\.app\.network\.port\.http\.host_network: ignored: allocrun has one host network/)]);
  });

  it.each<[string, string, string]>([
    ['a static port above 65535', '      port "http" {\n        static = 70000\n      }', 'job.web.group.app.network.port.http.static: must be at most 65535'],
    ['a static port of 0', '      port "http" {\n        static = 0\n      }', 'job.web.group.app.network.port.http.static: must be at least 1'],
    ['a label twice', '      port "http" {}\n      port "http" {}', 'job.web.group.app.network.port.http[1]: "http" is defined 2 times; it may appear only once'],
    ['one static port under two labels', '      port "a" {\n        static = 9901\n      }\n      port "b" {\n        static = 9901\n      }', 'job.web.group.app.network.port.b.static: static port 9901 is already reserved by port "a"'],
    ['a label that is no env name part', '      port "my-port" {}', 'job.web.group.app.network.port.my-port: port label "my-port" is not valid: use ASCII letters, digits and "_" only'],
    ['bridge mode', '      mode = "bridge"\n      port "http" {}', 'job.web.group.app.network.mode: network mode "bridge" is not supported: allocrun runs tasks in "host" networking mode only'],
    ['an unknown port field', '      port "http" {\n        statik = 80\n      }', 'job.web.group.app.network.port.http.statik: unknown key "statik"; did you mean "static"?'],
  ])('refuses %s, naming the field', async (_what, network, expected) => {
    const problems = await problemsOf(hcl(network));
    expect(problems.some((p) => p.startsWith(expected)), problems.join('\n')).toBe(true);
  });

  it('names the API field of a bad static port in API JSON, with its line', async () => {
    const text = JSON.stringify({ Job: { ID: 'web', TaskGroups: [{ Name: 'app', Networks: [{ Mode: 'host', ReservedPorts: [{ Label: 'admin', Value: 99999 }] }], Tasks: [{ Name: 'server', Driver: 'raw_exec', Config: { command: 'x' } }] }] } }, null, 2);
    try {
      await parseJob(text, { format: 'json' });
      expect.unreachable();
    } catch (err) {
      const p = (err as SpecError).problems[0]!;
      expect(p.message).toBe('must be at most 65535; got 99999');
      expect(text.split('\n')[p.line! - 1]).toContain('"Value": 99999');
    }
  });
});
