/**
 * A task's driver is looked up by the name its spec gives. Names that are also members of every JavaScript
 * object (`constructor`, `toString`, `__proto__`) name no driver: the task is refused as naming an unknown
 * driver, as Nomad refuses a driver its client does not have, not broken by a method taken for a driver.
 */
import { describe, expect, it } from 'vitest';
import { ErrRuntimeUnsupported } from '../../src/drivers/errors.ts';
import { SwarmTaskState, newSwarmTaskStatus } from '../../src/drivers/task-status.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { createExecutor } from '../../src/runtime/create-executor.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const OBJECT_MEMBERS = ['constructor', 'toString', 'hasOwnProperty', '__proto__'];

describe('driver names that are members of every object', () => {
  it.each(OBJECT_MEMBERS)('an alloc task with driver %j fails validation as naming an unknown driver', async (name) => {
    const spec: AllocSpec = { id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [{ name: 'web', driver: name, config: {} }] };
    const runner = createAllocRunner(spec, { clock: new SimulatedClock(0), builtinHooks: false }).start();
    const final = await runner.done;
    expect(final.clientStatus).toBe('failed');
    const failure = final.taskStates.web!.events.find((e) => e.type === 'Failed Validation');
    expect(failure?.message).toBe(`task "web": driver ${JSON.stringify(name)} is not available (known: mock, mock_driver, raw_exec)`);
  });

  it.each(OBJECT_MEMBERS)('the executor refuses a task with driver %j as unsupported', (name) => {
    const executor = createExecutor({});
    const task = { id: 't1', desiredState: SwarmTaskState.RUNNING, status: newSwarmTaskStatus(), spec: { name: 'web', driver: name, config: {} } };
    expect(() => executor.controller(task)).toThrow(ErrRuntimeUnsupported);
    expect(() => executor.controller(task)).toThrow(`driver ${JSON.stringify(name)} is not available on this node`);
  });
});
