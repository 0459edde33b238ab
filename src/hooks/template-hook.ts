/**
 * template: renders a task's `template` blocks into its directory (Nomad's taskrunner/template_hook.go and
 * template/template.go). Prestart blocks until every template has rendered once, each written only when all
 * the data it reads exists (a `Template` event says what is missing: `Missing: nomad.var.block(...)`); a kill
 * or shutdown meanwhile ends the wait and the hook returns without error. Once the task runs, the hook
 * watches the variables and services its templates read and renders again when they change, after the
 * templates' `wait` (quiescence) and a random `splay`, then acts per `change_mode`: a restart that is not a
 * failure, a signal, a script run in the task, or nothing. `env = true` templates feed the task env. On a
 * task restart templates render again only with `restart { render_templates = true }`.
 */
import { networkInterfaces } from 'node:os';
import { dirname } from 'node:path';
import { Subscription, type Observable } from 'rxjs';
import { realClock, type Clock } from '../drivers/clock.ts';
import type { RestartPolicy, TaskSpec, TemplateSpec } from '../jobspec/types.ts';
import type { HostAddress, TemplateScope, TemplateServices, TemplateVariables } from '../template/consul-template-funcs.ts';
import { parseEnvFile } from './template/env-file.ts';
import { renderTemplateFile, sandboxedReader, TemplateRenderError } from './template/render-template.ts';
import { HookError, type DriverExec, type HookEnv, type TaskHook, type TaskLifecycle } from './types.ts';

/** The task event type Nomad records for template messages. */
export const TEMPLATE_EVENT = 'Template';
/** The task event types Nomad records for a change_script's outcome (structs.TaskHookMessage, TaskHookFailed). */
const HOOK_MESSAGE_EVENT = 'Task hook message';
const HOOK_FAILED_EVENT = 'Task hook failed';
/** Nomad's restart reason for a re-rendered change_mode "restart" template. */
export const TEMPLATE_RESTART_REASON = 'Template with change_mode restart re-rendered';
/** Nomad's client default `template { wait { min max } }`, applied where a template sets none. */
export const DEFAULT_TEMPLATE_WAIT = { min: 5_000, max: 240_000 };
/** How often templates that read files look at them again (files have no change stream). */
export const FILE_POLL_MS = 1_000;
/** Nomad lists this many missing dependencies in its event, then "and N more". */
const MISSING_SHOWN = 3;

/** A stream of variable changes and the reads a task may make. */
export interface TemplateVariableSource extends TemplateVariables {
  readonly changes$: Observable<unknown>;
}

/** The service catalog with its change stream. */
export interface TemplateServiceSource extends TemplateServices {
  readonly changes$: Observable<unknown>;
}

/** What the template hook is given. */
export interface TemplateHookOptions {
  task: TaskSpec;
  /** The group's restart policy, for `render_templates` when the task has none of its own. */
  groupRestart?: RestartPolicy;
  /** The task's job namespace: the default for nomadVar and nomadService. */
  namespace: string;
  lifecycle: TaskLifecycle;
  clock?: Clock;
  /** The variables this task may read (the store narrowed to the task's implicit paths). */
  variables?: TemplateVariableSource;
  services?: TemplateServiceSource;
  /** The agent's default quiescence for templates without `wait`; `{ min: 0, max: 0 }` turns it off. */
  defaultWait?: { min: number; max: number };
  /** In [0, 1): the splay's random fraction (tests pin it). */
  random?: () => number;
  addresses?: () => HostAddress[];
  /**
   * The node's keys as Nomad's TaskEnv.NodeAttrs has them (`attr.unique.hostname`, `node.region`, `meta.rack`):
   * consul-template's `env` reads them beside the task's variables (Nomad sets its env to TaskEnv.All()).
   */
  nodeAttrs?: Readonly<Record<string, string>>;
}

/** The host's addresses, for sockaddr. */
function hostAddresses(): HostAddress[] {
  return Object.entries(networkInterfaces()).flatMap(([iface, list]) =>
    (list ?? []).map((a) => ({ iface, address: a.address, family: a.family === 'IPv6' ? ('IPv6' as const) : ('IPv4' as const), internal: a.internal })),
  );
}

/** `Missing: a, b, c, and 2 more`, as Nomad words it. */
export function missingMessage(missing: readonly string[]): string {
  const shown = missing.slice(0, MISSING_SHOWN).join(', ');
  return missing.length > MISSING_SHOWN ? `Missing: ${shown}, and ${missing.length - MISSING_SHOWN} more` : `Missing: ${shown}`;
}

/** What the hook keeps in its task's state once its templates have rendered. */
const RENDERED = Object.freeze({ rendered: 'true' });
const renderedBefore = (state: unknown): boolean => typeof state === 'object' && state !== null && (state as { rendered?: unknown }).rendered === 'true';

/** Builds the template hook of one task (its templates are in `opts.task.templates`). */
export function templateHook(opts: TemplateHookOptions): TaskHook {
  const clock = opts.clock ?? realClock;
  const templates = opts.task.templates ?? [];
  let manager: TemplateManager | undefined;
  let driverExec: DriverExec | undefined;
  // Whether the current manager's first render has finished and its watch begun: until one has in this process,
  // a task that rendered before (its state says so) was restored, whichever call (a re-run poststart, the
  // restore's prestart) renders.
  let watching = false;
  // Files a first render cut short had already rewritten: changes made while no agent watched, still to act on
  // (a restored runner re-runs its poststart call, and the restore's prestart stops it mid-render).
  let unacted: TemplateSpec[] = [];
  // Files a restored task's prestart rewrote before its start: the start uses them, unless it finds the workload
  // the dead agent had spawned with the old ones (poststart's `adopted`), which is then acted on.
  let staleIfAdopted: TemplateSpec[] = [];
  /** Stops the current manager; what its unfinished first render rewrote is acted on by the next one. */
  const replaceManager = (next: TemplateManager | undefined) => {
    if (manager && !watching) unacted = [...new Set([...unacted, ...manager.rewritten])];
    manager?.stop();
    manager = next;
    watching = false;
    staleIfAdopted = [];
  };
  /**
   * The first render's changes and those carried over, once; then the watch, acting on them when the task
   * runs already (restored beside its workload). Returns them.
   */
  const startWatching = (m: TemplateManager, changed: TemplateSpec[], actNow: boolean) => {
    const pending = [...new Set([...unacted, ...changed])];
    unacted = [];
    watching = true;
    m.watch(actNow ? pending : []);
    return pending;
  };

  return {
    name: 'template',
    async prestart(req, res, abort) {
      const renderOnRestart = (req.task.restart ?? opts.groupRestart)?.renderTemplates === true;
      if (manager && !manager.isStopped && !renderOnRestart) {
        // A restart keeps the running manager (Nomad's template hook): the env of its latest render.
        manager.setEnv(req.env);
        res.env = manager.envVars();
        return;
      }
      // A first render in this process of a task that rendered before: an agent restored it. A file that
      // changed while the agent was down is a change like any other when the task runs (Nomad's first render
      // acts only with a running task); a task yet to start simply starts with it.
      const restored = !watching && renderedBefore(req.previousState);
      const m = new TemplateManager(templates, req.taskDir, req.env, { ...opts, clock }, () => driverExec);
      replaceManager(m);
      const changed = await m.firstRender(abort);
      if (!changed) return; // killed or shut down while waiting: nothing more to do, and no error
      res.env = m.envVars();
      res.state = RENDERED;
      const pending = startWatching(m, changed, restored && req.running === true);
      if (restored && req.running !== true) staleIfAdopted = pending;
    },
    async poststart(req, abort) {
      driverExec = req.driverExec;
      const stale = staleIfAdopted;
      staleIfAdopted = [];
      if (manager && !manager.isStopped) {
        // Started by finding the workload the dead agent spawned before this process rendered: it has the old files.
        if (req.adopted === true && stale.length > 0) manager.actSoon(stale);
        return;
      }
      // Restored past its prestart (an agent that died while the task's poststart hooks ran): this hook never
      // rendered in this process. Render now, act on what changed while no agent watched, and watch.
      const local = req.env['NOMAD_TASK_DIR'];
      if (templates.length === 0 || !local) return;
      const m = new TemplateManager(templates, dirname(local), req.env, { ...opts, clock }, () => driverExec);
      replaceManager(m);
      const changed = await m.firstRender(abort);
      if (changed) startWatching(m, changed, true);
    },
    async update(req) {
      manager?.setEnv(req.env);
    },
    async stop() {
      replaceManager(undefined);
    },
    async shutdown() {
      replaceManager(undefined);
    },
  };
}

/** The templates of one task: first render, then watching and re-rendering until stopped. */
class TemplateManager {
  private env: Record<string, string>;
  private readonly subs = new Subscription();
  private stopped = false;
  private dirty = false;
  private wake: (() => void) | undefined;
  private readonly envByTemplate = new Map<TemplateSpec, Record<string, string>>();
  private readsFiles = false;
  private lastMissing = '';
  private readonly timers = new Set<unknown>();
  /** The templates whose file the first render rewrote, even if it was then cut short. */
  readonly rewritten: TemplateSpec[] = [];

  constructor(
    private readonly templates: readonly TemplateSpec[],
    private readonly taskDir: string,
    env: HookEnv,
    private readonly opts: TemplateHookOptions & { clock: Clock },
    private readonly exec: () => DriverExec | undefined,
  ) {
    this.env = { ...env, ...opts.nodeAttrs };
    const poke = () => this.poke();
    if (opts.variables) this.subs.add(opts.variables.changes$.subscribe(poke));
    if (opts.services) this.subs.add(opts.services.changes$.subscribe(poke));
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  setEnv(env: HookEnv): void {
    this.env = { ...env, ...this.opts.nodeAttrs };
  }

  /** The variables of the `env = true` templates, in template order. */
  envVars(): Record<string, string> {
    return Object.assign({}, ...this.templates.map((t) => this.envByTemplate.get(t) ?? {}));
  }

  stop(): void {
    this.stopped = true;
    this.subs.unsubscribe();
    for (const t of this.timers) this.opts.clock.clearTimeout(t);
    this.timers.clear();
    this.wake?.();
  }

  private poke(): void {
    this.dirty = true;
    this.wake?.();
  }

  private scope(): TemplateScope {
    return {
      env: this.env,
      namespace: this.opts.namespace,
      readFile: sandboxedReader(this.taskDir),
      now: () => new Date(this.opts.clock.now()),
      ...(this.opts.variables && { variables: this.opts.variables }),
      ...(this.opts.services && { services: this.opts.services }),
      addresses: this.opts.addresses ?? hostAddresses,
    };
  }

  /** Renders one template; its env file is read when it has one. */
  private async renderOne(t: TemplateSpec) {
    const result = await renderTemplateFile(t, this.taskDir, this.scope());
    if ([...result.used].some((d) => d.startsWith('file('))) this.readsFiles = true;
    if (result.content !== undefined && t.env) {
      try {
        this.envByTemplate.set(t, parseEnvFile(result.content));
      } catch (err) {
        throw new TemplateRenderError(`env template ${JSON.stringify(t.destination)}: ${(err as Error).message}`);
      }
    }
    return result;
  }

  /** Resolves on the next change (or file poll, or `ms`), or at once when one came since the last look. */
  private waitForChange(ms?: number): Promise<void> {
    if (this.dirty || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timers: unknown[] = [];
      const done = () => {
        for (const t of timers) {
          this.opts.clock.clearTimeout(t);
          this.timers.delete(t);
        }
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      const after = (delay: number, fn: () => void) => {
        const t = this.opts.clock.setTimeout(fn, delay);
        timers.push(t);
        this.timers.add(t);
      };
      if (this.readsFiles) after(FILE_POLL_MS, () => this.poke());
      if (ms !== undefined) after(ms, done);
    });
  }

  /**
   * Renders until every template has been written once: the templates whose file changed, or undefined
   * when stopped or aborted first. A template that fails (a parse error, a failing function) fails the
   * task, as Nomad's "Template failed".
   */
  async firstRender(abort: AbortSignal): Promise<TemplateSpec[] | undefined> {
    const onAbort = () => this.stop();
    abort.addEventListener('abort', onAbort, { once: true });
    try {
      const pending = new Set(this.templates);
      const changed: TemplateSpec[] = [];
      while (!this.stopped) {
        this.dirty = false;
        const missing: string[] = [];
        for (const t of [...pending]) {
          let result;
          try {
            result = await this.renderOne(t);
          } catch (err) {
            if (this.stopped) return undefined;
            if (err instanceof TemplateRenderError) throw new HookError(`Template failed: ${err.message}`, false, TEMPLATE_EVENT);
            throw err;
          }
          if (result.missing.length === 0) pending.delete(t);
          if (result.changed) {
            changed.push(t);
            this.rewritten.push(t);
          }
          else for (const m of result.missing) if (!missing.includes(m)) missing.push(m);
        }
        if (pending.size === 0) return this.stopped ? undefined : changed;
        const message = missingMessage(missing);
        if (message !== this.lastMissing) {
          this.lastMissing = message;
          this.opts.lifecycle.emit({ type: TEMPLATE_EVENT, message });
        }
        await this.waitForChange();
      }
      return undefined;
    } finally {
      abort.removeEventListener('abort', onAbort);
    }
  }

  /** Watches for changes in the background until stopped; first acts on `pending` (changed while the agent was down). */
  watch(pending: TemplateSpec[]): void {
    void this.loop(pending).catch((err: unknown) => {
      if (!this.stopped) this.opts.lifecycle.emit({ type: TEMPLATE_EVENT, message: `Template failed: ${(err as Error).message}` });
    });
  }

  /** Acts on `pending` (files the running workload has not seen) once the hook call asking has answered. */
  actSoon(pending: TemplateSpec[]): void {
    void this.actLater(pending).catch((err: unknown) => {
      if (!this.stopped) this.opts.lifecycle.emit({ type: TEMPLATE_EVENT, message: `Template failed: ${(err as Error).message}` });
    });
  }

  private async actLater(pending: TemplateSpec[]): Promise<void> {
    // After the restore's prestart has answered, so the task runner is back to running when asked.
    await this.sleep(1);
    if (!this.stopped) await this.act(pending);
  }

  private async loop(pending: TemplateSpec[]): Promise<void> {
    if (pending.length > 0) await this.actLater(pending);
    while (!this.stopped) {
      await this.waitForChange();
      if (this.stopped) return;
      await this.quiesce();
      if (this.stopped) return;
      this.dirty = false;
      const changed: TemplateSpec[] = [];
      for (const t of this.templates) {
        try {
          const result = await this.renderOne(t);
          if (result.changed) changed.push(t);
        } catch (err) {
          // Nomad kills the task; allocrun keeps the last good file and says why, and keeps watching.
          if (this.stopped) return;
          this.opts.lifecycle.emit({ type: TEMPLATE_EVENT, message: `Template failed: ${(err as Error).message}` });
        }
      }
      if (changed.length > 0 && !this.stopped) await this.act(changed);
    }
  }

  /** consul-template's quiescence: wait until `min` passes with no change, but no longer than `max`. */
  private async quiesce(): Promise<void> {
    const waits = this.templates.map((t) => ({ ...(this.opts.defaultWait ?? DEFAULT_TEMPLATE_WAIT), ...t.wait }));
    const min = Math.max(...waits.map((w) => w.min ?? 0));
    const max = Math.max(min, ...waits.map((w) => w.max ?? 0));
    if (min <= 0) return;
    const start = this.opts.clock.now();
    let last = start;
    for (;;) {
      this.dirty = false;
      const deadline = Math.min(last + min, start + max);
      const left = deadline - this.opts.clock.now();
      if (left <= 0 || this.stopped) return;
      await this.waitForChange(left);
      if (this.dirty) last = this.opts.clock.now();
    }
  }

  private async sleep(ms: number): Promise<void> {
    if (ms <= 0) return;
    await new Promise<void>((resolve) => {
      const t = this.opts.clock.setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
      const wasWake = this.wake;
      this.wake = () => {
        wasWake?.();
        if (this.stopped) resolve();
      };
    });
  }

  /** Nomad's handleTemplateRerenders: one restart covers all; else each signal once, then scripts. */
  private async act(changed: TemplateSpec[]): Promise<void> {
    const acting = changed.filter((t) => t.changeMode !== 'noop');
    if (acting.length === 0) return;
    const splay = Math.max(...acting.map((t) => t.splay));
    await this.sleep(Math.floor((this.opts.random ?? Math.random)() * splay));
    if (this.stopped) return;
    const { lifecycle } = this.opts;
    if (acting.some((t) => t.changeMode === 'restart')) {
      lifecycle.restart({ reason: TEMPLATE_RESTART_REASON, failure: false });
      return;
    }
    const signals = [...new Set(acting.filter((t) => t.changeMode === 'signal').map((t) => t.changeSignal!))];
    // One Signaling event per signal, saying why, as Nomad's template manager records it.
    for (const s of signals) lifecycle.signal(s, 'Template re-rendered');
    for (const t of acting.filter((x) => x.changeMode === 'script')) await this.runScript(t);
  }

  private async runScript(t: TemplateSpec): Promise<void> {
    const script = t.changeScript!;
    const { lifecycle } = this.opts;
    const exec = this.exec();
    // Nomad's events and words (processScript): `%v` of the args is Go's `[a b]`.
    const args = `[${script.args.join(' ')}]`;
    const fail = (message: string) => {
      lifecycle.emit({ type: HOOK_FAILED_EVENT, message });
      // Nomad kills the task here; a task lifecycle restarts it as a failure, counted by the restart policy.
      if (script.failOnError) lifecycle.restart({ reason: 'Template script failed, task is being restarted', failure: true });
    };
    const failedToRun = (why: string, code: number) => fail(`Template failed to run script ${script.command} with arguments ${args} on change: ${why}. Exit code: ${code}`);
    if (!exec) return failedToRun("the task's driver cannot run commands in it", 0);
    const abort = new AbortController();
    try {
      const result = await exec.exec(script.command, script.args, { timeout: script.timeout }, abort.signal);
      if (result.exitCode !== 0) return fail(`Template ran script ${script.command} with arguments ${args} on change but it exited with code: ${result.exitCode}`);
      lifecycle.emit({ type: HOOK_MESSAGE_EVENT, message: `Template successfully ran script ${script.command} with arguments: ${args}. Exit code: 0` });
    } catch (err) {
      failedToRun((err as Error).message, -1);
    }
  }
}
