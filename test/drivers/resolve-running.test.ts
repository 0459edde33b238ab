/**
 * SwarmKit's Resolve on a task that is already running (agent/exec/controller.go Resolve, worker.go on
 * restart): the controller is found again without touching the workload or moving the task's status, and the
 * next Do step waits on the workload instead of preparing or starting it again.
 */
import { describe, expect, it } from 'vitest';
import { Do, Resolve, SwarmTaskState, type SwarmTask } from '../../src/index.ts';
import { StubController } from '../../src/testing/index.ts';

const { ACCEPTED, RUNNING, COMPLETE, FAILED } = SwarmTaskState;

function runningTask(): SwarmTask {
  return {
    id: 'web.1',
    desiredState: RUNNING,
    status: { timestamp: 1_000, state: RUNNING, message: 'started', runtimeStatus: { container: { containerId: 'c1', pid: 42 } } },
    spec: { name: 'web', driver: 'mock', config: {} },
  };
}

describe('Resolve on an already-running task', () => {
  it('returns the controller and leaves a RUNNING status exactly as it was (never back to ACCEPTED)', async () => {
    const task = runningTask();
    const stub = new StubController();
    const { controller, status, error } = await Resolve(task, { controller: async () => stub });
    expect(error).toBeUndefined();
    expect(controller).toBe(stub);
    expect(status).toEqual(task.status);
    expect(status.state).not.toBe(ACCEPTED);
  });

  it('calls nothing on the controller: resolving must not start, prepare or stop the workload', async () => {
    const stub = new StubController();
    await Resolve(runningTask(), { controller: async () => stub });
    expect(stub.calls).toEqual({});
  });

  it('an executor error fails the running task with "resolving controller failed", keeping its timestamp', async () => {
    const { controller, status, error } = await Resolve(runningTask(), { controller: async () => Promise.reject(new Error('docker is gone')) });
    expect(controller).toBeUndefined();
    expect((error as Error).message).toBe('docker is gone');
    expect(status).toMatchObject({ state: FAILED, message: 'resolving controller failed', err: 'docker is gone', timestamp: 1_000 });
  });

  it('the next Do step on the resolved task waits on the workload; it never prepares or starts it again', async () => {
    const task = runningTask();
    const stub = new StubController({ wait: async () => ({ exitCode: 0, signal: 0 }) });
    const { status } = await Resolve(task, { controller: async () => stub });
    const step = await Do({ ...task, status }, stub, { now: () => 2_000 });
    expect(step.status).toMatchObject({ state: COMPLETE, message: 'finished', timestamp: 2_000 });
    expect(stub.calls).toEqual({ wait: 1 });
  });
});
