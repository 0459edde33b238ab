/**
 * A Controller for tests of Do, the task manager and anything else that drives the contract (SwarmKit's
 * StubController): every method succeeds unless overridden, and every call is counted.
 */
import type { ContainerStatus, Controller, ExitResult, PortStatus, ShutdownOptions } from '../drivers/controller.ts';
import type { TaskSpec } from '../jobspec/types.ts';

/** The methods a StubController counts and lets a test override. */
export interface StubControllerMethods {
  prepare(signal: AbortSignal): Promise<void>;
  start(signal: AbortSignal): Promise<void>;
  wait(signal: AbortSignal): Promise<ExitResult>;
  shutdown(opts: ShutdownOptions, signal: AbortSignal): Promise<void>;
  terminate(signal: AbortSignal): Promise<void>;
  remove(signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
  update(task: TaskSpec, signal: AbortSignal): Promise<void>;
  signal(sig: string, signal: AbortSignal): Promise<void>;
}

/** Per-method overrides, plus the optional status capabilities (absent means the controller lacks them). */
export interface StubControllerOptions extends Partial<StubControllerMethods> {
  /** Makes the stub a ContainerStatuser: a fixed value, or a function asked on every query. */
  containerStatus?: ContainerStatus | ((signal: AbortSignal) => Promise<ContainerStatus | undefined>);
  /** Makes the stub a PortStatuser: a fixed value, or a function asked on every query. */
  portStatus?: PortStatus | ((signal: AbortSignal) => Promise<PortStatus | undefined>);
}

/** The exit a stub's `wait` reports unless overridden: a clean one. */
const CLEAN_EXIT: ExitResult = { exitCode: 0, signal: 0 };

/** A Controller whose methods succeed unless overridden, counting calls by method name. */
export class StubController implements Controller {
  /** Calls per method (`prepare`, `wait`, `containerStatus`, ...); methods never called are absent. */
  readonly calls: Record<string, number> = {};
  /** The overrides; a test may replace them between steps. */
  readonly impl: Partial<StubControllerMethods>;
  containerStatus?: (signal: AbortSignal) => Promise<ContainerStatus | undefined>;
  portStatus?: (signal: AbortSignal) => Promise<PortStatus | undefined>;

  constructor(options: StubControllerOptions = {}) {
    const { containerStatus, portStatus, ...impl } = options;
    this.impl = impl;
    // Assigned only when asked for: Do checks for the capability by the method's presence.
    if (containerStatus !== undefined) {
      this.containerStatus = async (signal) => {
        this.count('containerStatus');
        return typeof containerStatus === 'function' ? containerStatus(signal) : structuredClone(containerStatus);
      };
    }
    if (portStatus !== undefined) {
      this.portStatus = async (signal) => {
        this.count('portStatus');
        return typeof portStatus === 'function' ? portStatus(signal) : structuredClone(portStatus);
      };
    }
  }

  /** How many times `method` was called. */
  callCount(method: keyof StubControllerMethods | 'containerStatus' | 'portStatus'): number {
    return this.calls[method] ?? 0;
  }

  async prepare(signal: AbortSignal): Promise<void> {
    this.count('prepare');
    await this.impl.prepare?.(signal);
  }

  async start(signal: AbortSignal): Promise<void> {
    this.count('start');
    await this.impl.start?.(signal);
  }

  async wait(signal: AbortSignal): Promise<ExitResult> {
    this.count('wait');
    return this.impl.wait ? this.impl.wait(signal) : { ...CLEAN_EXIT };
  }

  async shutdown(opts: ShutdownOptions, signal: AbortSignal): Promise<void> {
    this.count('shutdown');
    await this.impl.shutdown?.(opts, signal);
  }

  async terminate(signal: AbortSignal): Promise<void> {
    this.count('terminate');
    await this.impl.terminate?.(signal);
  }

  async remove(signal: AbortSignal): Promise<void> {
    this.count('remove');
    await this.impl.remove?.(signal);
  }

  async close(): Promise<void> {
    this.count('close');
    await this.impl.close?.();
  }

  async update(task: TaskSpec, signal: AbortSignal): Promise<void> {
    this.count('update');
    await this.impl.update?.(task, signal);
  }

  async signal(sig: string, signal: AbortSignal): Promise<void> {
    this.count('signal');
    await this.impl.signal?.(sig, signal);
  }

  private count(method: string): void {
    this.calls[method] = (this.calls[method] ?? 0) + 1;
  }
}
