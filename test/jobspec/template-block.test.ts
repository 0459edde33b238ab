/**
 * The task `template` block from every format the repo reads (HCL, JSON, YAML, Nomad's API JSON), with
 * Nomad's defaults, validated as Nomad validates it (plus the task-dir confinement and Consul/Vault
 * functions), and round-tripped through the API JSON and Nomad's canonical form.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJob, sameJob, withoutDefaults } from '../../src/api/job-canonical.ts';
import { jobToApiJson } from '../../src/api/job-json.ts';
import { destructiveChange } from '../../src/api/job-diff.ts';
import { parseJob, type JobFileFormat } from '../../src/jobspec/index.ts';
import { problemsOf } from './problems-of.ts';

const hcl = (templates: string, restart = '') => `job "web" {
  group "app" {
    task "server" {
      driver = "raw_exec"
      config {
        command = "python3"
      }
${restart}
${templates}
    }
  }
}
`;

const twoTemplates = `      template {
        data          = <<EOT
port={{ env "NOMAD_PORT_http" }}
{{ with nomadVar "nomad/jobs/web" }}user={{ .user }}{{ end }}
EOT
        destination   = "local/app.conf"
        change_mode   = "signal"
        change_signal = "SIGHUP"
        splay         = "1s"
        perms         = "0600"
        wait {
          min = "2s"
          max = "10s"
        }
      }
      template {
        data        = "A=[[ env \\"HOME\\" ]]"
        destination = "secrets/app.env"
        env         = true
        left_delimiter  = "[["
        right_delimiter = "]]"
        error_on_missing_key = true
      }`;

const expected = [
  {
    data: 'port={{ env "NOMAD_PORT_http" }}\n{{ with nomadVar "nomad/jobs/web" }}user={{ .user }}{{ end }}\n',
    destination: 'local/app.conf', changeMode: 'signal', changeSignal: 'SIGHUP', splay: 1_000, perms: '0600',
    leftDelim: '{{', rightDelim: '}}', env: false, errMissingKey: false, wait: { min: 2_000, max: 10_000 },
  },
  {
    data: 'A=[[ env "HOME" ]]', destination: 'secrets/app.env', changeMode: 'restart', splay: 5_000, perms: '0644',
    leftDelim: '[[', rightDelim: ']]', env: true, errMissingKey: true,
  },
];

const data0 = expected[0]!.data;
const jsonJob = {
  job: { web: { group: { app: { task: { server: {
    driver: 'raw_exec', config: { command: 'python3' },
    template: [
      { data: data0, destination: 'local/app.conf', change_mode: 'signal', change_signal: 'SIGHUP', splay: '1s', perms: '0600', wait: { min: '2s', max: '10s' } },
      { data: 'A=[[ env "HOME" ]]', destination: 'secrets/app.env', env: true, left_delimiter: '[[', right_delimiter: ']]', error_on_missing_key: true },
    ],
  } } } } } },
};

const apiJob = {
  Job: { ID: 'web', TaskGroups: [{ Name: 'app', Tasks: [{
    Name: 'server', Driver: 'raw_exec', Config: { command: 'python3' },
    Templates: [
      { EmbeddedTmpl: data0, DestPath: 'local/app.conf', ChangeMode: 'signal', ChangeSignal: 'SIGHUP', Splay: 1e9, Perms: '0600', Wait: { Min: 2e9, Max: 10e9 }, Envvars: false, LeftDelim: '{{', RightDelim: '}}', SourcePath: '' },
      { EmbeddedTmpl: 'A=[[ env "HOME" ]]', DestPath: 'secrets/app.env', Envvars: true, LeftDelim: '[[', RightDelim: ']]', ErrMissingKey: true },
    ],
  }] }] },
};

const yaml = `job:
  web:
    group:
      app:
        task:
          server:
            driver: raw_exec
            config:
              command: python3
            template:
              - data: |
                  port={{ env "NOMAD_PORT_http" }}
                  {{ with nomadVar "nomad/jobs/web" }}user={{ .user }}{{ end }}
                destination: local/app.conf
                change_mode: signal
                change_signal: SIGHUP
                splay: 1s
                perms: "0600"
                wait:
                  min: 2s
                  max: 10s
              - data: 'A=[[ env "HOME" ]]'
                destination: secrets/app.env
                env: true
                left_delimiter: "[["
                right_delimiter: "]]"
                error_on_missing_key: true
`;

describe('the template block', () => {
  it.each<[string, JobFileFormat, string]>([
    ['HCL', 'hcl', hcl(twoTemplates)],
    ['JSON', 'json', JSON.stringify(jsonJob)],
    ['YAML', 'yaml', yaml],
    ['Nomad API JSON', 'json', JSON.stringify(apiJob)],
  ])('loads two templates with Nomad defaults from %s, without warnings', async (_name, format, text) => {
    const job = await parseJob(text, { format });
    expect(job.allocs[0]!.tasks[0]!.templates).toEqual(expected);
    expect(job.warnings).toEqual([]);
  });

  it('reads restart { render_templates = true } into the task restart policy', async () => {
    const job = await parseJob(hcl('      template {\n        data = "x"\n        destination = "local/x"\n      }', '      restart {\n        render_templates = true\n      }'), { format: 'hcl' });
    expect(job.allocs[0]!.tasks[0]!.restart).toMatchObject({ renderTemplates: true });
  });

  it('writes templates as Nomad API JSON that loads back into the same allocations and re-registers as the same job', async () => {
    const fromHcl = await parseJob(hcl(twoTemplates, '      restart {\n        render_templates = true\n      }'), { format: 'hcl' });
    const api = jobToApiJson(fromHcl.job.name, fromHcl.job.body);
    const task = ((api['TaskGroups'] as Record<string, unknown>[])[0]!['Tasks'] as Record<string, unknown>[])[0]!;
    expect(task['Templates']).toMatchObject([{ DestPath: 'local/app.conf', ChangeMode: 'signal', Splay: 1e9, Wait: { Min: 2e9, Max: 10e9 } }, { Envvars: true, LeftDelim: '[[' }]);
    expect(task['RestartPolicy']).toMatchObject({ RenderTemplates: true });
    const stored = canonicalJob(api);
    const storedTask = ((stored['TaskGroups'] as Record<string, unknown>[])[0]!['Tasks'] as Record<string, unknown>[])[0]!;
    expect((storedTask['Templates'] as unknown[])[1]).toMatchObject({ ChangeMode: 'restart', Splay: 5e9, Perms: '0644' });
    expect(sameJob(stored, api)).toBe(true);
    expect(sameJob(canonicalJob(stored), stored)).toBe(true);
    const fromStored = await parseJob(JSON.stringify({ Job: withoutDefaults(stored) }), { format: 'json' });
    expect(fromStored.allocs.map(({ namespace: _, ...a }) => a)).toEqual(fromHcl.allocs);
    expect(fromStored.warnings).toEqual([]);
  });

  it('replaces the allocation when a template changes, as Nomad\'s tasksUpdated does', async () => {
    const a = await parseJob(hcl(twoTemplates), { format: 'hcl' });
    const b = await parseJob(hcl(twoTemplates.replace('local/app.conf', 'local/other.conf')), { format: 'hcl' });
    expect(destructiveChange(a.allocs[0]!, b.allocs[0]!)).toBe('task "server": templates changed');
    expect(destructiveChange(a.allocs[0]!, a.allocs[0]!)).toBeUndefined();
  });

  it('sees a changed template as a changed job', async () => {
    const a = await parseJob(hcl(twoTemplates), { format: 'hcl' });
    const b = await parseJob(hcl(twoTemplates.replace('"SIGHUP"', '"SIGUSR1"')), { format: 'hcl' });
    expect(sameJob(canonicalJob(jobToApiJson(a.job.name, a.job.body)), jobToApiJson(b.job.name, b.job.body))).toBe(false);
  });

  it.each<[string, string, string]>([
    ['a destination outside the task dir', 'data = "x"\n destination = "../x"', 'template[0].destination: "../x" escapes the task directory'],
    ['a deeper escape', 'data = "x"\n destination = "local/../../other/x"', 'template[0].destination: "local/../../other/x" escapes the task directory'],
    ['no data nor source', 'destination = "local/x"', 'template[0]: a template needs "data" (the template text) or "source"'],
    ['an unknown change_mode', 'data = "x"\n destination = "local/x"\n change_mode = "reload"', 'template[0].change_mode: '],
    ['signal mode without a signal', 'data = "x"\n destination = "local/x"\n change_mode = "signal"', 'template[0].change_signal: change_mode "signal" needs change_signal, e.g. "SIGHUP"'],
    ['a bad signal name', 'data = "x"\n destination = "local/x"\n change_mode = "signal"\n change_signal = "SIGNOPE"', 'template[0].change_signal: "SIGNOPE" is not a signal name'],
    ['script mode without a script', 'data = "x"\n destination = "local/x"\n change_mode = "script"', 'template[0].change_script: change_mode "script" needs a change_script block'],
    ['bad perms', 'data = "x"\n destination = "local/x"\n perms = "rw-r--r--"', 'template[0].perms: "rw-r--r--" is not octal permissions'],
    ['wait min over max', 'data = "x"\n destination = "local/x"\n wait {\n min = "10s"\n max = "1s"\n }', 'template[0].wait.min: wait min is greater than max'],
    ['a Consul function', 'data = "{{ key \\"app/config\\" }}"\n destination = "local/x"', 'template[0].data: function "key" needs Consul, which allocrun does not run'],
    ['a Vault function', 'data = "{{ with secret \\"kv/db\\" }}{{ .Data }}{{ end }}"\n destination = "local/x"', 'template[0].data: function "secret" needs Vault, which allocrun does not run'],
    ['a template that does not parse', 'data = "{{ if }}"\n destination = "local/x"', 'template[0].data: template: local/x:1: missing value for if'],
    ['an unknown key', 'data = "x"\n destination = "local/x"\n chnge_mode = "noop"', 'template[0].chnge_mode: unknown key "chnge_mode"; did you mean "change_mode"?'],
  ])('refuses %s, naming the field', async (_name, body, message) => {
    const problems = await problemsOf(hcl(`      template {\n${body}\n      }`));
    expect(problems.some((p) => p.startsWith(`job.web.group.app.task.server.${message}`))).toBe(true);
  });
});
