/**
 * Nomad's services task runner hook (taskrunner/service_hook.go) for Nomad-native services: a task's
 * services are registered once it runs (poststart, again on restore), updated in place on a job update,
 * and deregistered at preKilling (before the task's shutdown_delay, which the task runner waits out after
 * this hook), when the task exits and at stop. Interpolated from that task's own env, handed in per call
 * (PR #25373: one task's meta never resolves in another's services).
 */
import type { AllocSpec, TaskSpec } from '../jobspec/types.ts';
import { registrationsOf } from '../services/index.ts';
import type { ServiceRegistrar } from './group-services-hook.ts';
import type { HookEnv, TaskHook } from './types.ts';

export interface ServicesHookOptions {
  alloc: AllocSpec;
  registry: ServiceRegistrar;
  node: { id: string; datacenter: string };
}

/** Builds the services hook of one allocation's tasks (one instance serves every task; state is per task name). */
export function servicesHook(opts: ServicesHookOptions): TaskHook {
  let alloc = opts.alloc;
  // Tasks whose services are registered: an update of a task that is not running registers nothing.
  const registered = new Set<string>();
  const register = (task: TaskSpec, env: HookEnv) => {
    opts.registry.sync(alloc.id, task.name, registrationsOf({ alloc, workload: task.name, services: task.services ?? [], env, node: opts.node }));
    registered.add(task.name);
  };
  const deregister = (task: TaskSpec) => {
    opts.registry.deregisterWorkload(alloc.id, task.name);
    registered.delete(task.name);
  };
  return {
    name: 'services',
    async poststart(req) {
      register(req.task, req.env);
    },
    async update(req) {
      alloc = req.alloc;
      if (registered.has(req.task.name)) register(req.task, req.env);
    },
    async preKilling(req) {
      deregister(req.task);
    },
    async exited(req) {
      deregister(req.task);
    },
    async stop(req) {
      deregister(req.task);
    },
  };
}
