/**
 * Nomad's ServiceRegistration record (nomad/structs/service_registration.go): one instance of a Nomad-native
 * service, as `/v1/service/:name` answers it, and the ID Nomad's client gives it.
 */

/** One registered service instance, in Nomad's API shape. */
export interface ServiceRegistration {
  /** `_nomad-task-<alloc>-<task | group-<group>>-<service>-<port label>`, as Nomad's MakeAllocServiceID. */
  ID: string;
  ServiceName: string;
  Namespace: string;
  NodeID: string;
  Datacenter: string;
  JobID: string;
  AllocID: string;
  Tags: string[];
  Address: string;
  Port: number;
  CreateIndex: number;
  ModifyIndex: number;
}

/** A registration before the catalog stamps its indexes. */
export type ServiceRegistrationInput = Omit<ServiceRegistration, 'CreateIndex' | 'ModifyIndex'>;

/** Nomad's prefix for services registered for allocations. */
export const ALLOC_SERVICE_PREFIX = '_nomad-task-';

/**
 * The workload a registration belongs to, as Nomad's WorkloadServices.Name(): the task's name for a task
 * service, `group-<group>` for a group service.
 */
export function workloadName(group: string, task?: string): string {
  return task ?? `group-${group}`;
}

/** Nomad's MakeAllocServiceID: `_nomad-task-<allocID>-<workload>-<service name>-<port label>`. */
export function makeAllocServiceId(allocId: string, workload: string, serviceName: string, portLabel: string): string {
  return `${ALLOC_SERVICE_PREFIX}${allocId}-${workload}-${serviceName}-${portLabel}`;
}

/** Whether two registrations say the same (indexes aside): an unchanged upsert is no change. */
export function sameRegistration(a: ServiceRegistrationInput, b: ServiceRegistrationInput): boolean {
  return (
    a.ID === b.ID && a.ServiceName === b.ServiceName && a.Namespace === b.Namespace && a.NodeID === b.NodeID &&
    a.Datacenter === b.Datacenter && a.JobID === b.JobID && a.AllocID === b.AllocID && a.Address === b.Address &&
    a.Port === b.Port && a.Tags.length === b.Tags.length && a.Tags.every((t, i) => t === b.Tags[i])
  );
}
