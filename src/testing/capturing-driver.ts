/**
 * A driver for tests: each controller comes from `make`, and the driver keeps what it was asked for (the
 * task and the DriverContext of every controller, in order) and the controllers it made, so a test can
 * check what the runtime handed the driver and reach the stub behind each start.
 */
import type { TaskSpec } from '../../machines/model.ts';
import type { Controller, Driver, DriverContext } from '../drivers/controller.ts';
import { StubController } from './stub-controller.ts';

/** The driver and what it saw; `contexts[i]` is `seen[i].ctx`. */
export interface CapturingDriver<C extends Controller> {
  driver: Driver;
  seen: { task: TaskSpec; ctx: DriverContext }[];
  contexts: DriverContext[];
  made: C[];
}

/** A driver named `name` (default `stub`) of controllers from `make` (default: a fresh StubController), reattaching with `recover` when given. */
export function capturingDriver<C extends Controller = StubController>(
  opts: { name?: string; make?: (task: TaskSpec, ctx: DriverContext) => C; recover?: Driver['recover'] } = {},
): CapturingDriver<C> {
  const make = opts.make ?? (() => new StubController() as unknown as C);
  const captured: CapturingDriver<C> = {
    driver: {
      name: opts.name ?? 'stub',
      controller: (task, ctx) => {
        captured.seen.push({ task, ctx });
        captured.contexts.push(ctx);
        const c = make(task, ctx);
        captured.made.push(c);
        return c;
      },
      ...(opts.recover && { recover: opts.recover }),
    },
    seen: [],
    contexts: [],
    made: [],
  };
  return captured;
}
