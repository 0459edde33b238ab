/** `allocrun/machines`: the pure statecharts and the pure units they are built from. No I/O. */
export * from './model.ts';
export { taskRunnerMachine, type TaskRunnerActor, type TaskRunnerMachine } from './task-runner.ts';
export type { TaskNews } from './task-news.ts';
export type {
  TaskRunnerContext, TaskRunnerEvent, TaskRunnerInput, CommandRejection, PrestartHookState,
  DriverCallInput, DriverShutdownInput, DriverStartOutput, DriverHandleData, TaskRunnerEmitted,
} from './task-runner-types.ts';
export { hookActorId, type HookCallInput, type HookCallOutput, type HookPlan, type TaskHookPhase } from './hook-calls.ts';
export { hookPhase, hookLoopGuards, hookLoopActions, currentHook, type HookLoopContext, type HookPhaseOptions, type PhaseParams } from './hook-phase.ts';
export { TaskEventType, taskEvent, newTaskState, appendEvent } from './task-events.ts';
export * from './restart-tracker.ts';
export { clockNow, sleepUntil } from './clock.ts';
export { allocRunnerMachine, allocStateOf, clientStatusOf, type AllocRunnerMachine } from './alloc-runner.ts';
export type {
  AllocRunnerContext, AllocRunnerEvent, AllocRunnerInput, AllocRunnerActor, AllocHookPhase, AllocHookPlan,
  AllocHookCallInput, AllocCommandRejection,
} from './alloc-runner.ts';
export * from './coordinator.ts';
export { reduceTaskStates, isLive, type ReducerInput, type ReducerEffects } from './task-state-reducer.ts';
export { taskManagerMachine, fromStep, DEFAULT_TASK_RETRY_DELAY, retryDelayOf, tasksEqualStable } from './task-manager.ts';
export type {
  ManagedTask, TaskManagerInput, TaskManagerContext, TaskManagerEvent, TaskManagerEmitted, TaskManagerOutcome,
  TaskManagerStepInput, TaskManagerStepOutput, TaskManagerBackoff, UpdateRejection, UpdateIgnoredReason, StepFailure,
  TaskManagerActor, TaskManagerStepCommand, TaskManagerStepReport, TaskManagerStepFn,
} from './task-manager.ts';
