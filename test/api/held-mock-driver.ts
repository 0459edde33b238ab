/**
 * The mock driver with a seam at a task's start, for rules about an allocation that has not started: a task named
 * `held` waits there until the test releases it, so its allocation stays pending (and holds what it asked for) for
 * as long as the test needs. A kill does not end a start under way (the task runner waits for it), so such an
 * allocation stopped stays pending too.
 */
import type { Controller, Driver } from '../../src/drivers/controller.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';

export interface HeldMockDriver {
  driver: Driver;
  /** The allocations whose `held` task is waiting at its start now. */
  holding: Set<string>;
  /** Lets every start waiting now go on (later ones wait for the next release). */
  release(): void;
}

export function heldMockDriver(): HeldMockDriver {
  const mock = createMockDriver();
  const holding = new Set<string>();
  const waiting: (() => void)[] = [];
  const driver: Driver = {
    name: 'mock',
    controller(task, ctx) {
      const c = mock.controller(task, ctx);
      if (task.name !== 'held') return c;
      const start = async (signal: AbortSignal) => {
        holding.add(ctx.allocId);
        await new Promise<void>((r) => waiting.push(r));
        holding.delete(ctx.allocId);
        return c.start(signal);
      };
      return new Proxy(c, {
        get(target, prop) {
          if (prop === 'start') return start;
          const v = Reflect.get(target, prop, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      }) as Controller;
    },
  };
  return { driver, holding, release: () => waiting.splice(0).forEach((go) => go()) };
}
