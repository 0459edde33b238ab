/**
 * `createAllocRunner(spec, options)`: an allocation's actor (the alloc-runner machine with its task
 * runners) bound to drivers and hooks, with rxjs views of its state and events.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BehaviorSubject, Subject, map, throwError, type Observable } from 'rxjs';
import { createActor, type InspectionEvent, type Observer } from 'xstate';
import type { TaskRunnerActor } from '../../machines/task-runner.ts';
import type { CommandRejection } from '../../machines/task-runner.ts';
import { allocStateOf, runningNotKilling, type AllocCommandRejection, type AllocRunnerActor, type AllocRunnerContext, type AllocRunnerEvent } from '../../machines/alloc-runner.ts';
import type { HookPlan } from '../../machines/hook-calls.ts';
import { realClock, type Clock } from '../drivers/clock.ts';
import type { Controller, Driver, ExecSession, LogLine, LogOptions } from '../drivers/controller.ts';
import type { AllocRunnerHook, TaskHook, TaskLifecycle } from '../hooks/types.ts';
import type { AllocSpec, AllocState, TaskEvent, TaskSpec } from '../jobspec/types.ts';
import { hostEnvFor } from '../env/host-env.ts';
import { validateUnlessVouched } from './validated-specs.ts';
import { RAW_EXEC } from '../drivers/raw-exec/raw-exec-driver.ts';
import { execInRunningTask } from './exec-in-running-task.ts';
import { clearSupervisorFiles } from '../drivers/raw-exec/supervisor.ts';
import { localNodeInfo, nodeAttrsOf, type NodeInfo } from '../env/node-info.ts';
import { interpolateValue } from '../env/interpolate.ts';
import { buildTaskEnv, type TaskEnv } from '../env/task-env.ts';
import { allocDirHook } from '../hooks/alloc-dir-hook.ts';
import { artifactHook } from '../hooks/artifact-hook.ts';
import { dispatchPayloadHook } from '../hooks/dispatch-payload-hook.ts';
import type { ArtifactConfig } from '../artifacts/config.ts';
import { healthHook, watchesDeploymentHealth } from '../hooks/health-hook.ts';
import { groupServicesHook } from '../hooks/group-services-hook.ts';
import { servicesHook } from '../hooks/services-hook.ts';
import type { ServiceRegistry } from '../services/index.ts';
import { checksHook, countNomadChecks, hasNomadChecks, type ChecksHook } from '../hooks/checks-hook.ts';
import { CheckScheduler } from '../checks/scheduler.ts';
import { CheckStore } from '../checks/check-store.ts';
import type { CheckQuery, RawResult } from '../checks/checker.ts';
import type { AllocationResults } from '../checks/result.ts';
import { TaskEventType, taskEvent } from '../../machines/task-events.ts';
import { statsHook } from '../hooks/stats-hook.ts';
import { taskDirHook } from '../hooks/task-dir-hook.ts';
import { templateHook } from '../hooks/template-hook.ts';
import type { TaskClaim } from '../variables/job-access.ts';
import type { VariableSource } from '../variables/variable-source.ts';
import { validateHook } from '../hooks/validate-hook.ts';
import { allocHookPlanOf, providedAllocRunnerMachine } from './alloc-bindings.ts';
import { taskLifecycle, type LifecycleTarget } from './task-lifecycle.ts';
import { AllocStatsReporter, type AllocResourceUsage } from './alloc-stats.ts';
import { withDefaultDrivers } from './default-drivers.ts';
import { registerRunner, type RunnerBindings } from './runner-registry.ts';
import { straysSettled } from './stray-calls.ts';
import { upgradeAllocSnapshot } from './snapshot-upgrade.ts';
import { checkHookNames, hookPlanOf } from './task-bindings.ts';
import { taskLogs } from './task-logs.ts';

/** The commands a runner takes and the record of one it refused, for callers above the runtime. */
export type { AllocCommandRejection, AllocRunnerEvent, CommandRejection };

/** A command the alloc (unknown task, not running, restart under way) or one of its tasks (killing, complete) refused. */
export type RunnerRejection = AllocCommandRejection | CommandRejection;

export interface AllocRunnerOptions {
  /** Drivers by name; `mock` and `raw_exec` are always there unless replaced. */
  drivers?: Record<string, Driver>;
  /**
   * Task hooks, added after the built-in ones: one list for every task, or a list per task, built with
   * the task's lifecycle for hooks that restart or signal it later (Nomad hands hooks the task runner).
   */
  taskHooks?: TaskHook[] | ((task: TaskSpec, lifecycle: TaskLifecycle) => TaskHook[]);
  allocHooks?: AllocRunnerHook[];
  /** Where alloc dirs live; default: a directory under the OS temp dir. */
  dataDir?: string;
  /** The node, for `${node.*}`, `${attr.*}`, `${meta.*}`; default: this machine. */
  node?: NodeInfo;
  /** The agent environment tasks inherit (minus Nomad's credential denylist); default: this process's. */
  hostEnv?: NodeJS.ProcessEnv;
  clock?: Clock;
  /**
   * Wraps the clock the machines read and time with (drivers and hooks keep `clock`): a recording's
   * `machineClock` (recordInspection) goes here, so `allocrun replay --check` can reproduce the readings.
   */
  machineClock?: (clock: Clock) => Clock;
  inspect?: Observer<InspectionEvent> | ((ev: InspectionEvent) => void);
  /** Seed for restart jitter, for reproducible runs. */
  seed?: number;
  maxKillTimeout?: number;
  /**
   * The user the default raw_exec driver runs tasks as when they name none (a task's `user` wins); needs a
   * root process, else such tasks fail to start. Ignored when `drivers` replaces raw_exec.
   */
  taskUser?: string;
  /** The client's artifact limits (Nomad's `artifact` client block: http_read_timeout, http_max_size, ...). */
  artifacts?: Partial<ArtifactConfig>;
  /** The variables templates read (`nomadVar`), narrowed per task to what Nomad lets a task read. */
  variables?: { forTask(claim: TaskClaim): VariableSource };
  /** Nomad's client `template { wait }` for templates that set none (default 5s / 4m; zero turns it off). */
  templateWait?: { min: number; max: number };
  /**
   * The catalog Nomad-native services (`provider = "nomad"`) are registered in: with one, the allocation
   * runs the group_services and services hooks; without, its service blocks register nowhere. Templates
   * read it too (`nomadService`, `nomadServices`).
   */
  services?: ServiceRegistry;
  /**
   * The built-in hooks (validate, alloc_dir, task_dir, artifacts, stats) run before the caller's; turn them off
   * for pure simulations that must not touch the disk.
   */
  builtinHooks?: boolean;
  /**
   * A snapshot from `runner.persist()` of an earlier runtime: the allocation resumes where it was,
   * reattaching to live workloads through their driver handles; hooks that were running run again.
   */
  snapshot?: PersistedAllocRunner;
  /**
   * With no snapshot: an earlier runner of this same allocation may have started its tasks and died before
   * its first save (an agent killed right after a spawn). Their start records are kept, so each start
   * finds and adopts what that runner spawned instead of running the task a second time.
   */
  resume?: boolean;
  /**
   * Nomad service checks: the timer source and result store the agent shares across its allocations
   * (default: the runner's own), and the check runner (tests replace it).
   */
  checks?: { scheduler?: CheckScheduler; store?: CheckStore; runCheck?: (q: CheckQuery, signal: AbortSignal) => Promise<RawResult> };
}

/** What `persist()` returns: JSON-safe, to be handed back as `snapshot`. */
export type PersistedAllocRunner = { readonly __allocrun: 'alloc-runner'; readonly snapshot: unknown };

export interface AllocRunner {
  /** The root actor (allocRunnerMachine); its children are the task runners, by task name. */
  readonly actor: AllocRunnerActor;
  start(): AllocRunner;
  send(event: AllocRunnerEvent): void;
  getState(): AllocState;
  /** Every task event as it is appended, with its task's name. */
  readonly events$: Observable<{ task: string; event: TaskEvent }>;
  /** The alloc state, current value first. */
  readonly state$: Observable<AllocState>;
  /** Commands the alloc or a task could not apply (a task's own codes include ErrTaskKilling and the like). */
  readonly rejections$: Observable<RunnerRejection>;
  /** Latest resource usage per task and summed for the allocation (Nomad's AllocStatsReporter). */
  latestAllocStats(taskFilter?: string): AllocResourceUsage;
  readonly stats$: Observable<AllocResourceUsage>;
  /** The alloc actor's persisted snapshot (JSON-safe), for `createAllocRunner(spec, { snapshot })` after a restart. */
  persist(): PersistedAllocRunner;
  /** A task's output read back through its driver's `Controller.logs()`; `follow` ends once the task is dead. */
  logs(task: string, opts: LogOptions): Observable<LogLine>;
  /** The latest result of each Nomad service check, by check ID (Nomad's shape); empty when there are none. */
  checks(): AllocationResults;
  /**
   * Starts a command in a running task through its driver (Nomad's `alloc exec`, no tty); throws an
   * ExecRefusedError when the task has no live workload here or its driver cannot run commands.
   */
  execStreaming(task: string, command: string, args: string[], signal: AbortSignal): ExecSession;
  /** Resolves with the final AllocState once the allocation has run to the end (postrun done), shut down or been destroyed. */
  readonly done: Promise<AllocState>;
  stop(): void;
}


/**
 * The runner's persisted snapshot as XState gives it, not copied: for a writer that serialises it at once
 * (the agent's store), where `persist()`'s JSON copy would be a second serialisation of every save.
 */
export function persistedView(actor: AllocRunnerActor): PersistedAllocRunner {
  return { __allocrun: 'alloc-runner', snapshot: actor.getPersistedSnapshot() };
}

/** Builds (but does not start) the runner for one allocation; throws a SpecError for a spec that breaks the rules. */
export function createAllocRunner(spec: AllocSpec, opts: AllocRunnerOptions = {}): AllocRunner {
  // The same rules as job files, before anything touches the disk: ids and names become paths.
  validateUnlessVouched(spec);

  const clock = opts.clock ?? realClock;
  const node = opts.node ?? localNodeInfo();
  const hostEnv = hostEnvFor(opts.hostEnv ?? process.env);
  const allocDir = join(opts.dataDir ?? join(tmpdir(), 'allocrun'), 'allocs', spec.id);
  const drivers = withDefaultDrivers(opts.drivers, { taskUser: opts.taskUser });
  const stats = new AllocStatsReporter();
  const builtins = opts.builtinHooks !== false;
  const [validate, taskDir, artifacts, statsOf] = [validateHook(Object.keys(drivers)), taskDirHook(), artifactHook({ config: opts.artifacts, taskUser: opts.taskUser }), statsHook(stats)];
  const builtinTaskHooks: TaskHook[] = builtins ? [validate, taskDir, artifacts, statsOf] : [];
  // Hooks are built before the actor exists; a lifecycle reaches it once it does (see task-lifecycle.ts).
  let lifecycleTarget: LifecycleTarget | undefined;
  const lifecycleOf = (task: TaskSpec): TaskLifecycle => taskLifecycle(task.name, clock, () => lifecycleTarget);
  // Nomad's order: validate, task_dir, ..., artifacts, ..., template, ..., services, stats.
  const templateHooksOf = (t: TaskSpec): TaskHook[] =>
    builtins && t.templates && t.templates.length > 0
      ? [templateHook({
          task: t,
          namespace: spec.namespace ?? 'default',
          ...(spec.restart && { groupRestart: spec.restart }),
          lifecycle: lifecycleOf(t),
          clock,
          ...(opts.variables && { variables: opts.variables.forTask({ namespace: spec.namespace ?? 'default', job: spec.job, group: spec.group, task: t.name }) }),
          ...(opts.services && { services: opts.services }),
          ...(opts.templateWait && { defaultWait: opts.templateWait }),
          nodeAttrs: nodeAttrsOf(node),
        })]
      : [];
  // Nomad's services hooks, when there is a catalog: the group's at prerun, each task's once it runs.
  const allocEnvOf = (alloc: AllocSpec) => buildTaskEnv({ node, alloc, allocDir, hostEnv }).vars;
  const groupServices = opts.services && groupServicesHook({ alloc: spec, registry: opts.services, node, allocEnv: allocEnvOf });
  const serviceTaskHooks: TaskHook[] = opts.services ? [servicesHook({ alloc: spec, registry: opts.services, node })] : [];
  const userTaskHooks = (task: TaskSpec): TaskHook[] =>
    typeof opts.taskHooks === 'function' ? opts.taskHooks(task, lifecycleOf(task)) : opts.taskHooks ?? [];
  // A task's hooks are built once, like Nomad's task runner builds its hook list once.
  const taskHooks = new Map<string, TaskHook[]>();
  const taskHookPlans: Record<string, HookPlan> = {};
  for (const t of spec.tasks) {
    // Nomad's order: validate, task_dir, artifacts, template, stats, then services. Only a task with artifacts
    // gets the artifacts hook (Nomad's is Done at once without any): the others' hook plans, and so their
    // prestart and restore timing, stay as they were.
    const withArtifacts = (t.artifacts?.length ?? 0) > 0 ? [artifacts] : [];
    // Nomad's dispatch hook comes after task_dir; only tasks with a dispatch_payload block get it.
    const withPayload = t.dispatchPayload ? [dispatchPayloadHook(t.dispatchPayload.file, spec.payload)] : [];
    const builtinsOfTask = builtins ? [validate, taskDir, ...withPayload, ...withArtifacts, ...templateHooksOf(t), statsOf] : [];
    const hooks = [...builtinsOfTask, ...serviceTaskHooks, ...userTaskHooks(t)];
    checkHookNames(hooks, `task ${JSON.stringify(t.name)}`);
    taskHooks.set(t.name, hooks);
    taskHookPlans[t.name] = hookPlanOf(hooks);
  }
  const hooksFor = (task: TaskSpec): TaskHook[] => taskHooks.get(task.name) ?? builtinTaskHooks;
  const watchState = (listener: (state: AllocState) => void) => {
    const sub = state$.subscribe(listener);
    return () => sub.unsubscribe();
  };
  // Service checks run even without the disk-touching built-ins: they are about the tasks, not the disk.
  const checkStore = opts.checks?.store ?? new CheckStore();
  const checks: ChecksHook | undefined = hasNomadChecks(spec)
    ? checksHook({
        alloc: spec,
        clock,
        scheduler: opts.checks?.scheduler ?? new CheckScheduler(clock),
        store: checkStore,
        runCheck: opts.checks?.runCheck,
        lookupOf: (task, alloc) => {
          const t = task === undefined ? undefined : alloc.tasks.find((x) => x.name === task);
          return t ? taskEnvOf(t, alloc).lookup : buildTaskEnv({ node, alloc, allocDir, hostEnv }).lookup;
        },
        watch: watchState,
        restart: (task, reason) =>
          task !== undefined
            ? lifecycleOf(spec.tasks.find((t) => t.name === task) ?? spec.tasks[0]!).restart({ reason, failure: true })
            : actor.send({ type: 'RESTART', failure: true, event: taskEvent(TaskEventType.RestartSignal, clock.now(), { restartReason: reason }) }),
        // Status changes reach the machine's context, so the inspector shows them.
        report: (event) => actor.send(event),
      })
    : undefined;
  // Deployment health is the runner's own job (not a disk-touching built-in), so it runs even without them.
  const health = watchesDeploymentHealth(spec)
    ? [
        healthHook({
          update: spec.update,
          tasks: spec.tasks,
          clock,
          watch: watchState,
          report: ({ status, taskEvents }) => actor.send({ type: 'DEPLOYMENT_HEALTH', status, taskEvents }),
          checks: { count: countNomadChecks(spec), onUpdateOf: (id) => checks?.onUpdateOf(id) ?? 'require_healthy', watch: (listener) => checkStore.watch(spec.id, listener) },
          // A stop queued behind prerun or another update counts from when it is heard, not when the hooks hear it.
          latestAlloc: (): AllocSpec => {
            const ctx: AllocRunnerContext = actor.getSnapshot().context;
            return ctx.queuedUpdate ?? ctx.alloc;
          },
          current: (): AllocState => {
            const ctx: AllocRunnerContext = actor.getSnapshot().context;
            return allocStateOf(ctx);
          },
          deploymentId: spec.deploymentId,
        }),
      ]
    : [];
  // Nomad's order: the group services, then the checks of them, the health watcher reading what they find.
  const allocHooks = [...(builtins ? [allocDirHook(allocDir)] : []), ...(groupServices ? [groupServices] : []), ...(checks ? [checks] : []), ...health, ...(opts.allocHooks ?? [])];
  checkHookNames(allocHooks, `allocation ${spec.id}`);

  // A TaskEnv is an immutable value of (node, alloc, task). The driver's start needs it twice in one go
  // (config interpolation, then the process env), so the last one built is reused until the current
  // job ends; it is not kept beyond that, so a live allocation holds no env. Calls get fresh frozen copies.
  let lastEnv: { task: TaskSpec; alloc: AllocSpec; env: TaskEnv } | undefined;
  const taskEnvOf = (t: TaskSpec, alloc: AllocSpec = spec): TaskEnv => {
    if (lastEnv?.task === t && lastEnv.alloc === alloc) return lastEnv.env;
    const env = buildTaskEnv({ node, alloc, task: t, allocDir, taskDir: join(allocDir, t.name), hostEnv });
    if (!lastEnv) queueMicrotask(() => (lastEnv = undefined));
    lastEnv = { task: t, alloc, env };
    return env;
  };

  // One machine definition for every allocation: per-alloc data goes in as input, live objects are found
  // through the actor system (runner-registry.ts).
  const actor = createActor(providedAllocRunnerMachine, {
    id: spec.id,
    clock: opts.machineClock?.(clock) ?? clock,
    // Snapshots written before the task context was grouped are rewritten first (snapshot-upgrade.ts).
    ...(opts.snapshot ? { snapshot: upgradeAllocSnapshot(opts.snapshot.snapshot) as never } : {}),
    inspect: opts.inspect,
    input: { alloc: spec, hooks: allocHookPlanOf(allocHooks), taskHooks: taskHookPlans, seed: opts.seed, maxKillTimeout: opts.maxKillTimeout },
  });
  lifecycleTarget = {
    send: (event) => actor.send(event),
    taskRunner: (task) => actor.getSnapshot().children[task] as TaskRunnerActor | undefined,
  };
  const controllers = new Map<string, Controller>();
  const bindings: RunnerBindings = {
    allocId: spec.id,
    drivers,
    hooksFor,
    clock,
    allocDir,
    taskDirOf: (t) => join(allocDir, t.name),
    envFor: (t, hookEnv, alloc) => Object.freeze({ ...taskEnvOf(t, alloc).vars, ...hookEnv }),
    interpolate: (t, _hookEnv, alloc) => {
      // The env is built only if the config holds a `${...}` to resolve; most configs hold none.
      let env: TaskEnv | undefined;
      return { ...t, config: interpolateValue(t.config, (key) => (env ??= taskEnvOf(t, alloc)).lookup(key)) };
    },
    allocHooks,
    allocEnv: allocEnvOf,
    controllers,
    // Restored: each task's first start here may be one the dead runner made and never saved (task-bindings.ts).
    ...((opts.snapshot || opts.resume) && { resumedStarts: new Set(spec.tasks.map((t) => t.name)) }),
  };
  registerRunner(actor.system, bindings);

  const state$ = new BehaviorSubject<AllocState>(allocStateOf(actor.getSnapshot().context));
  const events$ = new Subject<{ task: string; event: TaskEvent }>();
  const rejections$ = new Subject<RunnerRejection>();
  const seen: Record<string, number> = {};
  let resolveDone!: (s: AllocState) => void;
  let rejectDone!: (e: unknown) => void;
  const done = new Promise<AllocState>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  // Rejected when the actor fails; a caller that never asks for `done` must not have that end the process.
  done.catch(() => undefined);
  actor.on('command.rejected', (e) => rejections$.next(e.rejection));
  // Most of the alloc's snapshots carry the same task states as the one before (the alloc steps on every
  // task-runner snapshot, most without news): only new states are looked through for new events.
  let lastTaskStates: AllocRunnerContext['taskStates'] | undefined;
  let ending = false;
  actor.subscribe({
    next: (snap) => {
      const ctx = snap.context;
      if (ctx.taskStates !== lastTaskStates) {
        lastTaskStates = ctx.taskStates;
        for (const task in ctx.taskStates) {
          const ts = ctx.taskStates[task]!;
          for (let i = seen[task] ?? 0; i < ts.events.length; i++) events$.next({ task, event: ts.events[i]! });
          seen[task] = ts.events.length;
        }
      }
      const current = state$.value;
      const changed =
        current.clientStatus !== ctx.clientStatus ||
        current.taskStates !== ctx.taskStates ||
        current.deploymentStatus !== ctx.deploymentStatus ||
        (current.hookErrors?.length ?? 0) !== ctx.hookErrors.length;
      if (changed) state$.next(allocStateOf(ctx));
      // (`terminal` is an atomic state of the root: its value is the string. `matches()` parses its argument
      // on each call, and this runs on every step of the alloc and of its tasks.)
      if ((snap.status === 'done' || snap.value === 'terminal') && !ending) {
        ending = true;
        const final = allocStateOf(ctx);
        // Not done while a hook call a kill cut short is still at work in its dirs (stray-calls.ts).
        const strays = straysSettled(bindings);
        if (strays) void strays.then(() => resolveDone(final));
        else resolveDone(final);
      }
    },
    error: (err) => rejectDone(err),
  });

  const runner: AllocRunner = {
    actor,
    start() {
      // A fresh runner owns no earlier start: supervisor files left in a reused alloc dir (same id, no
      // snapshot) must not be taken for this runner's own attempts.
      if (!opts.snapshot && !opts.resume) for (const t of spec.tasks) if (t.driver === RAW_EXEC) clearSupervisorFiles(join(allocDir, t.name));
      actor.start();
      // Resumed: the reducer runs again and running tasks re-run their restore hooks (see the machines).
      // Resuming with no snapshot is a restore from nothing: its tasks are marked so a kill before their
      // start first stops whatever the dead runner may have started (the machines' reaping step).
      if ((opts.snapshot || opts.resume) && actor.getSnapshot().status === 'active') actor.send({ type: 'RESTORED' });
      // Prerun is not run again on restore: the group's services are registered again here, as Nomad's
      // client re-syncs them, while the allocation runs and is not being killed.
      const restoredSnap = actor.getSnapshot();
      // (Only when its persisted hook plan has the hook: one from before it existed would never deregister.)
      const planned = restoredSnap.context.hooks.preKill?.includes(groupServices?.name ?? '') === true;
      if (opts.snapshot && groupServices && planned && restoredSnap.status === 'active' && runningNotKilling(restoredSnap)) groupServices.restore(restoredSnap.context.alloc);
      // Likewise its checks start again, for the allocation as it was last updated, and the health watcher
      // watches again if it had not reached a verdict (Nomad's prerun runs again on restore); each only when
      // the persisted plan calls it later, or nothing would stop it.
      if (opts.snapshot && restoredSnap.status === 'active' && runningNotKilling(restoredSnap)) {
        const inPlan = (name: string) => restoredSnap.context.hooks.preKill?.includes(name) === true || restoredSnap.context.hooks.postrun?.includes(name) === true;
        if (checks && inPlan(checks.name)) checks.resume(restoredSnap.context.alloc);
        if (!restoredSnap.context.deploymentStatus) for (const h of health) if (inPlan(h.name)) void h.prerun?.({}, new AbortController().signal);
      }
      // Task runners are children: their rejections reach the caller too.
      for (const t of spec.tasks) {
        const child = actor.getSnapshot().children[t.name] as TaskRunnerActor | undefined;
        child?.on('command.rejected', (e) => rejections$.next(e.rejection));
      }
      return runner;
    },
    send: (event) => actor.send(event),
    getState: () => allocStateOf(actor.getSnapshot().context),
    events$: events$.asObservable(),
    state$: state$.asObservable(),
    rejections$: rejections$.asObservable(),
    persist: () => JSON.parse(JSON.stringify(persistedView(actor))) as PersistedAllocRunner,
    latestAllocStats: (taskFilter) => stats.latest(taskFilter),
    stats$: stats.stats$,
    logs: (name, logOpts) => {
      const task = actor.getSnapshot().context.alloc.tasks.find((t) => t.name === name);
      const driver = task && drivers[task.driver];
      if (!task || !driver) return throwError(() => new TypeError(`allocation ${spec.id} has no task ${JSON.stringify(name)} with a known driver`));
      const ctx = { allocId: spec.id, env: {}, taskDir: join(allocDir, name), allocDir, logs: task.logs, clock };
      return taskLogs({ driver, task, ctx, dead$: state$.pipe(map((s) => s.taskStates[name]?.state === 'dead')) }, logOpts);
    },
    checks: () => checkStore.list(spec.id),
    execStreaming: (name, command, args, signal) => execInRunningTask(controllers.get(name), name, command, args, signal),
    done,
    stop: () => {
      actor.stop();
      checks?.halt();
    },
  };
  return runner;
}
