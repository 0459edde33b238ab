/** The port variables of a task in host mode, as Nomad's taskenv sets them from AllocatedResources.Shared.Ports. */
import { describe, expect, it } from 'vitest';
import { buildTaskEnv } from '../../src/env/task-env.ts';
import { localNodeInfo } from '../../src/env/node-info.ts';
import { envKeyProblem } from '../../src/jobspec/env-names.ts';
import type { AllocatedPort, AllocSpec } from '../../src/jobspec/index.ts';

const alloc = (ports: AllocatedPort[], env?: Record<string, string>): AllocSpec => ({
  id: 'a1b2c3d4-0000-0000-0000-000000000000', job: 'web', group: 'app', type: 'service',
  network: { mode: 'host', ports: ports.map((p) => ({ label: p.label, ...(p.to > 0 && { to: p.to }) })) },
  ports,
  tasks: [{ name: 'server', driver: 'raw_exec', config: { command: 'python3', args: ['-m', 'http.server', '${NOMAD_PORT_http}'] }, ...(env && { env }) }],
});
const envOf = (spec: AllocSpec) => buildTaskEnv({ node: localNodeInfo(), alloc: spec, task: spec.tasks[0]!, allocDir: '/tmp/a', hostEnv: {} });
const portVars = (vars: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(vars).filter(([k]) => /^NOMAD_(HOST_|ALLOC_)?(PORT|IP|ADDR)_/.test(k)).sort(([a], [b]) => a.localeCompare(b)));

describe('port variables', () => {
  it('sets every host-mode variable of each port', () => {
    const env = envOf(alloc([{ label: 'http', value: 23456, to: 0, hostIP: '127.0.0.1' }, { label: 'admin', value: 9901, to: 0, hostIP: '127.0.0.1' }]));
    expect(portVars(env.vars)).toEqual({
      NOMAD_ADDR_admin: '127.0.0.1:9901', NOMAD_ADDR_http: '127.0.0.1:23456',
      NOMAD_ALLOC_PORT_admin: '9901', NOMAD_ALLOC_PORT_http: '23456',
      NOMAD_HOST_ADDR_admin: '127.0.0.1:9901', NOMAD_HOST_ADDR_http: '127.0.0.1:23456',
      NOMAD_HOST_IP_admin: '127.0.0.1', NOMAD_HOST_IP_http: '127.0.0.1',
      NOMAD_HOST_PORT_admin: '9901', NOMAD_HOST_PORT_http: '23456',
      NOMAD_IP_admin: '127.0.0.1', NOMAD_IP_http: '127.0.0.1',
      NOMAD_PORT_admin: '9901', NOMAD_PORT_http: '23456',
    });
  });

  it('tells the task "to" as its port when set, the host port staying in NOMAD_HOST_PORT and the addresses', () => {
    const vars = envOf(alloc([{ label: 'http', value: 23456, to: 8080, hostIP: '127.0.0.1' }])).vars;
    expect([vars['NOMAD_PORT_http'], vars['NOMAD_ALLOC_PORT_http'], vars['NOMAD_HOST_PORT_http'], vars['NOMAD_ADDR_http']]).toEqual(['8080', '8080', '23456', '127.0.0.1:23456']);
  });

  it('writes an IPv6 host address in brackets', () => {
    expect(envOf(alloc([{ label: 'http', value: 23456, to: 0, hostIP: '::1' }])).vars['NOMAD_ADDR_http']).toBe('[::1]:23456');
  });

  it('interpolates ${NOMAD_PORT_http} in config args and in the task env', () => {
    const spec = alloc([{ label: 'http', value: 23456, to: 0, hostIP: '127.0.0.1' }], { LISTEN: '${NOMAD_ADDR_http}' });
    const env = envOf(spec);
    expect(env.interpolateDeep(spec.tasks[0]!.config)).toEqual({ command: 'python3', args: ['-m', 'http.server', '23456'] });
    expect(env.vars['LISTEN']).toBe('127.0.0.1:23456');
  });

  it('sets none without allocated ports', () => {
    const spec: AllocSpec = { ...alloc([]), ports: undefined };
    expect(portVars(envOf(spec).vars)).toEqual({});
  });

  it('refuses a job env that would override a port variable, and leaves NOMAD_ADDR itself to the job', () => {
    expect(envKeyProblem('NOMAD_PORT_http')).toMatch(/would override the variable of that name the runtime sets/);
    expect(envKeyProblem('NOMAD_HOST_ADDR_http')).toMatch(/would override/);
    expect(envKeyProblem('NOMAD_ADDR')).toBeUndefined();
  });
});
