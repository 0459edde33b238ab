/**
 * Nomad's group_services alloc runner hook (allocrunner/group_service_hook.go) for Nomad-native services:
 * the group's services are registered at prerun, updated in place on a job update, deregistered at preKill
 * (before the group's shutdown_delay, which the alloc runner waits out after this hook), re-registered
 * around a restart of the tasks, and removed at postrun and destroy. Interpolated from the bare allocation
 * env of each call, never a task's (PR #25373); the hook keeps the spec (data), never an env.
 */
import type { AllocSpec } from '../jobspec/types.ts';
import { registrationsOf, workloadName, type ServiceRegistry } from '../services/index.ts';
import type { AllocRunnerHook, HookEnv } from './types.ts';

/** The catalog writes the services hooks make. */
export type ServiceRegistrar = Pick<ServiceRegistry, 'sync' | 'deregisterWorkload'>;

export interface GroupServicesHookOptions {
  alloc: AllocSpec;
  registry: ServiceRegistrar;
  node: { id: string; datacenter: string };
  /** The allocation env for `alloc`, for the calls that are not handed one (restart, restore). */
  allocEnv: (alloc: AllocSpec) => HookEnv;
}

/** The group_services hook, with `restore()` for a runner resumed after an agent restart (its prerun is past). */
export interface GroupServicesHook extends AllocRunnerHook {
  /** Registers again what a restored, still running allocation had registered: `alloc` is its current spec. */
  restore(alloc: AllocSpec): void;
}

/** Builds the group_services hook of one allocation. */
export function groupServicesHook(opts: GroupServicesHookOptions): GroupServicesHook {
  let alloc = opts.alloc;
  // Nomad's prerun/deregistered flags: an update before prerun or after preKill registers nothing.
  let registered = false;
  const workload = () => workloadName(alloc.group);
  const register = (env: HookEnv) => {
    opts.registry.sync(alloc.id, workload(), registrationsOf({ alloc, workload: workload(), services: alloc.services ?? [], env, node: opts.node }));
    registered = true;
  };
  const deregister = () => {
    opts.registry.deregisterWorkload(alloc.id, workload());
    registered = false;
  };
  return {
    name: 'group_services',
    async prerun(allocEnv) {
      register(allocEnv);
    },
    async update(req) {
      alloc = req.alloc;
      if (registered) register(req.allocEnv);
    },
    async preKill() {
      deregister();
    },
    async preTaskRestart() {
      deregister();
      register(opts.allocEnv(alloc));
    },
    async postrun() {
      deregister();
    },
    async destroy() {
      deregister();
    },
    restore(current) {
      alloc = current;
      register(opts.allocEnv(alloc));
    },
  };
}
