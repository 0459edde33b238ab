/**
 * The logic of the runners' hook, driver and timer calls: XState's `fromPromise` contract, less its per-call
 * costs. As with `fromPromise`: the call's answer is the actor's output (`xstate.done.actor.<id>`), its
 * rejection the actor's error (`xstate.error.actor.<id>`); the persisted snapshot is
 * `{ status, output, error, input }`, so a call still active when the runner was saved runs again on restore;
 * a call stopped before it settles sends nothing, however it settles later. Unlike it:
 * - the AbortSignal is made when the call first reads `signal`, not for every call (a signal is an
 *   EventTarget: a few microseconds and its garbage each);
 * - a stop aborts it with one shared reason (`CALL_STOPPED`, an AbortError) instead of `abort()`, which makes
 *   a new DOMException with a stack trace for every stopped call (a kill stops one or two);
 * - a call that only has something to undo at a stop (a timer) registers it with `onStop` and reads no signal:
 *   no AbortSignal, listener or abort event for it.
 */
import type { ActorSystem, AnyActorRef, EventObject, PromiseActorLogic, PromiseSnapshot } from 'xstate';

/** Why a call's signal aborted: its actor was stopped (the runner left the state that invoked it). */
export const CALL_STOPPED: Error = new DOMException('the call was stopped before it settled: its actor was stopped', 'AbortError');

/** What a call's body is given, as `fromPromise` gives it. */
export interface CallArgs<TInput, TEmitted extends EventObject = EventObject> {
  readonly input: TInput;
  readonly system: ActorSystem<any>;
  readonly self: AnyActorRef;
  /** Aborted (reason `CALL_STOPPED`) when the actor is stopped before the call settles. */
  readonly signal: AbortSignal;
  readonly emit: (event: TEmitted) => void;
  /**
   * Runs `cleanup` if the actor is stopped before the call settles (at once if it was stopped already). For
   * a call that only has an undo (a timer to clear) and never reads `signal`, no AbortSignal is made at all.
   */
  onStop(cleanup: () => void): void;
}

const RESOLVE = 'xstate.promise.resolve';
const REJECT = 'xstate.promise.reject';
const STOP = 'xstate.stop';

/** One running call: its signal, made on first read, and whether its actor was stopped. */
class Call<TInput, TEmitted extends EventObject> implements CallArgs<TInput, TEmitted> {
  private controller: AbortController | undefined;
  private cleanup: (() => void) | undefined;
  private stopped = false;
  constructor(
    readonly input: TInput,
    readonly system: ActorSystem<any>,
    readonly self: AnyActorRef,
    readonly emit: (event: TEmitted) => void,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.stopped) this.controller.abort(CALL_STOPPED);
    }
    return this.controller.signal;
  }

  onStop(cleanup: () => void): void {
    if (this.stopped) return cleanup();
    const before = this.cleanup;
    this.cleanup = before ? () => (before(), cleanup()) : cleanup;
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort(CALL_STOPPED);
    this.cleanup?.();
  }
}

/** The calls not yet settled or stopped, by actor (weak: an actor dropped without a stop takes its entry along). */
const running = new WeakMap<AnyActorRef, Call<unknown, EventObject>>();

function settle(self: AnyActorRef, type: typeof RESOLVE | typeof REJECT, data: unknown): void {
  // Stopped first (or settled already): the runner has moved on and hears nothing.
  if (self.getSnapshot().status !== 'active') return;
  running.delete(self);
  self.send({ type, data });
}

/** Promise actor logic running `body` once per actor start (and again after a restore of an active one). */
export function fromCall<TOutput, TInput = unknown, TEmitted extends EventObject = EventObject>(
  body: (args: CallArgs<TInput, TEmitted>) => PromiseLike<TOutput>,
): PromiseActorLogic<TOutput, TInput, TEmitted> {
  return {
    config: body,
    transition: (state, event, { self }): PromiseSnapshot<TOutput, TInput> => {
      if (state.status !== 'active') return state;
      switch (event.type) {
        case RESOLVE:
          return { status: 'done', output: event['data'] as TOutput, error: undefined, input: undefined };
        case REJECT:
          return { status: 'error', output: undefined, error: event['data'], input: undefined };
        case STOP:
          running.get(self)?.stop();
          running.delete(self);
          return { ...state, status: 'stopped', input: undefined };
        default:
          return state;
      }
    },
    start: (state, { self, system, emit }) => {
      if (state.status !== 'active') return;
      const call = new Call<TInput, TEmitted>(state.input as TInput, system, self, emit);
      running.set(self, call as Call<unknown, EventObject>);
      // A body that throws instead of rejecting fails the actor as with fromPromise (XState catches it in start).
      Promise.resolve(body(call)).then(
        (output) => settle(self, RESOLVE, output),
        (err: unknown) => settle(self, REJECT, err),
      );
    },
    getInitialSnapshot: (_, input) => ({ status: 'active', output: undefined, error: undefined, input }),
    getPersistedSnapshot: (snapshot) => snapshot,
    restoreSnapshot: (snapshot) => snapshot as PromiseSnapshot<TOutput, TInput>,
  };
}
