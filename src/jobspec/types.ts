/** The spec and state data model, re-exported for src/ from machines/model.ts (the leaf every layer shares). */
export type {
  AllocHookError,
  AllocSpec,
  AllocState,
  ClientStatus,
  DeploymentStatus,
  ExitResult,
  JobType,
  LifecycleHookName,
  LogConfig,
  RestartPolicy,
  TaskEvent,
  TaskLifecycle,
  TaskSpec,
  TaskState,
  TaskStatus,
  UpdateStrategy,
} from '../../machines/model.ts';
