/**
 * One hook phase, the loop both runners use: Nomad calls a phase's hooks one at a time, in registration
 * order (the task runner's prestart, poststart, preKilling, exited, update, stop, shutdown; the alloc
 * runner's prerun, preKill, postrun, destroy, update, shutdown), each as a child actor `<phase>:<hook>`.
 *
 *   <phase>                      meta: { hookPhase: '<phase>' }; entry resets the phase's cursor
 *   ├─ next ──[phaseComplete]──────────────────────────────▶ where the phase ends (`next` argument)
 *   │    └──[skip guard]── skip actions, advance ─▶ next     (prestart hooks that reported Done)
 *   └─ calling: spawn `<phase>:<hook>`
 *        ├─ done  ── onDone actions, advance ──▶ next        (the last hook's: straight to where the phase ends;
 *        │                                                    one whose following hook is to be called: to calling)
 *        └─ error ── onError actions, advance ─▶ next        (record the error and go on), or
 *                 ── onError actions ─────────▶ onError.target  (fail the phase: prestart, prerun)
 *
 *   before ──[guard, phaseEmpty]── actions, the phase's entry ──▶ next   (`skipEmptyPhase`: a phase with no
 *         ──[guard, first hook to call]──────────────────────▶ <phase>.calling   hooks is gone around, one with
 *         ──[guard]──────────────────────────────────────────▶ <phase>    hooks entered at its call; drawn as entered)
 *
 * The runners register the loop's guards and cursor actions (`hookLoopGuards`, `hookLoopActions`) with
 * `setup().extend()`, and their own `call` / `onDone` / `onError` actions, which build each hook's input
 * and keep its output. The `hookPhase` meta lets the statechart walker fold the loop into one box.
 */
import { and, assign, enqueueActions, not, stopChild, type EventObject } from 'xstate';
import { assignContext } from './context-assign.ts';
import { stopCall } from './child-actions.ts';
import { hookActorId } from './hook-calls.ts';
import { withEntry } from './record-copy.ts';

/** What the loop keeps in a runner's context: each phase's hook names (the plan) and where it is. */
export interface HookLoopContext<P extends string = string> {
  hooks: Partial<Record<P, string[]>>;
  cursor: Partial<Record<P, number>>;
}

/**
 * The params every loop guard and action takes: which phase, and for a guard asked before the cursor moves
 * (a transition that calls a hook without going through `next`), which hook: the phase's `first` (a phase
 * being entered, whose entry resets the cursor) or the one `following` the current one. Unset: the current.
 */
export interface PhaseParams<P extends string = string> {
  phase: P;
  at?: HookAt;
}

/** Which hook of a phase a guard asks about, when not the current one (see PhaseParams). */
export type HookAt = 'first' | 'following';

/** The hook a phase is at, or undefined once every hook of the phase has run. */
export function currentHook<P extends string>(ctx: HookLoopContext<P>, phase: P): string | undefined {
  return ctx.hooks[phase]?.[ctx.cursor[phase] ?? 0];
}

/** The phase's hook that `at` names (the current one when unset), or undefined when there is none. */
export function hookAt<P extends string>(ctx: HookLoopContext<P>, phase: P, at: HookAt | undefined): string | undefined {
  if (at === undefined) return currentHook(ctx, phase);
  return ctx.hooks[phase]?.[at === 'first' ? 0 : (ctx.cursor[phase] ?? 0) + 1];
}

/** The cursor moved past the phase's current hook, for an onDone action that advances it itself (one assign, not two). */
export function advancedCursor<P extends string>(ctx: HookLoopContext<P>, phase: P): Partial<Record<P, number>> {
  return withEntry(ctx.cursor, phase, (ctx.cursor[phase] ?? 0) + 1);
}

/** The loop's guards, to register with `setup().extend({ guards: hookLoopGuards })`. */
export const hookLoopGuards = {
  /** The plan has no hook for the phase: a transition into it may go around it (`skipEmptyPhase`). */
  phaseEmpty: ({ context }: { context: HookLoopContext }, p: PhaseParams) => !context.hooks[p.phase]?.length,
  /** Every hook of the phase has run. */
  phaseComplete: ({ context }: { context: HookLoopContext }, p: PhaseParams) => currentHook(context, p.phase) === undefined,
  /** The phase is at its last hook: once it has answered, the phase is complete. */
  atLastHook: ({ context }: { context: HookLoopContext }, p: PhaseParams) => (context.cursor[p.phase] ?? 0) + 1 === (context.hooks[p.phase]?.length ?? 0),
  /** The phase has the hook `at` names (its first, or the one after the current): a call may go straight to it. */
  hasHook: ({ context }: { context: HookLoopContext }, p: PhaseParams) => hookAt(context, p.phase, p.at) !== undefined,
  /** The event is the current hook's done or error (a stale child's late answer is not). */
  isCurrentHook: ({ context, event }: { context: HookLoopContext; event: EventObject }, p: PhaseParams) => {
    const name = currentHook(context, p.phase);
    if (!name) return false;
    const id = hookActorId(p.phase, name);
    return event.type === `xstate.done.actor.${id}` || event.type === `xstate.error.actor.${id}`;
  },
};

/** The loop's cursor actions for a runner's context and events, to register with `setup().extend()`. */
export function hookLoopActions<TContext extends HookLoopContext, TEvent extends EventObject>() {
  return {
    /**
     * A phase starts at its first hook. Only a phase left part-way or run before has a cursor to reset:
     * most phases are entered with none, and an assign is a new snapshot of the runner.
     */
    resetCursor: enqueueActions<TContext, TEvent, PhaseParams, TEvent, never, never, never, never, never>(({ enqueue, context }, p) => {
      if ((context.cursor[p.phase] ?? 0) !== 0) enqueue.assign({ cursor: withEntry(context.cursor, p.phase, 0) } as Partial<TContext>);
    }),
    advanceCursor: (assignContext as typeof assign)<TContext, TEvent, PhaseParams, TEvent, never>(({ context }, p) => ({ cursor: advancedCursor(context, p.phase) }) as Partial<TContext>),
    /** Leaving `calling` (the hook answered, or a kill or shutdown cut it short) stops the hook's child: its signal aborts. */
    stopHook: (stopCall as typeof stopChild)<TContext, TEvent, PhaseParams, TEvent>(({ context }, p) => hookActorId(p.phase, currentHook(context, p.phase) ?? '')),
  };
}

/** How one runner's phase calls its hooks and handles their answers; action and guard names are the runner's. */
export interface HookPhaseOptions<TAction extends string, TGuard extends string, TEntry> {
  /** The action that spawns the current hook's child `<phase>:<hook>` with the runner's input. */
  call: TAction;
  /** Actions run on a hook's success, before the cursor advances. */
  onDone?: readonly TAction[];
  /** The onDone actions advance the cursor themselves (`advancedCursor`), so no advanceCursor follows them. */
  onDoneAdvances?: boolean;
  /** Actions run on a hook's error; with a `target` the phase fails there, without it the next hook runs. */
  onError: { actions: readonly TAction[]; target?: string };
  /** A hook this guard says is done already is not called; these actions run instead. */
  skip?: { guard: TGuard; actions: readonly TAction[] };
  /** Extra entry actions of the phase (after the cursor is reset). */
  entry?: readonly TEntry[];
}

/**
 * The state config of one hook phase: `next` picks the current hook (or leaves for `next` when none is left),
 * `calling` runs it. Spread it into a state to add transitions (`{ ...hookPhase(...), on: { ... } }`).
 */
export function hookPhase<P extends string, TAction extends string, TGuard extends string = never, TEntry = never>(
  phase: P,
  next: string,
  o: HookPhaseOptions<TAction, TGuard, TEntry>,
) {
  const params = { phase };
  const act = (type: TAction) => ({ type, params });
  const advance = { type: 'advanceCursor' as const, params };
  const isCurrent = { type: 'isCurrentHook' as const, params };
  const isLast = and([isCurrent, { type: 'atLastHook' as const, params }]);
  const skip = o.skip ? [{ guard: { type: o.skip.guard, params }, actions: [...o.skip.actions.map(act), advance] }] : [];
  const doneActions = [...(o.onDone ?? []).map(act), ...(o.onDoneAdvances ? [] : [advance])];
  const endsPhase: EndsPhaseMeta = { endsPhase: true };
  const callsHook: CallsHookMeta = { callsHook: true };
  // The following hook is there and is not one the runner skips (a prestart hook that reported Done).
  const following = { phase, at: 'following' as const };
  const followingToCall = and([isCurrent, { type: 'hasHook' as const, params: following }, ...(o.skip ? [not({ type: o.skip.guard, params: following } as never)] : [])]);
  return {
    meta: { hookPhase: phase },
    initial: 'next' as const,
    entry: [{ type: 'resetCursor' as const, params }, ...(o.entry ?? [])],
    states: {
      next: {
        always: [{ guard: { type: 'phaseComplete' as const, params }, target: next }, ...skip, { target: 'calling' }],
      },
      calling: {
        entry: act(o.call),
        exit: { type: 'stopHook' as const, params },
        on: {
          'xstate.done.actor.*': [
            // The last hook's answer ends the phase in its own microstep, not in a second one for `next`'s
            // phaseComplete (each is a machine snapshot and a scan of the eventless transitions).
            { guard: isLast, actions: doneActions, target: next, meta: endsPhase },
            // A hook's answer calls the following hook in the same microstep when it is one to call: `calling`
            // is left and entered again (its exit stops this hook's child, its entry spawns the next one's).
            { guard: followingToCall, actions: doneActions, target: 'calling', reenter: true, meta: callsHook },
            { guard: isCurrent, actions: doneActions, target: 'next' },
          ],
          'xstate.error.actor.*': o.onError.target
            ? { guard: isCurrent, actions: o.onError.actions.map(act), target: o.onError.target }
            : { guard: isCurrent, actions: [...o.onError.actions.map(act), advance], target: 'next' },
        },
      },
    },
  };
}

/**
 * The meta of a hook's done that ends its phase at once (the phase's last hook): it stands for the done into
 * `next` and `next`'s phaseComplete out, and the walker (src/inspect/statechart.ts) draws it as those two.
 */
export interface EndsPhaseMeta {
  endsPhase: true;
}

/**
 * The meta of a transition that lands on a phase's `calling` without going through `next`: a hook's done that
 * calls the following hook, or a transition into the phase whose first hook is one to call (`skipEmptyPhase`).
 * It stands for the transition into `next` written beside it and `next`'s way to `calling`, and the walker
 * (src/inspect/statechart.ts) draws it as those two.
 */
export interface CallsHookMeta {
  callsHook: true;
}

/**
 * The meta of a transition that goes on through a state it would have stopped in for one microstep (`passes`:
 * that state's id, without `#`), landing where that state's eventless transition with the same target would
 * have taken it. The walker draws it as the transition after it on its event (the one into that state or its
 * parent) and that state's way on.
 */
export interface PassesMeta {
  passes: string;
}

/** The meta of a transition that goes around an empty hook phase: the phase's state id (without `#`). */
export interface SkipsPhaseMeta {
  skipsPhase: string;
}

/** A transition as the runners write one into a phase: a target, maybe a guard and actions. */
interface PhaseTransition {
  target: string;
  guard?: unknown;
  actions?: unknown;
}

/**
 * The transitions into a hook phase, with two before them: one that goes around the phase when the plan has
 * no hooks for it, and one that enters it at its first hook's call.
 * - *Around*: XState takes a state's `always` in a microstep (and a machine snapshot) of its own and an
 *   `initial` takes no guard, so entering an empty phase only to leave it cost one of each, 14 per 3-task
 *   lifecycle: the skip edge has `into`'s guard and `phaseEmpty`, runs `into`'s actions and then the phase's
 *   own `entry` (as entering it would), and lands on `next`, where the phase ends (its `hookPhase` argument).
 *   Cursor: an empty phase never moves its own, so there is none to reset.
 * - *Straight to the call*: a phase with hooks was entered at `next`, whose `always` called the first hook in
 *   a second microstep (10 per 3-task lifecycle with the built-in hooks). This edge has `into`'s guard and
 *   "the first hook is one to call" (`hasHook` at `first`, and not `skip`, the runner's guard for hooks it does
 *   not call, asked of the first hook), and targets the phase's `calling`: the phase's entry resets the cursor
 *   to that first hook before `calling`'s entry spawns it. None of the `into` actions touches the plan, the
 *   cursor or the hook states the guard reads.
 * `at` is the phase's state id; `into` targets it or a state whose initial path enters it. The walker
 * (src/inspect/statechart.ts) draws both edges as `into` and then the phase's way on (out, or to `calling`),
 * so the picture is the one without them.
 */
export function skipEmptyPhase<P extends string, TEntry extends string = never>(
  phase: P,
  at: `#${string}`,
  next: string,
  entry: readonly TEntry[] = [],
  opts: { skip?: string } = {},
) {
  const empty = { type: 'phaseEmpty' as const, params: { phase } };
  const meta: SkipsPhaseMeta = { skipsPhase: at.slice(1) };
  const first = { phase, at: 'first' as const };
  const hasFirst = { type: 'hasHook' as const, params: first };
  const firstToCall = opts.skip === undefined ? hasFirst : and([hasFirst, not({ type: opts.skip, params: first } as never)]);
  const callsHook: CallsHookMeta = { callsHook: true };
  return <const T extends PhaseTransition>(into: T): T[] => {
    const actions = into.actions === undefined ? [] : Array.isArray(into.actions) ? into.actions : [into.actions];
    const skip = {
      ...into,
      guard: into.guard === undefined ? empty : and([into.guard as never, empty]),
      target: next,
      actions: [...(actions as T['actions'][]), ...entry],
      meta,
    };
    const call = {
      ...into,
      guard: into.guard === undefined ? firstToCall : and([into.guard as never, firstToCall as never]),
      target: `${at}.calling`,
      meta: callsHook,
    };
    return [skip as T, call as unknown as T, into];
  };
}
