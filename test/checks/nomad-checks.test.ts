/**
 * An allocation's Nomad checks as they run (src/checks/nomad-checks.ts, address.ts, check-id.ts): group
 * and task services' checks, each interpolated in its own env, its address from the allocation's ports
 * (label, number, custom address), and Nomad's check ID (stable, and new when the check changes).
 */
import { describe, expect, it } from 'vitest';
import { checkAddress } from '../../src/checks/address.ts';
import { nomadCheckId } from '../../src/checks/check-id.ts';
import { nomadChecksOf } from '../../src/checks/nomad-checks.ts';
import type { CheckSpec, ServiceSpec } from '../../src/checks/spec.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';

const PORTS = [
  { label: 'http', value: 25000, to: 0, hostIP: '127.0.0.1' },
  { label: 'admin', value: 9901, to: 0, hostIP: '10.0.0.5' },
];
const check = (extra: Partial<CheckSpec> = {}): CheckSpec => ({ name: 'alive', type: 'http', path: '/', interval: 10_000, timeout: 2_000, successBeforePassing: 0, failuresBeforeCritical: 0, onUpdate: 'require_healthy', ...extra });
const service = (name: string, checks: CheckSpec[], extra: Partial<ServiceSpec> = {}): ServiceSpec => ({ name, provider: 'nomad', port: 'http', addressMode: 'auto', onUpdate: 'require_healthy', checks, ...extra });

describe('check addresses (host networking)', () => {
  const rows: [string, string | undefined, string | undefined, ReturnType<typeof checkAddress>][] = [
    ['a port label: its host address and host port', 'admin', undefined, { host: '10.0.0.5', port: 9901 }],
    ['a literal port number: this host', '8080', undefined, { host: '127.0.0.1', port: 8080 }],
    ['an unknown label', 'db', undefined, { error: 'invalid port "db": port label not found' }],
    ['port 0', '0', undefined, { error: 'invalid port: "0": port must be >0' }],
    ['no port at all', undefined, undefined, { error: 'nomad: the check and its service name no port: set port on the service or the check' }],
    ["a service's custom address with a label: the address, the host port", 'http', 'web.internal', { host: 'web.internal', port: 25000 }],
    ['a custom address with a number', '81', 'web.internal', { host: 'web.internal', port: 81 }],
  ];
  for (const [name, label, custom, want] of rows) it(name, () => expect(checkAddress(PORTS, label, custom)).toEqual(want));
});

describe("an allocation's Nomad checks", () => {
  const alloc: AllocSpec = {
    id: 'a1', job: 'web', group: 'app', type: 'service', ports: PORTS,
    services: [service('web', [check({ name: 'group-alive', checkRestart: { limit: 3, grace: 0, ignoreWarnings: false } })])],
    tasks: [
      { name: 'api', driver: 'mock', config: {}, meta: { ver: '2' }, services: [service('api', [check({ path: '/v${NOMAD_META_ver}', port: 'admin', onUpdate: 'ignore' })])] },
      { name: 'worker', driver: 'mock', config: {}, services: [service('worker', [check({ type: 'tcp', path: undefined, name: '${NOMAD_TASK_NAME}-up' })])] },
    ],
  };
  // Each task's own env; the group's for group services (here: the task name and the task's meta only).
  const lookups = { api: { NOMAD_TASK_NAME: 'api', NOMAD_META_ver: '2' }, worker: { NOMAD_TASK_NAME: 'worker' } } as Record<string, Record<string, string>>;
  const checks = nomadChecksOf(alloc, (task) => (key) => (task ? lookups[task]?.[key] : undefined));

  it('lists group services first, then each task\'s, with their coordinates', () => {
    expect(checks.map((c) => [c.service, c.task, c.check.name, c.restarts, c.mode])).toEqual([
      ['web', undefined, 'group-alive', undefined, 'healthiness'],
      ['api', 'api', 'alive', 'api', 'readiness'],
      ['worker', 'worker', 'worker-up', 'worker', 'healthiness'],
    ]);
  });

  it('interpolates each check in its own task env and resolves its address', () => {
    expect(checks[1]!.query).toMatchObject({ type: 'http', path: '/v2', address: { host: '10.0.0.5', port: 9901 } });
    expect(checks[2]!.query).toMatchObject({ type: 'tcp', address: { host: '127.0.0.1', port: 25000 } });
  });

  it('gives each check its own stable 32-hex ID', () => {
    const ids = checks.map((c) => c.id);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(nomadChecksOf(alloc, (task) => (key) => (task ? lookups[task]?.[key] : undefined)).map((c) => c.id)).toEqual(ids);
  });
});

describe("Nomad's check ID", () => {
  const base = check();
  const id = nomadCheckId('a1', 'app', base);
  it('changes with the allocation, the group and each defining field', () => {
    const variants: Partial<CheckSpec>[] = [{ name: 'other' }, { type: 'tcp' }, { port: 'admin' }, { onUpdate: 'ignore' }, { interval: 11_000 }, { timeout: 3_000 }, { protocol: 'https' }, { path: '/x' }, { method: 'POST' }, { task: 'api' }];
    for (const v of variants) expect(nomadCheckId('a1', 'app', { ...base, ...v }), JSON.stringify(v)).not.toBe(id);
    expect(nomadCheckId('a2', 'app', base)).not.toBe(id);
    expect(nomadCheckId('a1', 'other', base)).not.toBe(id);
  });

  it('ignores what does not define the check (thresholds, check_restart, headers)', () => {
    const other: CheckSpec = { ...base, successBeforePassing: 3, checkRestart: { limit: 1, grace: 0, ignoreWarnings: true }, header: { X: ['y'] } };
    expect(nomadCheckId('a1', 'app', other)).toBe(id);
  });
});
