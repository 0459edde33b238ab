/**
 * The Nomad-provider checks of an allocation, group and task services alike (Nomad's
 * TaskGroup.NomadServices), interpolated each in its own env (a task service's in its task's env, a group
 * service's in the allocation's: PR #25373's rule), with the IDs, coordinates and address they run with.
 */
import type { AllocSpec } from '../jobspec/types.ts';
import { interpolateString, type Lookup } from '../env/interpolate.ts';
import { nomadCheckId } from './check-id.ts';
import { checkAddress } from './address.ts';
import type { CheckQuery } from './checker.ts';
import type { CheckMode } from './result.ts';
import { groupServicesOf, taskServicesOf, type CheckSpec, type ServiceSpec } from './spec.ts';

/** One check as it runs. */
export interface NomadCheck {
  id: string;
  /** The check as interpolated. */
  check: CheckSpec;
  service: string;
  /** The task of a task service; undefined for a group service. */
  task: string | undefined;
  /** The task check_restart restarts: a task service's task; undefined for a group service (every running task, Nomad's alloc restart). */
  restarts: string | undefined;
  mode: CheckMode;
  query: CheckQuery;
}

/** The env a service of `alloc` interpolates in: its task's, or the allocation's (`undefined`). */
export type LookupOf = (task: string | undefined, alloc: AllocSpec) => Lookup;

/** Every Nomad check of the allocation, group services first, in the order written. */
export function nomadChecksOf(alloc: AllocSpec, lookupOf: LookupOf): NomadCheck[] {
  const out: NomadCheck[] = [];
  const add = (service: ServiceSpec, task: string | undefined) => {
    if (service.provider !== 'nomad') return;
    const lookup = lookupOf(task, alloc);
    const s = (v: string | undefined) => (v === undefined ? undefined : interpolateString(v, lookup));
    const serviceName = s(service.name)!;
    const servicePort = s(service.port);
    const address = s(service.address);
    for (const written of service.checks ?? []) {
      const check: CheckSpec = {
        ...written,
        name: s(written.name)!,
        ...(written.port !== undefined && { port: s(written.port) }),
        ...(written.path !== undefined && { path: s(written.path) }),
        ...(written.method !== undefined && { method: s(written.method) }),
        ...(written.body !== undefined && { body: s(written.body) }),
        ...(written.header && { header: Object.fromEntries(Object.entries(written.header).map(([k, vs]) => [k, vs.map((v) => interpolateString(v, lookup))])) }),
        // A task service's checks belong to its task (Nomad sets the check's TaskName when it canonicalizes).
        ...(task !== undefined && { task }),
      };
      out.push({
        id: nomadCheckId(alloc.id, alloc.group, check),
        check,
        service: serviceName,
        task,
        restarts: task,
        mode: check.onUpdate === 'ignore' ? 'readiness' : 'healthiness',
        query: {
          type: check.type,
          address:
            address && check.addressMode === 'host'
              ? { error: 'cannot use custom advertise address with "host" address mode' }
              : checkAddress(alloc.ports ?? [], check.port ?? servicePort, address),
          timeout: check.timeout,
          protocol: check.protocol,
          path: check.path,
          method: check.method,
          header: check.header,
          body: check.body,
          tlsSkipVerify: check.tlsSkipVerify,
        },
      });
    }
  };
  for (const service of groupServicesOf(alloc)) add(service, undefined);
  for (const t of alloc.tasks) for (const service of taskServicesOf(t)) add(service, t.name);
  return out;
}
