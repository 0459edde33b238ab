/**
 * Path generation over a model machine with xstate/graph: the shortest path to every state, one path per
 * transition (the shortest path to its source, then its event), and every simple path. Also counts which
 * transitions a set of paths covers, for the figures the tests report.
 */
import { getAdjacencyMap, getShortestPaths, getSimplePaths, type StatePath } from 'xstate/graph';
import { initialTransition, transition, type AnyStateMachine, type EventObject, type SnapshotFrom } from 'xstate';
import type { AllocSpec } from '../../machines/model.ts';

export interface PathOptions<E extends EventObject> {
  events: E[];
  /** What makes two model states the same node of the graph (context counters that only grow are left out). */
  serializeState: (snap: any) => string;
}

type Snap = SnapshotFrom<AnyStateMachine>;
export type ModelPath<E extends EventObject> = StatePath<Snap, E>;

const eventKey = (e: EventObject) => JSON.stringify(e);

/** Only the events a state handles (the model lists every event it accepts, even those that change nothing). */
const handled = (snap: Snap, ev: EventObject) => snap.can(ev);

function traversal<E extends EventObject>(opts: PathOptions<E>) {
  return { events: opts.events, filterEvents: handled, serializeState: (s: Snap) => opts.serializeState(s) } as never;
}

/** Every transition of the model graph, as `state|event` keys. */
export function allTransitions<E extends EventObject>(machine: AnyStateMachine, opts: PathOptions<E>): Set<string> {
  const adjacency = getAdjacencyMap(machine, traversal(opts)) as unknown as Record<string, { transitions: Record<string, unknown> }>;
  const keys = new Set<string>();
  for (const [state, node] of Object.entries(adjacency)) {
    for (const ev of Object.keys(node.transitions)) keys.add(`${state}|${ev}`);
  }
  return keys;
}

/** The transitions `paths` take, as `state|event` keys. */
export function coveredTransitions<E extends EventObject>(paths: ModelPath<E>[], opts: PathOptions<E>): Set<string> {
  const keys = new Set<string>();
  for (const p of paths) {
    for (let i = 1; i < p.steps.length; i++) keys.add(`${opts.serializeState(p.steps[i - 1]!.state)}|${eventKey(p.steps[i]!.event)}`);
  }
  return keys;
}

/** The shortest path to each state. */
export function shortestPaths<E extends EventObject>(machine: AnyStateMachine, opts: PathOptions<E>): ModelPath<E>[] {
  return getShortestPaths(machine, traversal(opts)) as ModelPath<E>[];
}

/** Every path that visits no state twice. */
export function simplePaths<E extends EventObject>(machine: AnyStateMachine, opts: PathOptions<E>): ModelPath<E>[] {
  return getSimplePaths(machine, traversal(opts)) as ModelPath<E>[];
}

/** One path per transition: the shortest path to its source state, then the transition itself. */
export function transitionPaths<E extends EventObject>(machine: AnyStateMachine, opts: PathOptions<E>): ModelPath<E>[] {
  const adjacency = getAdjacencyMap(machine, traversal(opts)) as unknown as Record<string, { transitions: Record<string, { event: E; state: Snap }> }>;
  const toState = new Map(shortestPaths(machine, opts).map((p) => [opts.serializeState(p.state), p]));
  const paths: ModelPath<E>[] = [];
  for (const [state, node] of Object.entries(adjacency)) {
    const prefix = toState.get(state);
    if (!prefix) continue;
    for (const { event, state: next } of Object.values(node.transitions)) {
      paths.push({ state: next as Snap, steps: [...prefix.steps, { state: next as Snap, event: event as E }], weight: prefix.weight + 1 });
    }
  }
  return paths;
}

/**
 * The model's own snapshots along a path. xstate/graph keeps one snapshot per serialized state, so counters
 * left out of the serialization (restarts) must be recomputed by running the path's events through the model.
 */
export function modelStates<E extends EventObject>(machine: AnyStateMachine, path: ModelPath<E>): Snap[] {
  let [snap] = initialTransition(machine);
  const out: Snap[] = [];
  for (const step of path.steps) {
    if (step.event.type !== 'xstate.init') [snap] = transition(machine, snap, step.event);
    out.push(snap);
  }
  return out;
}

/** A system under test a path drives: apply one model event, then observe what the model predicts. */
export interface PathWorld<E extends EventObject> {
  apply(ev: E): Promise<void>;
  observe(): unknown;
}

/**
 * Replays `path` on `world`, asserting after every step (the initial state included) that the real system
 * shows what the model state stands for. `check` receives the observation, the expectation and the trail.
 */
export async function replayPath<E extends EventObject, W extends PathWorld<E>>(
  machine: AnyStateMachine,
  path: ModelPath<E>,
  world: W,
  expectationOf: (snap: Snap) => unknown,
  check: (actual: unknown, expected: unknown, trail: string) => void,
): Promise<W> {
  const expected = modelStates(machine, path);
  const trail: string[] = [];
  for (const [i, step] of path.steps.entries()) {
    if ((step.event.type as string) !== 'xstate.init') await world.apply(step.event);
    trail.push(step.event.type);
    check(world.observe(), expectationOf(expected[i]!), `after ${trail.join(' → ')}`);
  }
  return world;
}

/** How long a model's TICK lasts on the simulated clock: longer than any restart delay (plus jitter) the models use. */
export const TICK = 10_000;

/**
 * The events both runners take the same way: a clock tick, an UPDATE with the next alloc version, a SIGNAL,
 * or any other command sent as it is. Then timers due now fire (a kill signal the mock obeys at once); no
 * time passes.
 */
export async function applyCommand(
  runner: { send(ev: never): void },
  clock: { advance(ms: number): Promise<void> },
  ev: EventObject,
  nextAlloc: () => AllocSpec,
): Promise<void> {
  const send = (e: object) => runner.send(e as never);
  if (ev.type === 'TICK') await clock.advance(TICK);
  else if (ev.type === 'UPDATE') send({ type: 'UPDATE', alloc: nextAlloc() });
  else if (ev.type === 'SIGNAL') send({ type: 'SIGNAL', signal: 'SIGHUP' });
  else send({ type: ev.type });
  await clock.advance(0);
}
