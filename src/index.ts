/** `allocrun`: the public surface (shared/CONTRACT.md). */
export type * from './spec/types.ts';
export { createTaskRunner, type TaskRunner, type TaskRunnerOptions } from './runtime/create-task-runner.ts';
export { createAllocRunner, type AllocRunner, type AllocRunnerOptions, type PersistedAllocRunner } from './runtime/create-alloc-runner.ts';
export type { AllocRunnerEvent, AllocCommandRejection } from '../machines/alloc-runner.ts';
export { AllocStatsReporter, type AllocResourceUsage } from './runtime/alloc-stats.ts';
export type { TaskRunnerEvent, CommandRejection } from '../machines/task-runner.ts';
export { TaskEventType } from '../machines/task-events.ts';
export { HookError } from './hooks/types.ts';
export type {
  TaskHook, AllocRunnerHook, HookEnv, TaskPrestartRequest, TaskPrestartResponse, TaskPoststartRequest,
  TaskExitedRequest, TaskUpdateRequest, TaskStopRequest,
} from './hooks/types.ts';
export type {
  Controller, Driver, DriverContext, DriverHandle, ShutdownOptions, ResourceUsage, LogLine, LogOptions,
  ContainerStatus, PortStatus,
} from './drivers/controller.ts';
export { realClock, type Clock } from './drivers/clock.ts';
export { createMockDriver } from './drivers/mock/mock-driver.ts';
export { parseDuration, DurationError } from './spec/duration.ts';
