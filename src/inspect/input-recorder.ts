/**
 * Turns XState's raw inspection events into replay lines (replay-format.ts): every input that crosses into
 * a machine actor and every step a machine takes. Classification is by who sent an event to a machine:
 * nobody (a command from outside; a root's start), a non-machine child (a driver call, hook or sleep
 * settling), or the clock (a delayed event). Events machines send each other follow from those inputs and
 * are not inputs.
 *
 * Time: the machines read the clock while they process an input, and a real clock may tick in between. The
 * clock handed to the machines through `machineClock` (createAllocRunner's option) answers every reading
 * made while an input is processed with the time the input arrived, the time the line records, so a
 * replay that sets its clock to that time reads exactly what the run read.
 */
import type { InspectionEvent } from 'xstate';
import type { ActorPath, ReplayLine, ReplayStepLine } from './replay-format.ts';

/** The clock shape XState and the runtime use. */
export interface ReplayClockLike {
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

/** Records replay lines from a runner's raw inspection events. */
export interface InputRecorder {
  /** Feed every raw inspection event (the stream's `subscribeRaw`, or an `inspect` option). */
  inspect(ev: InspectionEvent): void;
  /** The clock to give the machines (createAllocRunner's `machineClock`): readings during an input answer its time. */
  machineClock(clock: ReplayClockLike): ReplayClockLike;
}

interface Ref {
  sessionId: string;
  id: string;
  _parent?: Ref;
  logic?: unknown;
  src?: unknown;
  options?: { input?: unknown; snapshot?: unknown };
  system?: { _clock?: Partial<ReplayClockLike> };
}

/** A machine clock: readings answer `latched` while an input is processed. */
interface LatchingClock extends ReplayClockLike {
  latched: number | undefined;
  readonly base: ReplayClockLike;
}

/** Whether an actor runs a state machine (the only actors whose steps and inputs matter). */
export function isMachineRef(ref: unknown): boolean {
  const logic = (ref as Ref | undefined)?.logic;
  return typeof logic === 'object' && logic !== null && 'root' in logic;
}

const paths = new WeakMap<object, ActorPath>();

/** An actor's id path from its root (cached: an actor's path never changes). */
export function actorPathOf(ref: object): ActorPath {
  let path = paths.get(ref);
  if (!path) {
    const r = ref as Ref;
    path = r._parent ? [...actorPathOf(r._parent), r.id] : [r.id];
    paths.set(ref, path);
  }
  return path;
}

const SETTLES = /^xstate\.(done|error)\.actor\./;

/** Whether two state values name the same states (XState builds a new value object on every snapshot). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** A recorder whose lines go to `emit`, in the order the inputs and steps happened. */
export function createInputRecorder(emit: (line: ReplayLine) => void): InputRecorder {
  const latching = new WeakSet<object>();
  /** The due time of the timer whose callback is running (its events are timer inputs). */
  let firingDue: number | undefined;
  /** Per machine actor, the watched context fields as last recorded (by identity: context is replaced, never mutated). */
  const watched = new WeakMap<object, { value?: unknown; status?: string; taskState?: unknown; clientStatus?: unknown }>();

  /** The time of an input to `ref`'s system: the latched time when its clock is ours (and latches it), else a reading. */
  const timeOf = (ref: Ref): number => {
    const clock = ref.system?._clock as LatchingClock | undefined;
    if (clock && latching.has(clock)) {
      if (clock.latched === undefined) {
        clock.latched = clock.base.now();
        // Processing an input is synchronous: the latch ends once it is done.
        queueMicrotask(() => (clock.latched = undefined));
      }
      return clock.latched;
    }
    return typeof clock?.now === 'function' ? clock.now() : Date.now();
  };

  const step = (ref: Ref, event: { type: string }, snapshot: { status: string; value?: unknown; context?: Record<string, unknown> }) => {
    const line: ReplayStepLine = { kind: 'replay-step', to: actorPathOf(ref), event: event.type, value: snapshot.value, status: snapshot.status };
    const ctx = snapshot.context;
    let last = watched.get(ref);
    if (!last) watched.set(ref, (last = {}));
    let changed = last.value === undefined || last.status !== snapshot.status || !sameValue(last.value, snapshot.value);
    last.value = snapshot.value;
    last.status = snapshot.status;
    if (ctx) {
      if ('taskState' in ctx && ctx.taskState !== last.taskState) changed = Boolean((line.taskState = last.taskState = ctx.taskState));
      if ('clientStatus' in ctx && ctx.clientStatus !== last.clientStatus) changed = Boolean((line.clientStatus = last.clientStatus = ctx.clientStatus as string));
    }
    // A step that changed nothing compared (a parent hearing a child's step that is no news to it) is left
    // out on both sides, recording and replay: most of an allocation's steps are such.
    if (changed) emit(line);
  };

  return {
    inspect(ev) {
      const ref = ev.actorRef as unknown as Ref;
      switch (ev.type) {
        case '@xstate.actor':
          // A root machine's initial context is computed as it is created: that is its first reading.
          if (!ref._parent && isMachineRef(ref)) {
            const line: ReplayLine = { kind: 'replay-root', at: timeOf(ref), id: ref.id, machine: (ref.logic as { id: string }).id };
            if (!latching.has(ref.system?._clock as object)) line.pinnedClock = false;
            if (ref.options?.input !== undefined) line.input = ref.options.input;
            if (ref.options?.snapshot !== undefined) line.snapshot = ref.options.snapshot;
            emit(line);
          }
          return;
        case '@xstate.snapshot':
          if (!isMachineRef(ref)) return;
          // A root stopped from outside (`runner.stop()`) is sent no event XState inspects: its stop is an input too.
          if (!ref._parent && ev.event.type === 'xstate.stop') emit({ kind: 'replay-input', at: timeOf(ref), input: 'command', to: actorPathOf(ref), event: { type: 'xstate.stop' } });
          step(ref, ev.event, ev.snapshot as never);
          return;
        case '@xstate.event': {
          if (!isMachineRef(ref)) return;
          const source = ev.sourceRef as unknown as Ref | undefined;
          const event = ev.event as { type: string };
          if (source === undefined) {
            // A root's start: its input is in its root line already.
            const sent = event.type === 'xstate.init' ? { type: event.type } : event;
            emit({ kind: 'replay-input', at: timeOf(ref), input: 'command', to: actorPathOf(ref), event: sent });
          } else if (!isMachineRef(source)) {
            if (!SETTLES.test(event.type)) return;
            const line: ReplayLine = { kind: 'replay-input', at: timeOf(ref), input: 'result', to: actorPathOf(ref), event, from: actorPathOf(source) };
            if (typeof source.src === 'string') line.src = source.src;
            emit(line);
          } else if (firingDue !== undefined) {
            emit({ kind: 'replay-input', at: timeOf(ref), input: 'timer', to: actorPathOf(ref), event, due: firingDue });
          }
          return;
        }
      }
    },
    machineClock(base) {
      const clock: LatchingClock = {
        latched: undefined,
        base,
        now: () => clock.latched ?? base.now(),
        setTimeout: (fn, ms) => {
          const due = clock.now() + Math.max(0, ms || 0);
          return base.setTimeout(() => {
            const outer = firingDue;
            firingDue = due;
            try {
              fn();
            } finally {
              firingDue = outer;
            }
          }, ms);
        },
        clearTimeout: (id) => base.clearTimeout(id),
      };
      latching.add(clock);
      return clock;
    },
  };
}
