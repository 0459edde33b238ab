/** The spec and state data model, re-exported for src/ (machines/ owns the definitions so it stays pure). */
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
} from '../../machines/types.ts';
