/**
 * Allocations that keep the page busy: N runners on the real clock whose main task fails every 2-4 s and
 * is restarted (a prestart task and a sidecar around it), as bench/visualizer.ts runs them. No built-in
 * hooks, so the churn is the runners' own, not the disk's.
 */
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import type { InspectorServer } from '../../src/inspect/server.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { TEST_NODE } from '../properties/world.ts';

/** The i-th churning allocation: job `shop`, group `web`, id `shop-web-<i>` (so its name is `shop.web[i]`). */
export function churningAlloc(i: number): AllocSpec {
  return {
    id: `shop-web-${i}`, job: 'shop', group: 'web', type: 'service',
    restart: { attempts: 1_000_000, interval: 3_600_000, delay: 500, mode: 'delay' },
    tasks: [
      { name: 'migrate', driver: 'mock', config: { run_for: '200ms' }, lifecycle: { hook: 'prestart' } },
      { name: 'api', driver: 'mock', config: { run_for: `${2 + (i % 3)}s`, exit_code: 1 } },
      { name: 'shipper', driver: 'mock', config: { run_for: '1h' }, lifecycle: { hook: 'poststart', sidecar: true } },
    ],
  };
}

/** Starts `n` churning allocations reporting to `inspect`; `stop` kills them and waits until they are done. */
export function startChurn(n: number, inspect: InspectorServer['inspect']): { runners: Map<string, AllocRunner>; stop(): Promise<void> } {
  const runners = new Map<string, AllocRunner>();
  const mock = createMockDriver();
  for (let i = 0; i < n; i++) {
    const spec = churningAlloc(i);
    runners.set(spec.id, createAllocRunner(spec, { inspect, builtinHooks: false, node: TEST_NODE, hostEnv: {}, drivers: { mock } }).start());
  }
  return {
    runners,
    async stop() {
      // Killed before stopped: the sidecars' hour-long mock workloads would otherwise keep timers alive.
      await Promise.all([...runners.values()].map((r) => (r.send({ type: 'KILL' }), r.done.catch(() => undefined))));
      for (const r of runners.values()) r.stop();
    },
  };
}
