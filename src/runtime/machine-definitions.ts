/**
 * The runner statecharts by the names the CLI and the visualizer use, so layers above the runtime can
 * draw a machine without importing machines/ themselves (STYLE.md's import direction).
 */
import type { AnyStateMachine } from 'xstate';
import { allocRunnerMachine } from '../../machines/alloc-runner.ts';
import { taskManagerMachine } from '../../machines/task-manager.ts';
import { taskRunnerMachine } from '../../machines/task-runner.ts';

/** The names `allocrun graph` takes. */
export type MachineName = 'task' | 'alloc' | 'controller';

/** The definition of a runner machine: the task runner, the alloc runner, or SwarmKit's task manager loop. */
export function machineDefinition(name: MachineName): AnyStateMachine {
  const machines: Record<MachineName, unknown> = { task: taskRunnerMachine, alloc: allocRunnerMachine, controller: taskManagerMachine };
  return machines[name] as AnyStateMachine;
}
