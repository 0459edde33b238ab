/**
 * What the task runner hands its driver actors: plain data from the context, so a provided driver (real or
 * stub) needs nothing else. Kept beside the machine to leave its file the diagram and the states.
 */
import type { DriverCallInput, TaskRunnerContext } from './task-runner-types.ts';

/** Input of driver:wait, driver:shutdown, driver:signal and driver:recover: the task and its workload's handle. */
export const driverInput = ({ context }: { context: TaskRunnerContext }): DriverCallInput => ({
  allocId: context.settings.allocId,
  task: context.task,
  hookEnv: context.hookEnv,
  handle: context.run.handle,
});

/**
 * Input of driver:start: which start this is (stable across an agent crash, so a repeated start finds the
 * process the first one spawned) and the prestart hooks' mounts and devices.
 */
export const startInput = ({ context }: { context: TaskRunnerContext }): DriverCallInput => ({
  allocId: context.settings.allocId,
  task: context.task,
  hookEnv: context.hookEnv,
  attempt: context.run.attempt,
  ...hookResourcesOf(context.hookStates),
});

/** Every prestart hook's mounts and devices, in hook order (Nomad's hookResources). */
function hookResourcesOf(hookStates: TaskRunnerContext['hookStates']): Pick<DriverCallInput, 'mounts' | 'devices'> {
  const states = Object.values(hookStates);
  const mounts = states.flatMap((h) => h.mounts ?? []);
  const devices = states.flatMap((h) => h.devices ?? []);
  return { ...(mounts.length > 0 && { mounts }), ...(devices.length > 0 && { devices }) };
}
