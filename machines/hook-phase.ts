/**
 * One hook phase, the loop both runners use: Nomad calls a phase's hooks one at a time, in registration
 * order (the task runner's prestart, poststart, preKilling, exited, update, stop, shutdown; the alloc
 * runner's prerun, preKill, postrun, destroy, update, shutdown), each as a child actor `<phase>:<hook>`.
 *
 *   <phase>                      meta: { hookPhase: '<phase>' }; entry resets the phase's cursor
 *   ├─ next ──[phaseComplete]──────────────────────────────▶ where the phase ends (`next` argument)
 *   │    └──[skip guard]── skip actions, advance ─▶ next     (prestart hooks that reported Done)
 *   └─ calling: spawn `<phase>:<hook>`
 *        ├─ done  ── onDone actions, advance ──▶ next        (the last hook's: straight to where the phase ends)
 *        └─ error ── onError actions, advance ─▶ next        (record the error and go on), or
 *                 ── onError actions ─────────▶ onError.target  (fail the phase: prestart, prerun)
 *
 *   before ──[guard, phaseEmpty]── actions, the phase's entry ──▶ next   (`skipEmptyPhase`: a phase with no
 *         ──[guard]──────────────────────────────────────────▶ <phase>    hooks is gone around, drawn as entered)
 *
 * The runners register the loop's guards and cursor actions (`hookLoopGuards`, `hookLoopActions`) with
 * `setup().extend()`, and their own `call` / `onDone` / `onError` actions, which build each hook's input
 * and keep its output. The `hookPhase` meta lets the statechart walker fold the loop into one box.
 */
import { and, assign, enqueueActions, stopChild, type EventObject } from 'xstate';
import { assignContext } from './context-assign.ts';
import { hookActorId } from './hook-calls.ts';

/** What the loop keeps in a runner's context: each phase's hook names (the plan) and where it is. */
export interface HookLoopContext<P extends string = string> {
  hooks: Partial<Record<P, string[]>>;
  cursor: Partial<Record<P, number>>;
}

/** The params every loop guard and action takes: which phase. */
export interface PhaseParams<P extends string = string> {
  phase: P;
}

/** The hook a phase is at, or undefined once every hook of the phase has run. */
export function currentHook<P extends string>(ctx: HookLoopContext<P>, phase: P): string | undefined {
  return ctx.hooks[phase]?.[ctx.cursor[phase] ?? 0];
}

/** The cursor moved past the phase's current hook, for an onDone action that advances it itself (one assign, not two). */
export function advancedCursor<P extends string>(ctx: HookLoopContext<P>, phase: P): Partial<Record<P, number>> {
  return { ...ctx.cursor, [phase]: (ctx.cursor[phase] ?? 0) + 1 };
}

/** The loop's guards, to register with `setup().extend({ guards: hookLoopGuards })`. */
export const hookLoopGuards = {
  /** The plan has no hook for the phase: a transition into it may go around it (`skipEmptyPhase`). */
  phaseEmpty: ({ context }: { context: HookLoopContext }, p: PhaseParams) => !context.hooks[p.phase]?.length,
  /** Every hook of the phase has run. */
  phaseComplete: ({ context }: { context: HookLoopContext }, p: PhaseParams) => currentHook(context, p.phase) === undefined,
  /** The phase is at its last hook: once it has answered, the phase is complete. */
  atLastHook: ({ context }: { context: HookLoopContext }, p: PhaseParams) => (context.cursor[p.phase] ?? 0) + 1 === (context.hooks[p.phase]?.length ?? 0),
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
      if ((context.cursor[p.phase] ?? 0) !== 0) enqueue.assign({ cursor: { ...context.cursor, [p.phase]: 0 } } as Partial<TContext>);
    }),
    advanceCursor: (assignContext as typeof assign)<TContext, TEvent, PhaseParams, TEvent, never>(({ context }, p) => ({ cursor: advancedCursor(context, p.phase) }) as Partial<TContext>),
    /** Leaving `calling` (the hook answered, or a kill or shutdown cut it short) stops the hook's child: its signal aborts. */
    stopHook: stopChild<TContext, TEvent, PhaseParams, TEvent>(({ context }, p) => hookActorId(p.phase, currentHook(context, p.phase) ?? '')),
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
 * The transitions into a hook phase, with one before them that goes around the phase when the plan has no
 * hooks for it. XState takes a state's `always` in a microstep (and a machine snapshot) of its own and an
 * `initial` takes no guard, so entering an empty phase only to leave it cost one of each, 14 per 3-task
 * lifecycle: the skip edge has `into`'s guard and `phaseEmpty`, runs `into`'s actions and then the phase's
 * own `entry` (as entering it would), and lands on `next`, where the phase ends (its `hookPhase` argument).
 * `at` is the phase's state id; `into` targets it or a state whose initial path enters it. The walker
 * (src/inspect/statechart.ts) draws the skip edge as `into` and then the phase's way out, so the picture is
 * the one without it. Cursor: an empty phase never moves its own, so there is none to reset.
 */
export function skipEmptyPhase<P extends string, TEntry extends string = never>(phase: P, at: `#${string}`, next: string, entry: readonly TEntry[] = []) {
  const empty = { type: 'phaseEmpty' as const, params: { phase } };
  const meta: SkipsPhaseMeta = { skipsPhase: at.slice(1) };
  return <const T extends PhaseTransition>(into: T): T[] => {
    const actions = into.actions === undefined ? [] : Array.isArray(into.actions) ? into.actions : [into.actions];
    const skip = {
      ...into,
      guard: into.guard === undefined ? empty : and([into.guard as never, empty]),
      target: next,
      actions: [...(actions as T['actions'][]), ...entry],
      meta,
    };
    return [skip as T, into];
  };
}
