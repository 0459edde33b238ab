/**
 * Built-in hooks whose methods never look at their AbortSignal (alloc_dir, task_dir, validate, stats). A hook
 * or driver call makes its AbortSignal when it first reads it (machines/call-actor.ts), and the bindings read
 * it only to hand it on; an allocation with the built-in hooks makes 13 such calls per lifecycle, each an
 * EventTarget to build and collect. For a hook marked here the bindings hand on one shared signal that never
 * aborts instead: it would not have read the other. Only for hooks written to ignore the signal; a marked hook
 * that starts reading it must lose its mark (its call would no longer be cancelled by a stop).
 */

const marked = new WeakSet<object>();

/** The signal handed to a marked hook: never aborted. */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** Marks `hook` as one whose methods ignore their AbortSignal; returns it. */
export function signalFree<H extends object>(hook: H): H {
  marked.add(hook);
  return hook;
}

/** Whether `hook` was marked with `signalFree`. */
export function isSignalFree(hook: object): boolean {
  return marked.has(hook);
}

/**
 * The same for single methods of a driver's controller (the mock's): a driver call makes its AbortSignal when the
 * bindings first read it, and a controller may say which of its methods would never look at theirs. The mark names
 * the method itself, so a method replaced on the object after (a wrapper that does read its signal) is not
 * taken for the marked one. Only this project's own drivers mark; a user's driver gets its call's signal as before.
 */
export type SignalFreeCall = 'prepare' | 'start' | 'remove';

type Methods = Partial<Record<SignalFreeCall, unknown>>;
const markedCalls = new WeakMap<object, Methods>();

/** Marks `methods` (the functions `controller` has under those names) as ignoring their AbortSignal; returns it. */
export function signalFreeCalls<C extends object>(controller: C, methods: Methods): C {
  // Copied into an empty literal, not `{ ...marked, ...methods }`: on Node 20 a spread's keys added after it take
  // V8's slow path (about a microsecond each; machines/record-copy.ts). The mock marks each controller twice.
  markedCalls.set(controller, Object.assign({}, markedCalls.get(controller), methods));
  return controller;
}

/** Whether `controller`'s `call` is still the method marked with `signalFreeCalls`. */
export function ignoresSignal(controller: object, call: SignalFreeCall): boolean {
  const marked = markedCalls.get(controller)?.[call];
  return marked !== undefined && (controller as Methods)[call] === marked;
}
