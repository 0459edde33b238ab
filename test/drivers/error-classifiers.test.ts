/**
 * Errors carry behaviour, not strings (SwarmKit's agent/exec/errors.go): only an object (never a string or
 * a function) can say it is temporary, an exit code, a cancellation or a port status; the cause chain ends
 * at the first value without a cause; each error class has its name and its message for users.
 */
import { describe, expect, it } from 'vitest';
import {
  causeChain, ContainerStatusError, ErrInvalidTransition, ExitError, isCancellation, isExitCoder, isPortStatuser, isTemporary, messageOf, TemporaryError,
} from '../../src/drivers/errors.ts';

describe('the cause chain', () => {
  it('is the error alone when it has no cause, and a string alone', () => {
    expect([...causeChain(new Error('a'))]).toHaveLength(1);
    expect([...causeChain('plain')]).toEqual(['plain']);
    expect([...causeChain(undefined)]).toEqual([]);
  });
});

describe('classifiers look at objects only', () => {
  const fnWith = (props: Record<string, unknown>) => Object.assign(() => undefined, props);
  it.each<[string, (v: unknown) => boolean, unknown, boolean]>([
    ['temporary: a string', isTemporary, 'temporary', false],
    ['temporary: a function with temporary: true', isTemporary, fnWith({ temporary: true }), false],
    ['temporary: an object saying so', isTemporary, { temporary: true }, true],
    ['temporary: an object saying it with a string', isTemporary, { temporary: 'yes' }, false],
    ['exit coder: a string', isExitCoder, 'exit 1', false],
    ['exit coder: null', isExitCoder, null, false],
    ['exit coder: an object with a numeric exitCode', isExitCoder, { exitCode: 1 }, true],
    ['cancellation: a plain error', (v) => isCancellation(v), new Error('boom'), false],
    ['cancellation: a string', (v) => isCancellation(v), 'AbortError', false],
    ['cancellation: an AbortError', (v) => isCancellation(v), Object.assign(new Error('x'), { name: 'AbortError' }), true],
    ['cancellation: a TimeoutError', (v) => isCancellation(v), Object.assign(new Error('x'), { name: 'TimeoutError' }), true],
    ['port statuser: an object with a portStatus method', isPortStatuser, { portStatus: () => undefined }, true],
    ['port statuser: an object whose portStatus is not a method', isPortStatuser, { portStatus: 1 }, false],
    ['port statuser: an object without one', isPortStatuser, {}, false],
    ['port statuser: null', isPortStatuser, null, false],
    ['port statuser: a string', isPortStatuser, 'portStatus', false],
  ])('%s → %s', (_what, is, value, expected) => {
    expect(is(value)).toBe(expected);
  });

  it("an error is a cancellation when it is the aborted signal's reason", () => {
    const ac = new AbortController();
    const reason = new Error('stopped');
    expect(isCancellation(reason, ac.signal)).toBe(false);
    ac.abort(reason);
    expect(isCancellation(reason, ac.signal)).toBe(true);
    expect(isCancellation(new Error('another failure'), ac.signal)).toBe(false);
  });
});

describe('messages and names', () => {
  it.each<[string, unknown, string]>([
    ['an object, as JSON', { a: 1 }, '{"a":1}'],
    ['undefined, as a word', undefined, 'undefined'],
    ['a string, as it is', 'plain', 'plain'],
  ])('messageOf %s', (_what, value, expected) => {
    expect(messageOf(value)).toBe(expected);
  });

  it('messageOf an object JSON cannot write is its string form', () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(messageOf(loop)).toBe('[object Object]');
  });

  it('an invalid transition names both states and the rule', () => {
    expect(new ErrInvalidTransition(512, 64)).toMatchObject({ code: 'ErrInvalidTransition', message: 'invalid state transition: 512 -> 64; task states only move forward' });
  });

  it.each<[string, Error]>([
    ['TemporaryError', new TemporaryError(new Error('x'))],
    ['ExitError', new ExitError({ exitCode: 1 })],
    ['ContainerStatusError', new ContainerStatusError('x', undefined)],
  ])('%s carries its name', (name, err) => {
    expect(err.name).toBe(name);
  });
});

describe('exits', () => {
  it('an exit is not out of memory unless it says so, and then says so', () => {
    expect(new ExitError({ exitCode: 1 }).oomKilled).toBe(false);
    expect(new ExitError({ exitCode: 137, oomKilled: true })).toMatchObject({ oomKilled: true, message: 'task: out of memory (exit code 137)' });
  });

  it.each<[string, { exitCode: number; signal: number; err?: string; oomKilled?: boolean }, string | undefined]>([
    ['a clean exit is no error', { exitCode: 0, signal: 0 }, undefined],
    ['a signal with exit code 0 is an error', { exitCode: 0, signal: 9 }, 'task: killed by signal 9 (exit code 0)'],
    ['an error text with exit code 0 is an error, with that text', { exitCode: 0, signal: 0, err: 'driver lost it' }, 'driver lost it'],
    ['out of memory with exit code 0 is an error', { exitCode: 0, signal: 0, oomKilled: true }, 'task: out of memory (exit code 0)'],
    ['a non-zero exit', { exitCode: 3, signal: 0 }, 'task: non-zero exit (3)'],
  ])('%s', (_what, exit, message) => {
    expect(ExitError.fromExit(exit as never)?.message).toBe(message);
  });
});
