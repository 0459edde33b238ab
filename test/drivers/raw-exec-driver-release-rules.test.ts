/**
 * What a raw_exec controller holds of the agent's event loop (raw-exec-driver.ts, `close`): a started task's
 * process and output pipes keep the agent alive until the controller is closed, after which the agent can
 * exit while the task runs; a controller closed while its start is in flight holds nothing once the start is
 * done, whether it spawned the task unsupervised, under a supervisor, or adopted an earlier agent's spawn.
 * Closing the controller of a supervised task that has exited adds nothing to its closed pipes.
 * Measured with `process.getActiveResourcesInfo()` (only handles that keep the loop alive are listed).
 */
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { createRawExecDriver, type RawExecController } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { driverFixtures, never } from './raw-exec-driver-fixtures.ts';

const { task, context } = driverFixtures();
const canSupervise = ['setsid', 'mkfifo'].every((tool) => lookupBin(tool, '/', '/usr/bin:/bin') !== undefined);

const started: RawExecController[] = [];
afterEach(async () => {
  for (const c of started.splice(0)) await c.terminate(never()).catch(() => undefined);
});

/** The processes and pipes keeping this process's loop alive. */
const held = (): number => process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap' || r === 'ProcessWrap').length;

const modes = [
  ['unsupervised', false],
  ...(canSupervise ? [['under a supervisor', true] as const] : []),
] as const;

describe.each(modes)('a task started %s', (_mode, supervise) => {
  const driver = createRawExecDriver({ supervise });
  const controller = (ctx = { ...context(), attempt: 0 }) => {
    const c = driver.controller(task({ command: '/bin/sh', args: ['-c', 'exec sleep 600'] }), ctx);
    started.push(c);
    return c;
  };

  it('holds the agent\'s loop until its controller is closed', async () => {
    const before = held();
    const c = controller();
    await c.start(never());
    expect(held()).toBeGreaterThan(before);
    await c.close();
    expect(held()).toBeLessThanOrEqual(before);
  });

  it('holds nothing once started when its controller was closed during the start', async () => {
    const before = held();
    const c = controller();
    const starting = c.start(never());
    await c.close();
    await starting;
    expect(c.pid).toBeDefined();
    expect(held()).toBeLessThanOrEqual(before);
  });
});

describe.runIf(canSupervise)('a supervised task that has exited', () => {
  it('has nothing added to its closed pipes when its controller is closed', async () => {
    const c = createRawExecDriver().controller(task({ command: '/bin/sh', args: ['-c', 'exit 0'] }), { ...context(), attempt: 0 });
    started.push(c);
    await c.start(never());
    await c.wait(never());
    const pipes = (c as unknown as { sources: Readable[] }).sources;
    expect(pipes.length).toBeGreaterThan(0);
    expect(pipes.every((p) => p.destroyed)).toBe(true);
    await c.close();
    // A closed socket unref'd waits for a 'connect' that never comes (Node's Socket.unref): one listener a task.
    expect(pipes.map((p) => p.listenerCount('connect'))).toEqual(pipes.map(() => 0));
  });
});

describe.runIf(canSupervise)('a start that adopts an earlier spawn of its attempt', () => {
  /** A task spawned for attempt 3 by a controller since closed (as by an agent that died before saying so), and a second one for it. */
  async function adopting() {
    const driver = createRawExecDriver();
    const ctx = { ...context(), attempt: 3 };
    const first = driver.controller(task({ command: '/bin/sh', args: ['-c', 'exec sleep 600'] }), ctx);
    started.push(first);
    await first.start(never());
    await first.close();
    const again = driver.controller(task({ command: '/bin/sh', args: ['-c', 'exec sleep 600'] }), ctx);
    started.push(again);
    return { first, again };
  }

  it('holds the agent\'s loop (the output it reads again) until its controller is closed', async () => {
    const { first, again } = await adopting();
    const before = held();
    await again.start(never());
    expect(again.pid).toBe(first.pid);
    expect(held()).toBeGreaterThan(before);
    await again.close();
    expect(held()).toBeLessThanOrEqual(before);
  });

  it('holds nothing once done when its controller was closed during it', async () => {
    const { first, again } = await adopting();
    const before = held();
    const starting = again.start(never());
    await again.close();
    await starting;
    expect(again.pid).toBe(first.pid);
    expect(held()).toBeLessThanOrEqual(before);
  });
});
