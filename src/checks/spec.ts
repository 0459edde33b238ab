/**
 * The service and check blocks the checks runtime reads, until the job-spec parser's types
 * (src/jobspec/types.ts ServiceSpec, CheckSpec, CheckRestartSpec) are on this branch: the same shapes,
 * so an AllocSpec built with either type-checks against both.
 */
import type { AllocSpec, TaskSpec } from '../jobspec/types.ts';

/** How a check's result is judged during a deployment (Nomad's `on_update`). */
export type ServiceOnUpdate = 'require_healthy' | 'ignore_warnings' | 'ignore';

/** A check's `check_restart` block. Durations in ms. */
export interface CheckRestartSpec {
  limit: number;
  grace: number;
  ignoreWarnings: boolean;
}

/** One `check` block of a Nomad-provider service. Durations in ms. */
export interface CheckSpec {
  name: string;
  type: 'http' | 'tcp';
  port?: string;
  path?: string;
  method?: string;
  header?: Record<string, string[]>;
  body?: string;
  protocol?: 'http' | 'https';
  tlsSkipVerify?: boolean;
  interval: number;
  timeout: number;
  initialStatus?: 'passing' | 'warning' | 'critical';
  successBeforePassing: number;
  failuresBeforeCritical: number;
  checkRestart?: CheckRestartSpec;
  onUpdate: ServiceOnUpdate;
  addressMode?: 'host';
  task?: string;
}

/** One `service` block with provider "nomad". */
export interface ServiceSpec {
  name: string;
  provider: 'nomad';
  port?: string;
  tags?: string[];
  address?: string;
  addressMode: 'auto' | 'host';
  task?: string;
  onUpdate: ServiceOnUpdate;
  checks?: CheckSpec[];
}

/** The group's services (`alloc.services`). */
export const groupServicesOf = (alloc: AllocSpec): readonly ServiceSpec[] => (alloc as AllocSpec & { services?: ServiceSpec[] }).services ?? [];

/** A task's services (`task.services`). */
export const taskServicesOf = (task: TaskSpec): readonly ServiceSpec[] => (task as TaskSpec & { services?: ServiceSpec[] }).services ?? [];
