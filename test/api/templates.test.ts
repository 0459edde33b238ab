/**
 * Templates through the agent (issue 28): a job registered over the API whose task renders a Nomad
 * variable. Its first render blocks (the allocation's task events say what is missing) until the variable
 * is written with `PUT /v1/var`, which releases it; a later write re-renders the file and restarts the
 * task (change_mode "restart"), not counted as a failure. The agent's real store and variables; mock tasks.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, serve } from './in-process-agent.ts';

afterEach(cleanUp);

const job = (id: string) => ({
  Job: {
    ID: id,
    Type: 'service',
    TaskGroups: [{
      Name: 'g',
      Count: 1,
      RestartPolicy: { Attempts: 0, Interval: 60e9, Delay: 10e6, Mode: 'fail' },
      Tasks: [{
        Name: 'app',
        Driver: 'mock',
        Config: { run_for: '1h' },
        Templates: [{
          EmbeddedTmpl: '{{ with nomadVar "nomad/jobs/' + id + '" }}db={{ .db }}{{ end }}\n',
          DestPath: 'local/app.conf',
          ChangeMode: 'restart',
          Splay: 0,
          Wait: { Min: 0, Max: 0 },
        }],
      }],
    }],
  },
});

describe('templates on the agent', { timeout: 60_000 }, () => {
  it('blocks a task on a missing variable until PUT /v1/var writes it, then restarts it when it changes', async () => {
    const s = await serve();
    const registered = await call(s.socket, 'PUT', '/v1/jobs', job('tmpl'));
    expect(registered.status, registered.text).toBe(200);

    const [blocked] = await waitForAllocs(s.socket, '/v1/job/tmpl/allocations', (list) =>
      list.length === 1 && (list[0]!.TaskStates?.app?.Events ?? []).some((e) => e.Type === 'Template'),
    );
    const missing = blocked!.TaskStates.app!.Events.find((e) => e.Type === 'Template')!;
    expect(missing.DisplayMessage).toBe('Missing: nomad.var.block(nomad/jobs/tmpl@default.global)');
    expect(blocked!.TaskStates.app!.State).toBe('pending');

    const put = await call(s.socket, 'PUT', '/v1/var/nomad/jobs/tmpl', { Items: { db: 'postgres://one' } });
    expect(put.status, put.text).toBe(200);
    const [running] = await waitForAllocs(s.socket, '/v1/job/tmpl/allocations', (list) => list[0]?.TaskStates?.app?.State === 'running');
    const conf = join(s.dataDir, 'allocs', running!.ID, 'app', 'local', 'app.conf');
    expect(await readFile(conf, 'utf8')).toBe('db=postgres://one\n');

    await call(s.socket, 'PUT', '/v1/var/nomad/jobs/tmpl', { Items: { db: 'postgres://two' } });
    const [restarted] = await waitForAllocs(s.socket, '/v1/job/tmpl/allocations', (list) =>
      (list[0]?.TaskStates?.app?.Events ?? []).some((e) => e.Type === 'Restart Signaled') && list[0]!.TaskStates.app!.State === 'running' && list[0]!.TaskStates.app!.Restarts === 1,
    );
    expect(restarted!.TaskStates.app!.Events.find((e) => e.Type === 'Restart Signaled')!.DisplayMessage).toBe('Template with change_mode restart re-rendered');
    expect(await readFile(conf, 'utf8')).toBe('db=postgres://two\n');
    expect(restarted!.ClientStatus).toBe('running');
  });

  it('does not let a task read another job\'s variables: the render stays blocked', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/var/nomad/jobs/other', { Items: { db: 'x' } });
    const body = job('mine');
    body.Job.TaskGroups[0]!.Tasks[0]!.Templates[0]!.EmbeddedTmpl = '{{ with nomadVar "nomad/jobs/other" }}{{ .db }}{{ end }}';
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    const [blocked] = await waitForAllocs(s.socket, '/v1/job/mine/allocations', (list) =>
      (list[0]?.TaskStates?.app?.Events ?? []).some((e) => e.Type === 'Template'),
    );
    expect(blocked!.TaskStates.app!.Events.find((e) => e.Type === 'Template')!.DisplayMessage).toBe('Missing: nomad.var.block(nomad/jobs/other@default.global)');
  });
});
