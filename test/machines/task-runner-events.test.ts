/**
 * What the task runner records and hands on: its task events with their exact messages and fields (Task
 * Setup, shutdown delay, failed stops, hook failures), what prestart hooks leave for the driver (mounts,
 * devices, env of Done hooks), signals and their failures, and the messages of actors nobody provided.
 */
import { createActor, fromPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { taskRunnerMachine, type CommandRejection, type DriverCallInput, type DriverStartOutput } from '../../machines/task-runner.ts';
import type { ExitResult, RestartPolicy, TaskDevice, TaskMount } from '../../machines/model.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';
import { failure, forever, stubRunner, webTask } from './stub-task-runner.ts';

const retry: RestartPolicy = { attempts: 3, interval: 60 * 60_000, delay: 1_000, mode: 'fail' };

describe('task runner: task events', () => {
  it('records Task Setup with the message "Building Task Directory" before the first start', async () => {
    const r = stubRunner();
    await settle();
    expect(r.events()[1]).toEqual({ type: 'Task Setup', time: 1_000, message: 'Building Task Directory', displayMessage: 'Building Task Directory' });
  });

  it('waits out shutdown_delay before signalling the workload, saying how long in a Waiting for shutdown delay event', async () => {
    const r = stubRunner({ task: { ...webTask, shutdownDelay: 5_000 } });
    await settle();
    r.actor.send({ type: 'KILL' });
    await settle();
    // Nomad's text, the delay printed as a Go duration (fmt's %s of a time.Duration).
    const ev = r.events().at(-1)!;
    expect(ev).toMatchObject({ type: 'Waiting for shutdown delay', time: 1_000 });
    expect(ev.message).toBe('Waiting for shutdown_delay of 5s before killing the task.');
    expect(ev.displayMessage).toBe(ev.message);
    expect(r.state().state).toBe('pending');
    expect(r.shutdowns).toHaveLength(0);
    await r.clock.advance(5_000);
    expect(r.shutdowns).toHaveLength(1);
  });

  it('records a failed stop as Driver Failure "failed to stop the task", then force-kills at the kill timeout', async () => {
    const r = stubRunner({ task: { ...webTask, killTimeout: 2_000 } }, {
      shutdown: () => Promise.reject(failure('operation not permitted')),
      terminate: () => Promise.reject(failure('no such process')),
    });
    await settle();
    r.actor.send({ type: 'KILL' });
    await settle();
    const stop = 'failed to stop the task: operation not permitted';
    expect(r.events().at(-1)).toEqual({ type: 'Driver Failure', time: 1_000, message: stop, displayMessage: stop });
    await r.clock.advance(2_000);
    expect(r.terminates).toHaveLength(1);
    const terminate = 'failed to stop the task: no such process';
    expect(r.events().at(-1)).toEqual({ type: 'Driver Failure', time: 3_000, message: terminate, displayMessage: terminate });
    expect(r.value()).toEqual({ running: { killing: 'awaitingExit' } });
  });

  it('names the phase and the hook of a failed poststart hook, and the task keeps running', async () => {
    const r = stubRunner({ hooks: { poststart: ['health'] } }, { hook: () => { throw failure('check timed out'); } });
    await settle();
    const message = 'poststart hook "health" failed: check timed out';
    expect(r.events().at(-1)).toEqual({
      type: 'Task hook failed', time: 1_000, message, details: { hook: 'health', phase: 'poststart' }, displayMessage: message,
    });
    expect(r.state().state).toBe('running');
  });

  it('keeps the events a poststart hook emits', async () => {
    const r = stubRunner({ hooks: { poststart: ['register'] } }, {
      hook: (i) => (i.phase === 'poststart' ? { events: [{ type: 'Registered', message: 'service registered' }] } : {}),
    });
    await settle();
    expect(r.events().at(-1)).toEqual({ type: 'Registered', time: 1_000, message: 'service registered', displayMessage: 'service registered' });
  });
});

describe('task runner: what prestart hooks leave for the driver', () => {
  it('hands the driver the mounts and devices prestart hooks asked for', async () => {
    const mounts: TaskMount[] = [{ hostPath: '/srv/secrets', taskPath: '/secrets', readOnly: true }];
    const devices: TaskDevice[] = [{ hostPath: '/dev/fuse', taskPath: '/dev/fuse' }];
    const r = stubRunner({ hooks: { prestart: ['volumes', 'devices'] } }, {
      hook: (i) => (i.hook === 'volumes' ? { mounts } : { devices }),
    });
    await settle();
    expect(r.starts).toHaveLength(1);
    expect(r.starts[0]!.mounts).toEqual(mounts);
    expect(r.starts[0]!.devices).toEqual(devices);
    expect(r.ctx().hookStates).toEqual({ volumes: { done: false, mounts }, devices: { done: false, devices } });
  });

  it('re-applies a Done prestart hook\'s env on a restart, so it still wins over an earlier hook\'s', async () => {
    let runs = 0;
    const r = stubRunner({ groupRestart: retry, hooks: { prestart: ['template', 'vault'] } }, {
      hook: (i) => (i.hook === 'template' ? { env: { TOKEN: `template-${++runs}` } } : { done: true, env: { TOKEN: 'vault' } }),
    });
    await settle();
    r.exit({ exitCode: 1, signal: 0 });
    await r.clock.advanceUntil(() => r.starts.length === 2);
    expect(r.hookCalls.map((c) => c.hook)).toEqual(['template', 'vault', 'template']);
    expect(r.starts.map((s) => s.hookEnv.TOKEN)).toEqual(['vault', 'vault']);
  });
});

describe('task runner: signals', () => {
  it('runs each signal as its own child, signal.<n>, and drops it once the driver answers', async () => {
    let answer!: () => void;
    const r = stubRunner({}, { signal: () => new Promise<void>((resolve) => (answer = resolve)) });
    await settle();
    r.actor.send({ type: 'SIGNAL', signal: 'SIGHUP' });
    expect(Object.keys(r.actor.getSnapshot().children)).toContain('signal.1');
    expect(r.events().at(-1)).toMatchObject({ type: 'Signaling', details: { signal: 'SIGHUP' } });
    answer();
    await settle();
    expect(Object.keys(r.actor.getSnapshot().children)).not.toContain('signal.1');
  });

  it('answers a signal the driver could not deliver with an ErrSignalFailed rejection, emitted and kept', async () => {
    const r = stubRunner({}, { signal: () => Promise.reject(failure('process is gone')) });
    const emitted: CommandRejection[] = [];
    r.actor.on('command.rejected', (e) => emitted.push(e.rejection));
    await settle();
    r.actor.send({ type: 'SIGNAL', signal: 'SIGUSR1' });
    await settle();
    const rejection = { command: 'SIGNAL', code: 'ErrSignalFailed', message: 'process is gone', time: 1_000 };
    expect(emitted).toEqual([rejection]);
    expect(r.ctx().rejections).toEqual([rejection]);
    expect(Object.keys(r.actor.getSnapshot().children)).not.toContain('signal.1');
  });
});

describe('taskRunnerMachine without its actors', () => {
  const hint = (name: string) => `taskRunnerMachine: the ${name} actor is not provided; use createTaskRunner() or .provide({ actors: { ${name} } })`;

  it('fails the start with a message naming the missing hook actor', async () => {
    const actor = createActor(taskRunnerMachine, {
      clock: new SimulatedClock(0),
      input: { allocId: 'a1', task: webTask, jobType: 'batch', parkWhenDead: false, hooks: { prestart: ['task_dir'] }, groupRestart: { ...retry, attempts: 0 } },
    }).start();
    await settle();
    expect(actor.getSnapshot().context.taskState.events[2]!.message).toBe(`task_dir: ${hint('hook')}`);
  });

  it('fails the start with a message naming the missing driverStart actor', async () => {
    const actor = createActor(taskRunnerMachine, {
      clock: new SimulatedClock(0),
      input: { allocId: 'a1', task: webTask, jobType: 'batch', parkWhenDead: false },
    }).start();
    await settle();
    expect(actor.getSnapshot().context.taskState.events[2]).toMatchObject({ type: 'Driver Failure', message: hint('driverStart') });
  });

  it('names driverWait, driverShutdown, driverTerminate and driverSignal when a started task uses them unprovided', async () => {
    const machine = taskRunnerMachine.provide({
      actors: { driverStart: stubStart(), driverWait: stubWaitForever() },
    });
    const clock = new SimulatedClock(0);
    const actor = createActor(machine, {
      clock, input: { allocId: 'a1', task: { ...webTask, killTimeout: 1_000 }, jobType: 'batch', parkWhenDead: false },
    }).start();
    const rejected: CommandRejection[] = [];
    actor.on('command.rejected', (e) => rejected.push(e.rejection));
    await settle();
    actor.send({ type: 'SIGNAL', signal: 'SIGHUP' });
    actor.send({ type: 'KILL' });
    await clock.advance(1_000);
    expect(rejected.map((x) => x.message)).toEqual([hint('driverSignal')]);
    const stops = actor.getSnapshot().context.taskState.events.filter((e) => e.type === 'Driver Failure').map((e) => e.message);
    expect(stops).toEqual([`failed to stop the task: ${hint('driverShutdown')}`, `failed to stop the task: ${hint('driverTerminate')}`]);

    const lost = createActor(taskRunnerMachine.provide({ actors: { driverStart: stubStart() } }), {
      clock: new SimulatedClock(0), input: { allocId: 'a1', task: webTask, jobType: 'batch', parkWhenDead: false },
    }).start();
    await settle();
    expect(lost.getSnapshot().context.taskState.events[3]!.message).toBe(`lost the workload: ${hint('driverWait')}`);
  });
});


/** A driver start that always succeeds. */
function stubStart() {
  return fromPromise<DriverStartOutput, DriverCallInput>(async () => ({ handle: { pid: 1 } }));
}
/** A workload that never exits by itself. */
function stubWaitForever() {
  return fromPromise<ExitResult, DriverCallInput>(() => forever<ExitResult>());
}
