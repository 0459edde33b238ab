/**
 * The shared vocabulary of allocrun (Nomad's structs, TypeScript-shaped): what runs (AllocSpec, TaskSpec,
 * RestartPolicy), what is reported (TaskState, TaskEvent, AllocState), durations and Nomad's defaults.
 *
 * A leaf: it imports nothing. The job-file loader, the drivers and the machines all import it, so none of
 * them needs another's code to agree on a spec. Values here are plain JSON data: they live in machine
 * context, are persisted and are shown by the inspector.
 */

export type JobType = 'service' | 'batch' | 'system' | 'sysbatch';

/** Nomad's restart block. Durations are milliseconds. */
export interface RestartPolicy {
  attempts: number;
  interval: number;
  delay: number;
  mode: 'fail' | 'delay';
  /** Nomad's `render_templates`: templates are rendered again (from current data) before each restart. */
  renderTemplates?: boolean;
}

export type LifecycleHookName = 'prestart' | 'poststart' | 'poststop';

/** A task's `lifecycle` block; absent means a main task. */
export interface TaskLifecycle {
  hook: LifecycleHookName;
  sidecar?: boolean;
}

export interface LogConfig {
  maxFiles: number;
  maxFileSize: number;
}

/** One task of an allocation, as the runner needs it. Durations are milliseconds. */
export interface TaskSpec {
  name: string;
  driver: string;
  config: Record<string, unknown>;
  env?: Record<string, string>;
  meta?: Record<string, string>;
  leader?: boolean;
  lifecycle?: TaskLifecycle;
  restart?: RestartPolicy;
  killTimeout?: number;
  killSignal?: string;
  shutdownDelay?: number;
  logs?: LogConfig;
  resources?: Record<string, unknown>;
  /** Nomad's task `user`: the account raw_exec runs the task as (the agent must be root to switch). */
  user?: string;
  /** The task's `artifact` blocks, fetched into its directory before it starts (Nomad's Task.Artifacts). */
  artifacts?: ArtifactSpec[];
  /** The task's `service` blocks (Nomad-native provider), registered while the task runs. */
  services?: ServiceSpec[];
  /** The task's `template` blocks, rendered into its directory before it starts and again when their data changes. */
  templates?: TemplateSpec[];
  /** Nomad's `dispatch_payload`: a dispatched job's payload is written to `local/<file>` before the task starts. */
  dispatchPayload?: { file: string };
}

/** What a template does when a re-render changes its output (Nomad's `change_mode`). */
export type TemplateChangeMode = 'noop' | 'restart' | 'signal' | 'script';

/**
 * One `template` block (Nomad's Template), normalised with Nomad's defaults. Durations are milliseconds;
 * paths are relative to the task dir (an absolute one is taken inside it, as Nomad joins it).
 */
export interface TemplateSpec {
  /** The template text (Nomad's EmbeddedTmpl, `data`); absent when it is read from `source`. */
  data?: string;
  /** A template file inside the task dir (e.g. one an artifact fetched), read at each render. */
  source?: string;
  destination: string;
  changeMode: TemplateChangeMode;
  /** The signal `changeMode: 'signal'` sends, e.g. `SIGHUP`. */
  changeSignal?: string;
  /** What `changeMode: 'script'` runs inside the task. */
  changeScript?: { command: string; args: string[]; timeout: number; failOnError: boolean };
  /** A random delay up to this long before acting on a change (default 5s). */
  splay: number;
  /** Octal file mode of the rendered file, e.g. `0644`. */
  perms: string;
  uid?: number;
  gid?: number;
  leftDelim: string;
  rightDelim: string;
  /** Read the rendered `KEY=value` lines into the task's environment. */
  env: boolean;
  /** A missing map key fails the render (Go's missingkey=error). */
  errMissingKey: boolean;
  /** Quiescence before a re-render: at least `min` after the last change, at most `max` after the first (absent parts: the agent's). */
  wait?: { min?: number; max?: number };
}

/** go-getter's client modes: `file` writes the destination as a file, `dir` as a directory, `any` lets the source decide. */
export type ArtifactMode = 'any' | 'file' | 'dir';

/**
 * One `artifact` block (Nomad's TaskArtifact), normalised: `destination` is always set (relative to the task
 * dir); `source`, `options`, `headers` and `destination` may hold `${...}` that the hook interpolates.
 */
export interface ArtifactSpec {
  /** go-getter's source: an http(s) URL, an absolute path or a file:// URL. */
  source: string;
  /** Where it lands, relative to the task dir: `local/` by default (`local/<file>` in file mode). */
  destination: string;
  mode: ArtifactMode;
  /** go-getter's URL options: `checksum = "sha256:..."`, `archive = false`, other query parameters. */
  options?: Record<string, string>;
  /** HTTP request headers. */
  headers?: Record<string, string>;
  /** Nomad's GetterInsecure: skip TLS certificate checks. */
  insecure?: boolean;
  /** Give the fetched files to the task's user (needs a root agent). */
  chown?: boolean;
}

/** One instance of a task group: what an alloc runner runs. */
export interface AllocSpec {
  id: string;
  job: string;
  group: string;
  type: JobType;
  namespace?: string;
  meta?: Record<string, string>;
  restart?: RestartPolicy;
  shutdownDelay?: number;
  tasks: TaskSpec[];
  /** What the server wants: `stop` and `evict` make the allocation server-terminal (its tasks never start). */
  desiredStatus?: 'run' | 'stop' | 'evict';
  /** Nomad's AllocModifyIndex: an older update never displaces a newer one. */
  modifyIndex?: number;
  /** The allocation's place among its group's (Nomad's alloc name is `job.group[index]`); set by the agent. */
  index?: number;
  /** The group's update block: allocations with one report deployment health (AllocState.deploymentStatus). */
  update?: UpdateStrategy;
  /**
   * The deployment the allocation counts in (Nomad's DeploymentID), when its job version has one: an update that
   * moves it to another clears its health verdict, and its health is watched anew.
   */
  deploymentId?: string;
  /**
   * Placed as a canary of its deployment and not yet promoted (Nomad's DeploymentStatus.Canary): its services
   * register with their `canary_tags`; the promotion's update clears it.
   */
  canary?: boolean;
  /** The group's `network` block: the ports it asks for (host networking mode only). */
  network?: NetworkAsk;
  /** The ports the scheduler gave this allocation when it placed it (Nomad's AllocatedResources.Shared.Ports). */
  ports?: AllocatedPort[];
  /** The group's `service` blocks (Nomad-native provider), registered while the allocation's tasks run. */
  services?: ServiceSpec[];
  /** The job's ParentID: the periodic or parameterized job that launched this allocation's job (NOMAD_JOB_PARENT_ID). */
  parentJob?: string;
  /** A dispatched job's payload, base64 (Nomad's Job.Payload): what tasks with `dispatchPayload` are given. */
  payload?: string;
}

/** How a service or check update is judged during a deployment (Nomad's `on_update`). */
export type ServiceOnUpdate = 'require_healthy' | 'ignore_warnings' | 'ignore';

/** A check's `check_restart` block (inherited from its service's): restart the task after `limit` failures. Durations in ms. */
export interface CheckRestartSpec {
  /** Consecutive failed checks before a restart; 0 never restarts. */
  limit: number;
  /** Failures within this long of a (re)start are not counted. */
  grace: number;
  ignoreWarnings: boolean;
}

/** One `check` block of a service (Nomad's ServiceCheck, the kinds the Nomad provider runs). Durations in ms. */
export interface CheckSpec {
  /** As written, or Nomad's default `service: "<service>" check`. */
  name: string;
  type: 'http' | 'tcp';
  /** A port label of the group's network block, or a port number; absent: the service's port. */
  port?: string;
  /** HTTP checks: the request path (relative), method (GET), headers, body and scheme. */
  path?: string;
  method?: string;
  header?: Record<string, string[]>;
  body?: string;
  protocol?: 'http' | 'https';
  tlsSkipVerify?: boolean;
  interval: number;
  timeout: number;
  /** The status before the first result (Nomad's default for Nomad checks: pending, shown as critical). */
  initialStatus?: 'passing' | 'warning' | 'critical';
  /** Consecutive successes before the check turns passing (0: the first). */
  successBeforePassing: number;
  /** Consecutive failures before the check turns critical (0: the first). */
  failuresBeforeCritical: number;
  checkRestart?: CheckRestartSpec;
  onUpdate: ServiceOnUpdate;
  addressMode?: 'host';
  /** The task a group service's check belongs to. */
  task?: string;
}

/** One `service` block (Nomad's Service with provider "nomad"), names and tags still uninterpolated. */
export interface ServiceSpec {
  /** As written (`${JOB}`, `${TASKGROUP}`, `${TASK}`, `${BASE}` already replaced), or Nomad's default name. */
  name: string;
  provider: 'nomad';
  /** A port label of the group's network block, or a port number. */
  port?: string;
  tags?: string[];
  canaryTags?: string[];
  meta?: Record<string, string>;
  canaryMeta?: Record<string, string>;
  /** An explicit address to register instead of the port's host address. */
  address?: string;
  addressMode: 'auto' | 'host';
  /** A group service: the task whose checks these are (Nomad's `task`). */
  task?: string;
  onUpdate: ServiceOnUpdate;
  checks?: CheckSpec[];
}

/** One `port "label" {}` of a group's network block: dynamic unless `static` is given. */
export interface PortAsk {
  label: string;
  /** A fixed host port (Nomad's ReservedPorts); absent: one from the node's dynamic range. */
  static?: number;
  /** Nomad's `to`: the port the task is told to use (NOMAD_PORT_<label>) when greater than 0. */
  to?: number;
}

/** A group's network block (Nomad's NetworkResource ask); allocrun runs host mode only. */
export interface NetworkAsk {
  mode: 'host';
  ports: PortAsk[];
}

/** A port an allocation holds on the host (Nomad's AllocatedPortMapping). */
export interface AllocatedPort {
  label: string;
  /** The host port. */
  value: number;
  /** Nomad's `to` (0 when not set). */
  to: number;
  /** The host address the port is reached at. */
  hostIP: string;
}

/** A host path a prestart hook mounts into the task (Nomad's MountConfig). */
export interface TaskMount {
  hostPath: string;
  taskPath: string;
  readOnly?: boolean;
}

/** A host device a prestart hook exposes to the task (Nomad's DeviceConfig). */
export interface TaskDevice {
  hostPath: string;
  taskPath: string;
}

/** Nomad's update block, as far as the client uses it. Durations are milliseconds. */
export interface UpdateStrategy {
  /** How long every task must have been running, unbroken, to count as healthy (Nomad's default 10s). */
  minHealthyTime: number;
  /** Healthy by then, or unhealthy (Nomad's default 5m). */
  healthyDeadline: number;
  /** `manual`: the operator sets health, no watcher runs. `checks` without service checks is `task_states`. */
  healthCheck?: 'checks' | 'task_states' | 'manual';
}

/** Whether the server wants the allocation stopped (Nomad's ServerTerminalStatus: desired stop or evict). */
export function isServerTerminal(alloc: Pick<AllocSpec, 'desiredStatus'>): boolean {
  return alloc.desiredStatus === 'stop' || alloc.desiredStatus === 'evict';
}

/** A task event with Nomad's type strings; `time` is milliseconds on the runner's clock. */
export interface TaskEvent {
  type: string;
  time: number;
  message?: string;
  displayMessage: string;
  details?: Record<string, string>;
  failsTask?: boolean;
  exitCode?: number;
  signal?: number;
  restartReason?: string;
  startDelay?: number;
  killTimeout?: number;
}

export type TaskStatus = 'pending' | 'running' | 'dead';

/** Nomad's TaskState. Every event is kept (no ring of 10); views may truncate. */
export interface TaskState {
  state: TaskStatus;
  failed: boolean;
  restarts: number;
  lastRestart?: number;
  startedAt?: number;
  finishedAt?: number;
  events: TaskEvent[];
}

/** How a workload ended, as a driver reports it. */
export interface ExitResult {
  exitCode: number;
  /** Signal number that ended the process, 0 if none. */
  signal: number;
  oomKilled?: boolean;
  /** A driver-level error message, if the exit was not a plain process exit. */
  err?: string;
  /**
   * The agent had begun to stop the workload (kill signal sent) when it died, and the exit was found by
   * the next agent: the end of a kill the restored snapshot may not show.
   */
  stoppedByAgent?: boolean;
  /** With stoppedByAgent: the stop was a restart the dead agent had begun, not a kill. */
  stoppedFor?: 'restart';
}

export type ClientStatus = 'pending' | 'running' | 'complete' | 'failed';

/** Nomad's AllocDeploymentStatus, as the client sets it: the health verdict and when it was reached. */
export interface DeploymentStatus {
  healthy: boolean;
  /** On the runner's clock (ms). */
  timestamp: number;
}

/** An alloc hook that failed: the phase, the hook and its error. */
export interface AllocHookError {
  phase: string;
  hook: string;
  message: string;
}

/** What an alloc runner reports: Nomad's client status and every task's state. */
export interface AllocState {
  clientStatus: ClientStatus;
  taskStates: Record<string, TaskState>;
  /** Set once the health_watcher reached a verdict (allocations with an update block). */
  deploymentStatus?: DeploymentStatus;
  /** Alloc hooks that failed (prerun, postrun, destroy, ...), in order; absent when none did. */
  hookErrors?: AllocHookError[];
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const BATCH_RESTART: RestartPolicy = Object.freeze({ attempts: 3, interval: 24 * HOUR, delay: 15_000, mode: 'fail' });
const SERVICE_RESTART: RestartPolicy = Object.freeze({ attempts: 2, interval: 30 * MINUTE, delay: 15_000, mode: 'fail' });

/**
 * Nomad's default restart block for a job type (durations in ms): service/system 2/30m/15s, batch 3/24h/15s.
 * One frozen value per kind, shared by every task that uses it (it sits in each task runner's context).
 */
export const defaultRestartPolicy = (jobType: JobType): RestartPolicy =>
  jobType === 'batch' || jobType === 'sysbatch' ? BATCH_RESTART : SERVICE_RESTART;

/** Nomad's default kill_timeout, in ms. */
export const DEFAULT_KILL_TIMEOUT = 5_000;
/** The client's default max_kill_timeout: no task waits longer than this for its workload to exit, in ms. */
export const DEFAULT_MAX_KILL_TIMEOUT = 30_000;
/** Nomad's default kill_signal. */
export const DEFAULT_KILL_SIGNAL = 'SIGINT';

/** How long a task's workload gets between its kill signal and the force kill: its kill_timeout, capped by the client. */
export function killTimeoutOf(task: Pick<TaskSpec, 'killTimeout'>, maxKillTimeout = DEFAULT_MAX_KILL_TIMEOUT): number {
  return Math.min(task.killTimeout ?? DEFAULT_KILL_TIMEOUT, maxKillTimeout);
}

/*
 * Durations. Go's `time.Duration.String()` for millisecond values, so messages that Nomad formats with `%v`
 * (restart reasons, for one) read the same here: `15s`, `30m0s`, `24h0m0s`, `1.5s`, `250ms`, `0s`.
 */

const NS_PER_MS = 1_000_000n;

/**
 * Formats milliseconds the way Go prints a `time.Duration` (e.g. 1800000 → "30m0s", 1500 → "1.5s").
 * Sub-nanosecond parts are rounded away, as a Go duration cannot hold them; non-finite input is printed as is.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  // Whole nanoseconds as a bigint: Go works on an int64 of nanoseconds, and 2^53 ns is only ~104 days.
  const whole = Math.trunc(ms);
  const ns = BigInt(whole) * NS_PER_MS + BigInt(Math.round((ms - whole) * 1e6));
  if (ns === 0n) return '0s';
  const sign = ns < 0n ? '-' : '';
  const u = ns < 0n ? -ns : ns;

  // Under a second Go switches to the largest unit that keeps the integer part non-zero.
  if (u < 1_000n) return `${sign}${u}ns`;
  if (u < 1_000_000n) return `${sign}${fraction(u, 3)}µs`;
  if (u < 1_000_000_000n) return `${sign}${fraction(u, 6)}ms`;

  // From a second up, Go always prints seconds, then minutes and hours once they are non-zero.
  const seconds = fraction(u % 60_000_000_000n, 9);
  const totalMinutes = u / 60_000_000_000n;
  if (totalMinutes === 0n) return `${sign}${seconds}s`;
  const minutes = totalMinutes % 60n;
  const hours = totalMinutes / 60n;
  if (hours === 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${hours}h${minutes}m${seconds}s`;
}

/** `v / 10^digits` with the fraction's trailing zeros (and a bare point) dropped, like Go's fmtFrac. */
function fraction(v: bigint, digits: number): string {
  const scale = 10n ** BigInt(digits);
  const int = v / scale;
  const frac = (v % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return frac === '' ? `${int}` : `${int}.${frac}`;
}

/** A service check's latest status as the alloc runner keeps it: told only when the status changes. */
export interface AllocCheckStatus {
  name: string;
  service: string;
  /** The task of a task-level service; absent for a group service. */
  task?: string;
  /** Nomad's check status: pending, success, failure (or warning). */
  status: string;
  /** The check's output, cut to CHECK_OUTPUT_LIMIT characters . */
  output: string;
  /** When the status was seen (clock milliseconds). */
  time: number;
}

/**
 * What the checks hook tells the alloc runner (as events): a check's status changed or was first seen, or
 * checks stopped for good (an update removed them, preKill purged them). Here rather than with the alloc
 * runner's events because the hook, outside the runtime, may import only this file of the machines.
 */
export type AllocCheckReport = { type: 'CHECK_STATUS'; check: AllocCheckStatus & { id: string } } | { type: 'CHECKS_REMOVED'; ids: string[] };

/** Characters of a check's output kept in the alloc runner's context and in its CHECK_STATUS event. */
export const CHECK_OUTPUT_LIMIT = 200;

/** Cuts a check's output to CHECK_OUTPUT_LIMIT characters, marking the cut. */
export function checkOutputOf(output: string): string {
  return output.length > CHECK_OUTPUT_LIMIT ? `${output.slice(0, CHECK_OUTPUT_LIMIT - 1)}…` : output;
}
