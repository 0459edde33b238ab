/** The spec and state data model, re-exported for src/ from machines/model.ts (the leaf every layer shares). */
export type {
  AllocSpec,
  AllocState,
  ClientStatus,
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
} from '../../machines/model.ts';
