/** The service and check blocks the checks runtime reads (the job-spec's types), and where an allocation keeps them. */
import type { AllocSpec, ServiceSpec, TaskSpec } from '../jobspec/types.ts';

export type { CheckRestartSpec, CheckSpec, ServiceOnUpdate, ServiceSpec } from '../jobspec/types.ts';

/** The group's services. */
export const groupServicesOf = (alloc: AllocSpec): readonly ServiceSpec[] => alloc.services ?? [];

/** A task's services. */
export const taskServicesOf = (task: TaskSpec): readonly ServiceSpec[] => task.services ?? [];
