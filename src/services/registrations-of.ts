/**
 * A workload's service blocks as ServiceRegistrations (Nomad's serviceregistration/nsd ServiceRegistration
 * built from WorkloadServices): names, tags and addresses interpolated from that workload's env alone (the
 * task's for a task service, the bare allocation env for a group service: PR #25373), addresses and ports
 * from the allocation's allocated ports in host mode.
 */
import { interpolateString } from '../env/interpolate.ts';
import type { AllocSpec, ServiceSpec } from '../jobspec/types.ts';
import { makeAllocServiceId, type ServiceRegistrationInput } from './service-registration.ts';

/** Where a workload's services are registered from. */
export interface WorkloadServices {
  alloc: Pick<AllocSpec, 'id' | 'job' | 'namespace' | 'ports' | 'canary'>;
  /** The task's name, or `group-<group>` for group services (Nomad's WorkloadServices.Name()). */
  workload: string;
  services: readonly ServiceSpec[];
  /** The workload's env (frozen vars), used for interpolation only and not kept. */
  env: Readonly<Record<string, string>>;
  node: { id: string; datacenter: string };
  /** The host address for a service whose port is a number or absent; default the first allocated port's. */
  hostIP?: string;
}

/**
 * `${key}` from the workload's env. A `NOMAD_META_<key>` the workload does not have resolves empty: that
 * meta is unset for this task (another task's meta must never show through); any other unknown key is
 * left as written, as Nomad's ReplaceEnv leaves it, so a typo stays visible.
 */
export function serviceLookup(env: Readonly<Record<string, string>>): (key: string) => string | undefined {
  return (key) => (Object.hasOwn(env, key) ? env[key] : key.startsWith('NOMAD_META_') ? '' : undefined);
}

/** The registrations of one workload's services (empty when it has none). */
export function registrationsOf(w: WorkloadServices): ServiceRegistrationInput[] {
  const lookup = serviceLookup(w.env);
  const text = (s: string) => interpolateString(s, lookup);
  const ports = w.alloc.ports ?? [];
  const hostIP = w.hostIP ?? ports[0]?.hostIP ?? '127.0.0.1';
  return w.services.map((service) => {
    const name = text(service.name);
    const label = service.port === undefined ? '' : text(service.port);
    const allocated = ports.find((p) => p.label === label);
    const port = allocated ? allocated.value : /^\d+$/.test(label) ? Number(label) : 0;
    const address = service.address ? text(service.address) : (allocated?.hostIP ?? hostIP);
    return {
      ID: makeAllocServiceId(w.alloc.id, w.workload, name, label),
      ServiceName: name,
      Namespace: w.alloc.namespace ?? 'default',
      NodeID: w.node.id,
      Datacenter: w.node.datacenter,
      JobID: w.alloc.job,
      AllocID: w.alloc.id,
      // A canary's registrations carry the service's canary_tags when it has any (Nomad's canary tags), its tags once promoted.
      Tags: (w.alloc.canary && service.canaryTags?.length ? service.canaryTags : (service.tags ?? [])).map(text),
      Address: address,
      Port: port,
    };
  });
}
