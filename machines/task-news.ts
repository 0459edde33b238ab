/**
 * A task runner tells its parent (the alloc runner) of news itself: at the end of a step that changed what
 * the alloc mirrors (its TaskState, its rejections, whether its run is complete) it sends one `TASK_CHANGED`
 * carrying those, and nothing after a step that changed none of them (a hook cursor moving, a driver call).
 *
 * Why at the end of a step, from the runner's logic, and not from an action in the statechart: an action's
 * event is resolved where the action stands in its step, with the context as it is there, and one step
 * (a macrostep: the event's transition and the eventless ones after it) often changes the TaskState several
 * times (an exit: Terminated, then Killed, then dead, then run complete). The alloc must hear the step's end
 * state once, as it did when every snapshot was relayed to it (`syncSnapshot`); XState has no action that
 * runs at the end of a macrostep. What this does is what XState's own `sendParent` executes (a deferred
 * `system._relay(self, parent, event)`), pushed after the step's own deferred effects, so the event reaches
 * the parent where the relayed snapshot did: after the events the step sent (to its children) and what it
 * emitted, before the runner's done event, in the parent's mailbox beside the parent's own events.
 * Pure: no I/O, no clock.
 */
import { StateMachine, type AnyActorRef, type AnyActorScope, type AnyStateMachine } from 'xstate';
import type { TaskState } from './model.ts';
import type { TaskRunnerContext } from './task-runner-types.ts';

/** What a task runner tells its alloc after a step that changed any of it: what the alloc mirrors of the task. */
export interface TaskNews {
  type: 'TASK_CHANGED';
  /** The runner's actor id: its task's name. */
  task: string;
  /** The runner's TaskState object itself, never a copy (the alloc's `taskStates.<task>` is the same object). */
  taskState: TaskState;
  /** How many commands the runner has rejected so far (a refused restart shows as one more). */
  rejections: number;
  runComplete: boolean;
}

type NewsContext = Pick<TaskRunnerContext, 'taskState' | 'rejections' | 'runComplete'>;
type MachineSnapshotLike = { status: string; context: NewsContext };

/** Whether a step from `before` to `after` changed what the alloc mirrors. */
export function changedNews(before: NewsContext, after: NewsContext): boolean {
  return before.taskState !== after.taskState || before.rejections.length !== after.rejections.length || before.runComplete !== after.runComplete;
}

/** The news event for a runner `task` whose context is `ctx`. */
export function taskNewsOf(task: string, ctx: NewsContext): TaskNews {
  return { type: 'TASK_CHANGED', task, taskState: ctx.taskState, rejections: ctx.rejections.length, runComplete: ctx.runComplete };
}

/** The logic methods wrapped, as XState calls them (loosely typed: they are the machine's own, called through). */
interface Logic {
  transition(snapshot: MachineSnapshotLike, event: unknown, scope: AnyActorScope): MachineSnapshotLike;
  getInitialSnapshot(scope: AnyActorScope, input: { taskState?: TaskState } | undefined): MachineSnapshotLike;
  restoreSnapshot(persisted: unknown, scope: AnyActorScope): MachineSnapshotLike;
  start(snapshot: MachineSnapshotLike, scope: AnyActorScope): void;
  provide(implementations: unknown): unknown;
}

interface Relaying {
  _relay(source: AnyActorRef, target: AnyActorRef, event: TaskNews): void;
}

/** Sends the runner's news to its parent after the step's own effects (see the file comment); a runner with no parent tells no one. */
function tell(scope: AnyActorScope, snapshot: MachineSnapshotLike): void {
  const self = scope.self;
  const parent = self._parent;
  if (!parent) return;
  const news = taskNewsOf(self.id, snapshot.context);
  scope.defer(() => (scope.system as unknown as Relaying)._relay(self, parent, news));
}

// Snapshots a runner starts from that its parent has not heard: a restored one (the parent's mirror was
// restored apart from it, and news queued when the snapshot was taken is not in the parent's), or a fresh
// one whose first step already changed the TaskState it was given.
const untold = new WeakSet<object>();

/**
 * `machine` (the task runner) with its logic telling its parent of news: after each step that changed it,
 * and when it starts from a snapshot its parent has not heard. `provide()` keeps it so. The machine itself
 * (its states, actions, persisted snapshots) is unchanged.
 */
export function tellingParentOfNews<M extends AnyStateMachine>(machine: M): M {
  const proto = StateMachine.prototype as unknown as Logic;
  // The machine's own methods, overridden on this instance only: XState calls them as `logic.transition(...)`.
  const told = machine as unknown as Logic;
  told.transition = (snapshot: MachineSnapshotLike, event: unknown, scope: AnyActorScope) => {
    const next = proto.transition.call(machine, snapshot, event, scope);
    // The relay sent active snapshots only: a runner that finishes (detached) reaches the parent as its done event.
    if (next.status === 'active' && changedNews(snapshot.context, next.context)) tell(scope, next);
    return next;
  };
  told.getInitialSnapshot = (scope: AnyActorScope, input: { taskState?: TaskState } | undefined) => {
    const first = proto.getInitialSnapshot.call(machine, scope, input);
    const given = input?.taskState;
    if (first.status === 'active' && given !== undefined && changedNews({ taskState: given, rejections: [], runComplete: false }, first.context)) untold.add(first);
    return first;
  };
  told.restoreSnapshot = (persisted: unknown, scope: AnyActorScope) => {
    const restored = proto.restoreSnapshot.call(machine, persisted, scope);
    untold.add(restored);
    return restored;
  };
  told.start = (snapshot: MachineSnapshotLike, scope: AnyActorScope) => {
    proto.start.call(machine, snapshot, scope);
    // Told in the start's own update, as the relay of a starting runner's first snapshot was.
    if (untold.delete(snapshot) && snapshot.status === 'active') tell(scope, snapshot);
  };
  told.provide = (implementations: unknown) => tellingParentOfNews(proto.provide.call(machine, implementations) as unknown as M);
  return machine;
}
