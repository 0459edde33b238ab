import { describe, expect, it } from 'vitest';
import {
  ContainerStatusError,
  ErrClosed,
  ErrControllerClosed,
  ErrDependencyNotReady,
  ErrRuntimeUnsupported,
  ErrTaskNoop,
  ErrTaskPrepared,
  ErrTaskRetry,
  ErrTaskStarted,
  ErrTaskUpdateRejected,
  ExecError,
  ExitError,
  TemporaryError,
  causeChain,
  errorIs,
  isCancellation,
  isContainerStatuser,
  isExitCoder,
  isPortStatuser,
  isTemporary,
  makeTemporary,
  messageOf,
} from '../../src/drivers/errors.ts';

/** A pkg/errors-style wrapper: its own message, the wrapped error as `cause`. */
class Wrapped extends Error {
  constructor(message: string, cause: unknown) {
    super(`${message}: ${messageOf(cause)}`, { cause });
  }
}

describe('exec sentinels', () => {
  it.each([
    ['ErrTaskPrepared', ErrTaskPrepared, 'exec: task already prepared'],
    ['ErrTaskStarted', ErrTaskStarted, 'exec: task already started'],
    ['ErrTaskRetry', ErrTaskRetry, 'exec: task retry'],
    ['ErrTaskNoop', ErrTaskNoop, 'exec: task noop'],
    ['ErrTaskUpdateRejected', ErrTaskUpdateRejected, 'exec: task update rejected'],
    ['ErrControllerClosed', ErrControllerClosed, 'exec: controller closed'],
    ['ErrRuntimeUnsupported', ErrRuntimeUnsupported, 'exec: unsupported runtime'],
    ['ErrDependencyNotReady', ErrDependencyNotReady, 'dependency not ready'],
    ['ErrClosed', ErrClosed, 'agent: task manager closed'],
  ] as const)('%s carries its code and a default message', (code, Type, message) => {
    const err = new Type();
    expect(err).toBeInstanceOf(ExecError);
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe(code);
    expect(err.name).toBe(code);
    expect(err.message).toBe(message);
  });

  it('keeps a caller-given message and cause', () => {
    const cause = new Error('image tag changed');
    const err = new ErrTaskUpdateRejected('cannot change the image of a running task', { cause });
    expect(err.message).toBe('cannot change the image of a running task');
    expect(err.cause).toBe(cause);
  });

  it('errorIs finds a sentinel through any depth of cause wrapping', () => {
    const err = new Wrapped('outer', new Wrapped('middle', new ErrTaskPrepared()));
    expect(errorIs(err, ErrTaskPrepared)).toBe(true);
    expect(errorIs(err, ErrTaskStarted)).toBe(false);
  });

  it('causeChain stops on a cause cycle', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect([...causeChain(b)]).toEqual([b, a]);
  });
});

describe('temporary errors', () => {
  it('scenario 19 (TestIsTemporary): a temporary error wrapped five times is still temporary', () => {
    let err: unknown = makeTemporary(new Error('engine unreachable'));
    err = new Error('wrap 1', { cause: err });
    err = new Wrapped('wrap 2', err);
    err = new Error('wrap 3', { cause: err });
    err = new Wrapped('wrap 4', err);
    err = new Error('wrap 5', { cause: err });
    expect(isTemporary(err)).toBe(true);
  });

  it('scenario 19 (TestIsTemporary): undefined, null and plain errors are not temporary', () => {
    expect(isTemporary(undefined)).toBe(false);
    expect(isTemporary(null)).toBe(false);
    expect(isTemporary(new Error('plain'))).toBe(false);
    expect(isTemporary(new Wrapped('wrapped', new Error('plain')))).toBe(false);
  });

  it('makeTemporary keeps the wrapped message and the wrapped error as cause', () => {
    const cause = new Error('registry timeout');
    const err = makeTemporary(cause);
    expect(err).toBeInstanceOf(TemporaryError);
    expect((err as TemporaryError).message).toBe('registry timeout');
    expect((err as TemporaryError).cause).toBe(cause);
  });

  it('makeTemporary returns an already temporary error unchanged', () => {
    const err = makeTemporary(new Error('x'));
    expect(makeTemporary(err)).toBe(err);
  });

  it('a wrapper that declares itself permanent overrides a temporary cause', () => {
    const permanent = Object.assign(new Error('gave up', { cause: makeTemporary(new Error('flaky')) }), { temporary: false });
    expect(isTemporary(permanent)).toBe(false);
  });

  it('ErrDependencyNotReady is temporary without being wrapped', () => {
    expect(isTemporary(new ErrDependencyNotReady())).toBe(true);
  });
});

describe('exit coders and container statusers', () => {
  it('an ExitError is an exit coder and reports its container status', () => {
    const err = new ExitError({ exitCode: 3, containerStatus: { containerId: 'c1', exitCode: 3 } });
    expect(isExitCoder(err)).toBe(true);
    expect(err.exitCode).toBe(3);
    expect(isContainerStatuser(err)).toBe(true);
    expect(err.containerStatus()).toEqual({ containerId: 'c1', exitCode: 3 });
  });

  it('a wrapped exit coder is not an exit coder, as SwarmKit does not unwrap it', () => {
    expect(isExitCoder(new Error('wrapped', { cause: new ExitError({ exitCode: 1 }) }))).toBe(false);
    expect(isContainerStatuser(new Error('wrapped', { cause: new ContainerStatusError('gone', {}) }))).toBe(false);
  });

  it('a plain error is neither an exit coder nor a container statuser', () => {
    expect(isExitCoder(new Error('x'))).toBe(false);
    expect(isContainerStatuser(new Error('x'))).toBe(false);
    expect(isPortStatuser(new Error('x'))).toBe(false);
  });

  it('a ContainerStatusError reports the status it was given', () => {
    const err = new ContainerStatusError('no such container', { containerId: 'c9', pid: 0 });
    expect(err.containerStatus()).toEqual({ containerId: 'c9', pid: 0 });
  });

  it('ExitError.fromExit is undefined for a clean exit', () => {
    expect(ExitError.fromExit({ exitCode: 0, signal: 0 })).toBeUndefined();
  });

  it('ExitError.fromExit uses Docker wording for a non-zero exit code', () => {
    expect(ExitError.fromExit({ exitCode: 1, signal: 0 })?.message).toBe('task: non-zero exit (1)');
  });

  it('ExitError.fromExit names the signal that killed the workload', () => {
    const err = ExitError.fromExit({ exitCode: 137, signal: 9 });
    expect(err).toMatchObject({ exitCode: 137, signal: 9, message: 'task: killed by signal 9 (exit code 137)' });
  });

  it("ExitError.fromExit keeps the driver's own error message", () => {
    expect(ExitError.fromExit({ exitCode: 0, signal: 0, err: 'executor lost' })?.message).toBe('executor lost');
  });
});

describe('cancellation', () => {
  it('an AbortSignal abort reason is a cancellation', () => {
    expect(isCancellation(AbortSignal.abort().reason)).toBe(true);
  });

  it('a TimeoutError is a cancellation', () => {
    expect(isCancellation(new DOMException('timed out', 'TimeoutError'))).toBe(true);
  });

  it('a wrapped AbortError is a cancellation', () => {
    expect(isCancellation(new Wrapped('wait', new DOMException('aborted', 'AbortError')))).toBe(true);
  });

  it("the given signal's own abort reason is a cancellation, whatever it is", () => {
    const ac = new AbortController();
    const reason = new Error('superseded by an update');
    ac.abort(reason);
    expect(isCancellation(reason, ac.signal)).toBe(true);
    expect(isCancellation(reason)).toBe(false);
  });

  it('a plain error is not a cancellation', () => {
    expect(isCancellation(new Error('boom'))).toBe(false);
  });
});
