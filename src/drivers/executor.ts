/**
 * SwarmKit's executor side of the contract (agent/exec/executor.go and the log interfaces of controller.go):
 * the factory of controllers, the log sinks, and the secret/config stores controllers read through a
 * DependencyGetter. A controller itself is `Controller` in controller.ts.
 */
import type { Controller, LogLine, LogOptions } from './controller.ts';
import type { SwarmTask } from './task-status.ts';

/** What a node offers (SwarmKit's NodeDescription, trimmed to what an executor can report). */
export interface NodeDescription {
  hostname?: string;
  platform?: { architecture: string; os: string };
  resources?: { nanoCpus?: number; memoryBytes?: number };
  engine?: { engineVersion?: string; labels?: Record<string, string>; plugins?: { type: string; name: string }[] };
}

/** The node object the manager hands the agent, propagated to the executor by `configure`. */
export interface NodeInfo {
  id: string;
  description?: NodeDescription;
  labels?: Record<string, string>;
}

/** A symmetric key the manager distributes for the overlay network's encryption. */
export interface EncryptionKey {
  subsystem: string;
  algorithm: string;
  key: Uint8Array;
  lamportTime: number;
}

/** Provides controllers for tasks, one per task, and describes the node it runs on. */
export interface Executor {
  /** The node's description, reported to the manager. */
  describe(signal: AbortSignal): Promise<NodeDescription>;
  /** Propagates the manager's node object to the executor. */
  configure(node: NodeInfo, signal: AbortSignal): Promise<void>;
  /** A controller for the task, with no side effects; throws ErrRuntimeUnsupported if nothing can run it. */
  controller(task: SwarmTask): Controller | Promise<Controller>;
  /** Passes the manager's network keys to the executor. */
  setNetworkBootstrapKeys(keys: EncryptionKey[]): void | Promise<void>;
}

/** One log line of a task, as a log subscription delivers it (SwarmKit's LogMessage). */
export interface LogMessage extends LogLine {
  taskId: string;
  attrs?: Record<string, string>;
}

/** The sink of a log subscription. */
export interface LogPublisher {
  publish(message: LogMessage, signal?: AbortSignal): void | Promise<void>;
}

/** Adapts a function to a LogPublisher (SwarmKit's LogPublisherFunc). */
export function logPublisherFunc(fn: (message: LogMessage, signal?: AbortSignal) => void | Promise<void>): LogPublisher {
  return { publish: fn };
}

/** Hands out a publisher per subscription, and a function to release it. */
export interface LogPublisherProvider {
  publisher(subscriptionId: string, signal: AbortSignal): Promise<{ publisher: LogPublisher; close(): void }>;
}

/**
 * A controller that can stream its logs (SwarmKit's ControllerLogs). It is the contract's optional `logs`
 * made mandatory, so every driver that has logs qualifies without a second method.
 */
export type ControllerLogs = Controller & Required<Pick<Controller, 'logs'>>;

/** Whether `controller` can stream logs. */
export function isControllerLogs(controller: Controller): controller is ControllerLogs {
  return typeof controller.logs === 'function';
}

/**
 * Publishes a controller's log lines until `signal` aborts or the stream ends (SwarmKit's `Logs`); a
 * controller without logs publishes nothing, as SwarmKit's task manager does.
 */
export function publishLogs(
  controller: Controller,
  taskId: string,
  publisher: LogPublisher,
  options: LogOptions,
  signal: AbortSignal,
): Promise<void> {
  if (!isControllerLogs(controller) || signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    // Publishing is chained so lines stay in order even when the publisher is async.
    let chain = Promise.resolve();
    let ended = false;
    const finish = (err?: unknown) => {
      if (ended) return;
      ended = true;
      signal.removeEventListener('abort', onAbort);
      sub?.unsubscribe();
      chain.then(() => (err === undefined ? resolve() : reject(err)), reject);
    };
    const onAbort = () => finish();
    signal.addEventListener('abort', onAbort, { once: true });
    // A stream may complete during subscribe (before `sub` is assigned); `finish` then has nothing to cancel.
    let sub: { unsubscribe(): void } | undefined;
    sub = controller.logs(options).subscribe({
      next: (line) => {
        // A publisher that fails ends the subscription with its error, rather than leaving it unhandled.
        chain = chain.then(() => publisher.publish({ ...line, taskId }, signal)).catch((err: unknown) => {
          finish(err);
          throw err;
        });
      },
      error: (err: unknown) => finish(err),
      complete: () => finish(),
    });
    if (ended) sub.unsubscribe();
  });
}

/** A secret as the agent stores it. */
export interface Secret {
  id: string;
  name: string;
  data: Uint8Array | string;
  labels?: Record<string, string>;
}

/** A config as the agent stores it. */
export interface Config {
  id: string;
  name: string;
  data: Uint8Array | string;
  labels?: Record<string, string>;
}

/** Read access to secrets for controllers; undefined when the secret is unknown. */
export interface SecretGetter {
  get(secretId: string): Secret | undefined;
}

/** The agent's secret store: the worker reconciles it before tasks (reset on a full assignment). */
export interface SecretsManager extends SecretGetter {
  add(...secrets: Secret[]): void;
  remove(secretIds: string[]): void;
  reset(): void;
}

/** Read access to configs for controllers; undefined when the config is unknown. */
export interface ConfigGetter {
  get(configId: string): Config | undefined;
}

/** The agent's config store, reconciled like secrets. */
export interface ConfigsManager extends ConfigGetter {
  add(...configs: Config[]): void;
  remove(configIds: string[]): void;
  reset(): void;
}

/** Read access to volumes: the mount path, or a throw of ErrDependencyNotReady until the volume is published. */
export interface VolumeGetter {
  get(volumeId: string): string;
}

/** Implemented by an executor that stores secrets. */
export interface SecretsProvider {
  secrets(): SecretsManager;
}

/** Implemented by an executor that stores configs. */
export interface ConfigsProvider {
  configs(): ConfigsManager;
}

/** What a controller reads its task's dependencies through. */
export interface DependencyGetter {
  secrets(): SecretGetter;
  configs(): ConfigGetter;
  volumes?(): VolumeGetter;
}

/** An in-memory store keyed by id: the whole of SwarmKit's secrets and configs managers. */
class MemoryStore<T extends { id: string }> {
  readonly #items = new Map<string, T>();

  get(id: string): T | undefined {
    return this.#items.get(id);
  }

  add(...items: T[]): void {
    for (const item of items) this.#items.set(item.id, item);
  }

  remove(ids: string[]): void {
    for (const id of ids) this.#items.delete(id);
  }

  reset(): void {
    this.#items.clear();
  }
}

/** An empty in-memory SecretsManager. */
export function createSecretsManager(): SecretsManager {
  return new MemoryStore<Secret>();
}

/** An empty in-memory ConfigsManager. */
export function createConfigsManager(): ConfigsManager {
  return new MemoryStore<Config>();
}
