import { describe, expect, it } from 'vitest';
import { Do, Resolve, transitionStatus } from '../../src/drivers/do.ts';
import {
  ContainerStatusError,
  ErrControllerClosed,
  ErrDependencyNotReady,
  ErrInvalidTransition,
  ErrRuntimeUnsupported,
  ErrTaskNoop,
  ErrTaskPrepared,
  ErrTaskRetry,
  ErrTaskStarted,
  ExitError,
  makeTemporary,
} from '../../src/drivers/errors.ts';
import type { Controller } from '../../src/drivers/controller.ts';
import type { Executor } from '../../src/drivers/executor.ts';
import { SwarmTaskState, type SwarmTask, type SwarmTaskState as State, type SwarmTaskStatus } from '../../src/drivers/task-status.ts';
import { StubController, type StubControllerOptions } from '../../src/testing/stub-controller.ts';

const {
  NEW, PENDING, ASSIGNED, ACCEPTED, PREPARING, READY, STARTING, RUNNING, COMPLETE, SHUTDOWN, FAILED, REJECTED, REMOVE,
  ORPHANED,
} = SwarmTaskState;

/** The input tasks' timestamp, and the clock Do stamps changed statuses with. */
const T0 = 1_000;
const NOW = 5_000;
const now = () => NOW;

type Expected = Omit<SwarmTaskStatus, 'timestamp'>;

function newTask(state: State, desired: State, status: Partial<SwarmTaskStatus> = {}): SwarmTask {
  return {
    id: 'test-task',
    desiredState: desired,
    status: { timestamp: T0, state, message: '', ...status },
    spec: { name: 'web', driver: 'mock', config: {} },
  };
}

const aborted = () => new DOMException('The operation was aborted.', 'AbortError');

/**
 * SwarmKit's checkDo: runs one step, checks the returned error, that the timestamp never moves backwards
 * (scenario 18, checked on every step), and the status apart from its timestamp.
 */
async function checkDo(
  task: SwarmTask,
  ctlr: Controller,
  expected: Expected,
  expectedError?: typeof ErrTaskNoop | typeof ErrTaskRetry,
  signal?: AbortSignal,
): Promise<SwarmTaskStatus> {
  const { status, error } = await Do(task, ctlr, { now, signal });
  if (expectedError) expect(error).toBeInstanceOf(expectedError);
  else expect(error).toBeUndefined();
  expect(status.timestamp).toBeGreaterThanOrEqual(task.status.timestamp);
  const { timestamp: _timestamp, ...rest } = status;
  expect(rest).toEqual(expected);
  return status;
}

interface Row {
  name: string;
  state: State;
  desired: State;
  prior?: Partial<SwarmTaskStatus>;
  stub?: StubControllerOptions;
  expected: Expected;
  error?: typeof ErrTaskNoop | typeof ErrTaskRetry;
  calls: Record<string, number>;
}

const reject = (err: unknown) => async () => {
  throw err;
};

describe('Do: the transition table of §1, one case per row', () => {
  const rows: Row[] = [
    {
      name: '1a: desired SHUTDOWN on a COMPLETE task is a noop and calls nothing',
      state: COMPLETE, desired: SHUTDOWN, prior: { message: 'finished' },
      expected: { state: COMPLETE, message: 'finished' }, error: ErrTaskNoop, calls: {},
    },
    {
      name: '1a: desired REMOVE on a FAILED task is a noop and calls nothing',
      state: FAILED, desired: REMOVE, prior: { message: 'started', err: 'boom' },
      expected: { state: FAILED, message: 'started', err: 'boom' }, error: ErrTaskNoop, calls: {},
    },
    {
      name: '1b: desired SHUTDOWN on a NEW task shuts it down',
      state: NEW, desired: SHUTDOWN,
      expected: { state: SHUTDOWN, message: 'shutdown' }, calls: { shutdown: 1 },
    },
    {
      name: '1b: desired REMOVE on a RUNNING task is capped at SHUTDOWN',
      state: RUNNING, desired: REMOVE, prior: { message: 'started' },
      expected: { state: SHUTDOWN, message: 'shutdown' }, calls: { shutdown: 1 },
    },
    {
      name: '1b: desired ORPHANED on a READY task is capped at SHUTDOWN',
      state: READY, desired: ORPHANED, prior: { message: 'prepared' },
      expected: { state: SHUTDOWN, message: 'shutdown' }, calls: { shutdown: 1 },
    },
    {
      name: '2: a task beyond its desired state is a noop',
      state: RUNNING, desired: READY, prior: { message: 'started' },
      expected: { state: RUNNING, message: 'started' }, error: ErrTaskNoop, calls: {},
    },
    {
      name: '3: PREPARING calls prepare and becomes READY',
      state: PREPARING, desired: RUNNING, prior: { message: 'preparing' },
      expected: { state: READY, message: 'prepared' }, calls: { prepare: 1 },
    },
    {
      name: '3: PREPARING with ErrTaskPrepared becomes READY',
      state: PREPARING, desired: RUNNING, stub: { prepare: reject(new ErrTaskPrepared()) },
      expected: { state: READY, message: 'prepared' }, calls: { prepare: 1 },
    },
    {
      name: '3: PREPARING with a wrapped ErrTaskPrepared becomes READY',
      state: PREPARING, desired: RUNNING, stub: { prepare: reject(new Error('create', { cause: new ErrTaskPrepared() })) },
      expected: { state: READY, message: 'prepared' }, calls: { prepare: 1 },
    },
    {
      name: '4: STARTING calls start and becomes RUNNING',
      state: STARTING, desired: RUNNING, prior: { message: 'starting' },
      expected: { state: RUNNING, message: 'started' }, calls: { start: 1 },
    },
    {
      name: '4: STARTING with ErrTaskStarted becomes RUNNING',
      state: STARTING, desired: RUNNING, stub: { start: reject(new ErrTaskStarted()) },
      expected: { state: RUNNING, message: 'started' }, calls: { start: 1 },
    },
    {
      name: '5: RUNNING calls wait and a clean exit becomes COMPLETE',
      state: RUNNING, desired: RUNNING, prior: { message: 'started' },
      expected: { state: COMPLETE, message: 'finished' }, calls: { wait: 1 },
    },
    {
      name: '6: ACCEPTED with desired ACCEPTED pauses',
      state: ACCEPTED, desired: ACCEPTED, prior: { message: 'accepted' },
      expected: { state: ACCEPTED, message: 'accepted' }, error: ErrTaskNoop, calls: {},
    },
    {
      name: '6: READY with desired READY pauses',
      state: READY, desired: READY, prior: { message: 'prepared' },
      expected: { state: READY, message: 'prepared' }, error: ErrTaskNoop, calls: {},
    },
    {
      name: '7: NEW becomes ACCEPTED',
      state: NEW, desired: RUNNING,
      expected: { state: ACCEPTED, message: 'accepted' }, calls: {},
    },
    {
      name: '7: PENDING becomes ACCEPTED',
      state: PENDING, desired: RUNNING,
      expected: { state: ACCEPTED, message: 'accepted' }, calls: {},
    },
    {
      name: '7: ASSIGNED becomes ACCEPTED and the old err is cleared',
      state: ASSIGNED, desired: RUNNING, prior: { err: 'stale' },
      expected: { state: ACCEPTED, message: 'accepted' }, calls: {},
    },
    {
      name: '8: ACCEPTED becomes PREPARING',
      state: ACCEPTED, desired: RUNNING, prior: { message: 'accepted' },
      expected: { state: PREPARING, message: 'preparing' }, calls: {},
    },
    {
      name: '9: READY becomes STARTING',
      state: READY, desired: RUNNING, prior: { message: 'prepared' },
      expected: { state: STARTING, message: 'starting' }, calls: {},
    },
    {
      name: '10: a state the table does not know (the retired ALLOCATED, 128) is a noop',
      state: 128 as State, desired: RUNNING,
      expected: { state: 128 as State, message: '' }, error: ErrTaskNoop, calls: {},
    },
  ];

  for (const row of rows) {
    it(`row ${row.name}`, async () => {
      const ctlr = new StubController(row.stub);
      await checkDo(newTask(row.state, row.desired, row.prior), ctlr, row.expected, row.error);
      expect(ctlr.calls).toEqual(row.calls);
    });
  }
});

describe('Do: the fatal-error paths, in order', () => {
  const rows: Row[] = [
    {
      name: 'an error that reports a container status gives the task that status',
      state: STARTING, desired: RUNNING, prior: { message: 'starting' },
      stub: { start: reject(new ContainerStatusError('no such container', { containerId: 'c1', pid: 0 })), containerStatus: { containerId: 'other' } },
      expected: { state: FAILED, message: 'starting', err: 'no such container', runtimeStatus: { container: { containerId: 'c1', pid: 0 } } },
      calls: { start: 1 },
    },
    {
      name: "an exit coder's code overrides the controller's exit code",
      state: RUNNING, desired: RUNNING, prior: { message: 'started' },
      stub: { wait: async () => ({ exitCode: 3, signal: 0 }), containerStatus: { containerId: 'c1', exitCode: 0 } },
      expected: { state: FAILED, message: 'started', err: 'task: non-zero exit (3)', runtimeStatus: { container: { containerId: 'c1', exitCode: 3 } } },
      calls: { wait: 1, containerStatus: 1 },
    },
    {
      name: 'a cancelled wait is a retry that changes nothing, not even err',
      state: RUNNING, desired: RUNNING, prior: { message: 'started', err: 'earlier failure' },
      stub: { wait: reject(aborted()) },
      expected: { state: RUNNING, message: 'started', err: 'earlier failure' }, error: ErrTaskRetry, calls: { wait: 1 },
    },
    {
      name: 'a timed-out prepare is a retry',
      state: PREPARING, desired: RUNNING, prior: { message: 'preparing' },
      stub: { prepare: reject(new Error('pull', { cause: new DOMException('timed out', 'TimeoutError') })) },
      expected: { state: PREPARING, message: 'preparing' }, error: ErrTaskRetry, calls: { prepare: 1 },
    },
    {
      name: 'a temporary error is a retry that records err',
      state: PREPARING, desired: RUNNING, prior: { message: 'preparing' },
      stub: { prepare: reject(new Error('pulling image', { cause: makeTemporary(new Error('registry unreachable')) })) },
      expected: { state: PREPARING, message: 'preparing', err: 'pulling image' }, error: ErrTaskRetry, calls: { prepare: 1 },
    },
    {
      name: 'a dependency that is not ready is a retry',
      state: PREPARING, desired: RUNNING, prior: { message: 'preparing' },
      stub: { prepare: reject(new ErrDependencyNotReady('volume v1 is not published yet')) },
      expected: { state: PREPARING, message: 'preparing', err: 'volume v1 is not published yet' }, error: ErrTaskRetry,
      calls: { prepare: 1 },
    },
    {
      name: 'a failed prepare rejects the task and keeps its message',
      state: PREPARING, desired: RUNNING, prior: { message: 'preparing' },
      stub: { prepare: reject(new Error('test error')) },
      expected: { state: REJECTED, message: 'preparing', err: 'test error' }, calls: { prepare: 1 },
    },
    {
      name: 'a failed start fails the task',
      state: STARTING, desired: RUNNING, prior: { message: 'starting' },
      stub: { start: reject(new Error('exec format error')) },
      expected: { state: FAILED, message: 'starting', err: 'exec format error' }, calls: { start: 1 },
    },
    {
      name: 'a non-zero exit fails the task',
      state: RUNNING, desired: RUNNING, prior: { message: 'started' },
      stub: { wait: async () => ({ exitCode: 1, signal: 0 }) },
      expected: { state: FAILED, message: 'started', err: 'task: non-zero exit (1)' }, calls: { wait: 1 },
    },
    {
      name: 'a wait that throws an ExitError fails the task',
      state: RUNNING, desired: RUNNING, prior: { message: 'started' },
      stub: { wait: reject(new ExitError({ exitCode: 137, signal: 9 })) },
      expected: { state: FAILED, message: 'started', err: 'task: killed by signal 9 (exit code 137)' }, calls: { wait: 1 },
    },
    {
      name: 'ErrControllerClosed has no special meaning: the task fails',
      state: STARTING, desired: RUNNING, prior: { message: 'starting' },
      stub: { start: reject(new ErrControllerClosed()) },
      expected: { state: FAILED, message: 'starting', err: 'exec: controller closed' }, calls: { start: 1 },
    },
    {
      name: 'a failed shutdown from READY rejects the task',
      state: READY, desired: SHUTDOWN, prior: { message: 'prepared' },
      stub: { shutdown: reject(new Error('daemon gone')) },
      expected: { state: REJECTED, message: 'prepared', err: 'daemon gone' }, calls: { shutdown: 1 },
    },
    {
      name: 'a failed shutdown from RUNNING fails the task',
      state: RUNNING, desired: SHUTDOWN, prior: { message: 'started' },
      stub: { shutdown: reject(new Error('daemon gone')) },
      expected: { state: FAILED, message: 'started', err: 'daemon gone' }, calls: { shutdown: 1 },
    },
  ];

  for (const row of rows) {
    it(row.name, async () => {
      const ctlr = new StubController(row.stub);
      await checkDo(newTask(row.state, row.desired, row.prior), ctlr, row.expected, row.error);
      expect(ctlr.calls).toEqual(row.calls);
    });
  }

  it("a rejection with the step's own abort reason is a retry, whatever the reason is", async () => {
    const ac = new AbortController();
    const reason = new Error('superseded by an update');
    const ctlr = new StubController({
      wait: async () => {
        ac.abort(reason);
        throw reason;
      },
    });
    await checkDo(newTask(RUNNING, RUNNING, { message: 'started' }), ctlr, { state: RUNNING, message: 'started' }, ErrTaskRetry, ac.signal);
  });

  it('a thrown non-Error value becomes err as text', async () => {
    const ctlr = new StubController({ start: reject('socket closed') });
    await checkDo(newTask(STARTING, RUNNING, { message: 'starting' }), ctlr, { state: FAILED, message: 'starting', err: 'socket closed' });
  });
});

describe('Do: controller calls', () => {
  it("shuts down with the spec's kill signal and timeout", async () => {
    const seen: unknown[] = [];
    const ctlr = new StubController({ shutdown: async (opts) => void seen.push(opts) });
    const task = newTask(RUNNING, SHUTDOWN);
    task.spec = { ...task.spec, killSignal: 'SIGTERM', killTimeout: 30_000 };
    await Do(task, ctlr, { now });
    expect(seen).toEqual([{ signal: 'SIGTERM', timeout: 30_000 }]);
  });

  it("shuts down with Nomad's defaults when the spec has none", async () => {
    const seen: unknown[] = [];
    const ctlr = new StubController({ shutdown: async (opts) => void seen.push(opts) });
    await Do(newTask(RUNNING, SHUTDOWN), ctlr, { now });
    expect(seen).toEqual([{ signal: 'SIGINT', timeout: 5_000 }]);
  });

  it('passes its signal to the controller call', async () => {
    const ac = new AbortController();
    let got: AbortSignal | undefined;
    const ctlr = new StubController({ prepare: async (signal) => void (got = signal) });
    await Do(newTask(PREPARING, RUNNING), ctlr, { signal: ac.signal, now });
    expect(got).toBe(ac.signal);
  });

  it('does not modify the task it is given', async () => {
    const task = newTask(ASSIGNED, RUNNING, { err: 'old' });
    const copy = structuredClone(task);
    await Do(task, new StubController(), { now });
    expect(task).toEqual(copy);
  });
});

describe('Do: deferred post-processing', () => {
  it('queries no container status before STARTING', async () => {
    const ctlr = new StubController({ containerStatus: { containerId: 'c1' } });
    await checkDo(newTask(ACCEPTED, RUNNING), ctlr, { state: PREPARING, message: 'preparing' });
    expect(ctlr.callCount('containerStatus')).toBe(0);
  });

  it('sets the container status from STARTING on', async () => {
    const ctlr = new StubController({ containerStatus: { containerId: 'c1', pid: 42 } });
    await checkDo(newTask(READY, RUNNING), ctlr, {
      state: STARTING, message: 'starting', runtimeStatus: { container: { containerId: 'c1', pid: 42 } },
    });
  });

  it('runs on noops too, so a terminal task still gets its container status', async () => {
    const ctlr = new StubController({ containerStatus: { containerId: 'c1', exitCode: 0 } });
    await checkDo(
      newTask(COMPLETE, SHUTDOWN, { message: 'finished' }),
      ctlr,
      { state: COMPLETE, message: 'finished', runtimeStatus: { container: { containerId: 'c1', exitCode: 0 } } },
      ErrTaskNoop,
    );
  });

  it('scenario 28: a failing container status query while RUNNING copies the previous container status', async () => {
    const ctlr = new StubController({ containerStatus: reject(new Error('daemon busy')) });
    const prior = { message: 'started', runtimeStatus: { container: { containerId: 'c1', pid: 42 } } };
    await checkDo(newTask(RUNNING, RUNNING, prior), ctlr, {
      state: COMPLETE, message: 'finished', runtimeStatus: { container: { containerId: 'c1', pid: 42 } },
    });
  });

  it('an empty container status answer starts from an empty container status when there was none', async () => {
    const ctlr = new StubController({ containerStatus: async () => undefined });
    await checkDo(newTask(STARTING, RUNNING), ctlr, { state: RUNNING, message: 'started', runtimeStatus: { container: {} } });
  });

  it('scenario 27: a PortStatuser controller on the way to RUNNING sets the port status', async () => {
    const ports = { ports: [{ protocol: 'tcp' as const, targetPort: 80, publishedPort: 8080 }] };
    const ctlr = new StubController({ containerStatus: { containerId: 'c1' }, portStatus: ports });
    await checkDo(newTask(STARTING, RUNNING, { portStatus: { ports: [] } }), ctlr, {
      state: RUNNING, message: 'started', runtimeStatus: { container: { containerId: 'c1' } }, portStatus: ports,
    });
  });

  it('scenario 27: any other controller keeps the old port status', async () => {
    const old = { ports: [{ protocol: 'udp' as const, targetPort: 53 }] };
    const ctlr = new StubController({ containerStatus: { containerId: 'c1' } });
    await checkDo(newTask(STARTING, RUNNING, { portStatus: old }), ctlr, {
      state: RUNNING, message: 'started', runtimeStatus: { container: { containerId: 'c1' } }, portStatus: old,
    });
  });

  it('a PortStatuser that reports no ports clears the old port status', async () => {
    const old = { ports: [{ protocol: 'udp' as const, targetPort: 53 }] };
    const ctlr = new StubController({ containerStatus: { containerId: 'c1' }, portStatus: async () => undefined });
    await checkDo(newTask(STARTING, RUNNING, { portStatus: old }), ctlr, {
      state: RUNNING, message: 'started', runtimeStatus: { container: { containerId: 'c1' } },
    });
  });

  it('a controller that reports ports but not container status sets neither, as SwarmKit stops before ports', async () => {
    const ctlr = new StubController({ portStatus: { ports: [{ protocol: 'tcp', targetPort: 80 }] } });
    await checkDo(newTask(STARTING, RUNNING), ctlr, { state: RUNNING, message: 'started' });
    expect(ctlr.callCount('portStatus')).toBe(0);
  });
});

describe('Do: timestamps', () => {
  it('scenario 18 (checkDo): the output timestamp is never earlier than the input one', async () => {
    const { status } = await Do(newTask(NEW, RUNNING, { timestamp: 9_000 }), new StubController(), { now: () => 2_000 });
    expect(status.state).toBe(ACCEPTED);
    expect(status.timestamp).toBe(9_000);
  });

  it('a changed status takes the current time', async () => {
    const { status } = await Do(newTask(NEW, RUNNING), new StubController(), { now });
    expect(status.timestamp).toBe(NOW);
  });

  it('an unchanged status keeps its timestamp', async () => {
    const { status } = await Do(newTask(READY, READY, { message: 'prepared' }), new StubController(), { now });
    expect(status.timestamp).toBe(T0);
  });
});

describe('transitionStatus', () => {
  it('moving to a lower state throws ErrInvalidTransition', () => {
    expect(() => transitionStatus({ timestamp: 0, state: RUNNING, message: 'started' }, READY, 'prepared')).toThrow(ErrInvalidTransition);
  });
});

describe('Do: the SwarmKit scenarios of §4', () => {
  it('scenario 6 (TestAcceptPrepare): an ASSIGNED task is accepted, prepared and readied, with one prepare', async () => {
    let task = newTask(ASSIGNED, RUNNING);
    const ctlr = new StubController();
    task = { ...task, status: await checkDo(task, ctlr, { state: ACCEPTED, message: 'accepted' }) };
    task = { ...task, status: await checkDo(task, ctlr, { state: PREPARING, message: 'preparing' }) };
    await checkDo(task, ctlr, { state: READY, message: 'prepared' });
    expect(ctlr.callCount('prepare')).toBe(1);
  });

  it('scenario 7 (TestPrepareAlready): a prepare that answers ErrTaskPrepared still readies the task', async () => {
    let task = newTask(ASSIGNED, RUNNING);
    const ctlr = new StubController({ prepare: reject(new ErrTaskPrepared()) });
    task = { ...task, status: await checkDo(task, ctlr, { state: ACCEPTED, message: 'accepted' }) };
    task = { ...task, status: await checkDo(task, ctlr, { state: PREPARING, message: 'preparing' }) };
    await checkDo(task, ctlr, { state: READY, message: 'prepared' });
    expect(ctlr.callCount('prepare')).toBe(1);
  });

  it('scenario 9 (TestReadyRunning): a READY task desired RUNNING becomes STARTING', async () => {
    await checkDo(newTask(READY, RUNNING), new StubController(), { state: STARTING, message: 'starting' });
  });

  it('scenario 10 (TestReadyRunning): a STARTING task whose start succeeds becomes RUNNING', async () => {
    await checkDo(newTask(STARTING, RUNNING, { message: 'starting' }), new StubController(), { state: RUNNING, message: 'started' });
  });

  it('scenario 11 (TestReadyRunning): a cancelled wait leaves a RUNNING task unchanged with ErrTaskRetry', async () => {
    const ctlr = new StubController({ wait: reject(aborted()) });
    const task = newTask(RUNNING, RUNNING, { message: 'started' });
    const status = await checkDo(task, ctlr, { state: RUNNING, message: 'started' }, ErrTaskRetry);
    expect(status).toEqual(task.status);
  });

  it('scenario 12 (TestReadyRunning): a clean exit completes the task with its container status, after one start and two waits', async () => {
    const ctlr = new StubController({
      wait: async () => {
        if (ctlr.callCount('wait') === 1) throw aborted();
        return { exitCode: 0, signal: 0 };
      },
    });
    let task = newTask(READY, RUNNING);
    task = { ...task, status: await checkDo(task, ctlr, { state: STARTING, message: 'starting' }) };
    task = { ...task, status: await checkDo(task, ctlr, { state: RUNNING, message: 'started' }) };
    task = { ...task, status: await checkDo(task, ctlr, { state: RUNNING, message: 'started' }, ErrTaskRetry) };
    // SwarmKit wraps the stub in a ContainerStatuser for the last step only.
    ctlr.containerStatus = async () => ({ exitCode: 0 });
    await checkDo(task, ctlr, { state: COMPLETE, message: 'finished', runtimeStatus: { container: { exitCode: 0 } } });
    expect(ctlr.callCount('start')).toBe(1);
    expect(ctlr.callCount('wait')).toBe(2);
  });

  it('scenario 14 (TestAlreadyStarted): ErrTaskStarted runs the task, a cancelled wait retries, exit 1 fails it', async () => {
    const ctlr = new StubController({
      start: reject(new ErrTaskStarted()),
      wait: async () => {
        if (ctlr.callCount('wait') === 1) throw aborted();
        return { exitCode: 1, signal: 0 };
      },
    });
    let task = newTask(READY, RUNNING);
    task = { ...task, status: await checkDo(task, ctlr, { state: STARTING, message: 'starting' }) };
    task = { ...task, status: await checkDo(task, ctlr, { state: RUNNING, message: 'started' }) };
    task = { ...task, status: await checkDo(task, ctlr, { state: RUNNING, message: 'started' }, ErrTaskRetry) };
    ctlr.containerStatus = async () => ({ exitCode: 1 });
    await checkDo(task, ctlr, {
      state: FAILED, message: 'started', err: 'task: non-zero exit (1)', runtimeStatus: { container: { exitCode: 1 } },
    });
    expect(ctlr.callCount('start')).toBe(1);
    expect(ctlr.callCount('wait')).toBe(2);
  });

  it('scenario 15 (TestShutdown): a NEW task desired SHUTDOWN is shut down with one call', async () => {
    const ctlr = new StubController();
    await checkDo(newTask(NEW, SHUTDOWN), ctlr, { state: SHUTDOWN, message: 'shutdown' });
    expect(ctlr.callCount('shutdown')).toBe(1);
  });

  it('scenario 22: a start that fails with a non-temporary error fails the STARTING task', async () => {
    const ctlr = new StubController({ start: reject(new Error('permission denied')) });
    await checkDo(newTask(STARTING, RUNNING, { message: 'starting' }), ctlr, { state: FAILED, message: 'starting', err: 'permission denied' });
  });

  it('scenario 24: READY desired READY and ACCEPTED desired ACCEPTED are noops', async () => {
    await checkDo(newTask(READY, READY), new StubController(), { state: READY, message: '' }, ErrTaskNoop);
    await checkDo(newTask(ACCEPTED, ACCEPTED), new StubController(), { state: ACCEPTED, message: '' }, ErrTaskNoop);
  });

  it('scenario 25: PREPARING desired PREPARING still prepares and overshoots to READY', async () => {
    const ctlr = new StubController();
    await checkDo(newTask(PREPARING, PREPARING), ctlr, { state: READY, message: 'prepared' });
    expect(ctlr.callCount('prepare')).toBe(1);
  });
});

describe('Resolve', () => {
  const stub = new StubController();
  const executor = (err?: unknown): Pick<Executor, 'controller'> => ({
    controller: () => {
      if (err !== undefined) throw err;
      return stub;
    },
  });

  it('scenario 1 (TestResolve): an ASSIGNED task resolves to ACCEPTED "accepted" without error', async () => {
    const { controller, status, error } = await Resolve(newTask(ASSIGNED, RUNNING), executor());
    expect(error).toBeUndefined();
    expect(controller).toBe(stub);
    expect(status).toMatchObject({ state: ACCEPTED, message: 'accepted' });
  });

  it('scenario 2 (TestResolve): resolving an ACCEPTED task again leaves its status unchanged', async () => {
    const task = newTask(ACCEPTED, RUNNING, { message: 'accepted' });
    const { status, error } = await Resolve(task, executor());
    expect(error).toBeUndefined();
    expect(status).toEqual(task.status);
  });

  it('scenario 3 (TestResolve): an executor error is returned and rejects an ASSIGNED task', async () => {
    const err = new Error('some error');
    const { controller, status, error } = await Resolve(newTask(ASSIGNED, RUNNING), executor(err));
    expect(error).toBe(err);
    expect(controller).toBeUndefined();
    expect(status).toMatchObject({ state: REJECTED, message: 'resolving controller failed', err: 'some error' });
  });

  it('scenario 4 (TestResolve): an executor error fails a STARTING task', async () => {
    const { status } = await Resolve(newTask(STARTING, RUNNING), executor(new Error('some error')));
    expect(status.state).toBe(FAILED);
  });

  it('scenario 5 (TestResolve): an executor error leaves a COMPLETE task COMPLETE, and a later success leaves it unchanged', async () => {
    const failed = await Resolve(newTask(COMPLETE, RUNNING), executor(new Error('some error')));
    expect(failed.status).toMatchObject({ state: COMPLETE, message: 'resolving controller failed', err: 'some error' });
    const task = { ...newTask(COMPLETE, RUNNING), status: failed.status };
    const { status, error } = await Resolve(task, executor());
    expect(error).toBeUndefined();
    expect(status).toEqual(task.status);
  });

  it('ErrRuntimeUnsupported from the executor rejects the task', async () => {
    const { status, error } = await Resolve(newTask(NEW, RUNNING), executor(new ErrRuntimeUnsupported()));
    expect(error).toBeInstanceOf(ErrRuntimeUnsupported);
    expect(status).toMatchObject({ state: REJECTED, err: 'exec: unsupported runtime' });
  });

  it('never touches the timestamp', async () => {
    const { status } = await Resolve(newTask(ASSIGNED, RUNNING), executor());
    expect(status.timestamp).toBe(T0);
  });

  it('accepts an executor whose controller is async', async () => {
    const { controller, status } = await Resolve(newTask(NEW, RUNNING), { controller: async () => stub });
    expect(controller).toBe(stub);
    expect(status.state).toBe(ACCEPTED);
  });
});
