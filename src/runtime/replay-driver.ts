/**
 * Re-drives a recording's inputs through today's machines (issue #30): the roots are rebuilt from what
 * they were created with, every driver call, hook and sleep is a stub that settles only when the recording
 * says it did, with what it recorded, and the clock stands at each input's recorded time. Nothing else
 * moves, so the machines take exactly the steps today's code takes for those inputs; each is compared
 * with the recorded one, and the first difference is the divergence.
 */
import { createActor, fromPromise, type AnyActorRef, type AnyStateMachine, type InspectionEvent } from 'xstate';
import { allocRunnerMachine } from '../../machines/alloc-runner.ts';
import { taskRunnerMachine } from '../../machines/task-runner.ts';
import { actorPathOf, createInputRecorder, isMachineRef } from '../inspect/input-recorder.ts';
import {
  expandSteps, reviveDeep, summarizeSteps, type DivergenceLine, type ReplayInputLine, type ReplayLine, type ReplayRootLine, type ReplayStepLine,
  type ReplaySummary,
} from '../inspect/replay-format.ts';
import { ReplayClock } from './replay-clock.ts';
import { upgradeAllocSnapshot, upgradeAllocValue, upgradeTaskSnapshot } from './snapshot-upgrade.ts';
import { describeStep, describeTransition, json, taskStateDifference, type TakenTransition } from './replay-compare.ts';

export type { TakenTransition };

/** Machines to replay against instead of today's (a test's changed machine), by machine id. */
export interface ReplayMachines {
  /** The alloc runner (`alloc`); its task runners are `task` below, whichever of the two is given. */
  alloc?: AnyStateMachine;
  task?: AnyStateMachine;
}

export interface ReplayOptions {
  machines?: ReplayMachines;
}

/** A step the replay took, with the transitions behind it. */
export interface ReplayStep extends ReplayStepLine {
  took: TakenTransition[];
}

/** Where the replay first differed from the recording; also what the page shows (`divergence` line). */
export interface ReplayDivergence extends DivergenceLine {
  /** The transitions the replay's step took, when it took one. */
  took?: TakenTransition[];
}

export interface ReplayResult {
  /** The steps the replay took, in order. */
  steps: ReplayStep[];
  /** What the replay is judged on (the generated test compares it). */
  summary: ReplaySummary;
  /** Absent when every step matched the recording's (or the recording had none to compare with). */
  divergence?: ReplayDivergence;
  /** How many inputs were fed (all of them unless the replay diverged first). */
  inputsFed: number;
}

/** A recording the replay cannot run at all (a machine it does not know, a malformed line). */
export class ReplayInputError extends Error {
  readonly code = 'ErrReplayInput';
  constructor(message: string) {
    super(message);
    this.name = 'ReplayInputError';
  }
}

/** Lets promise callbacks run; no time passes (the replay's clock does not move by itself). */
async function quiesce(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => setImmediate(r));
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: unknown): void;
  input: unknown;
}

/**
 * Re-drives the inputs of `lines` (a recording's parsed lines; other kinds are skipped) through today's
 * machines, or `opts.machines`, and compares every step with the recording's, when it has steps.
 */
export async function replayRecording(lines: readonly unknown[], opts: ReplayOptions = {}): Promise<ReplayResult> {
  const replayLines = expandSteps(lines).filter((l): l is ReplayLine => {
    const kind = (l as { kind?: unknown } | null)?.kind;
    return kind === 'replay-root' || kind === 'replay-input' || kind === 'replay-step';
  });
  replayLines.forEach((l, i) => {
    const problem = lineProblem(l);
    if (problem) throw new ReplayInputError(`replay line ${i + 1} (${l.kind}) ${problem}`);
  });
  const recordedSteps = replayLines.filter((l): l is ReplayStepLine => l.kind === 'replay-step');
  const compare = recordedSteps.length > 0;
  const drive = replayLines.filter((l): l is ReplayRootLine | ReplayInputLine => l.kind !== 'replay-step');

  const clock = new ReplayClock();
  const pending = new Map<string, Pending>();
  // Every call out of the machines: settles when the recording says it did.
  const recordedCall = fromPromise<unknown, unknown>(({ self, input, signal }) => {
    const key = actorPathOf(self).join('/');
    return new Promise((resolve, reject) => {
      const entry: Pending = { resolve, reject, input };
      pending.set(key, entry);
      signal.addEventListener('abort', () => pending.get(key) === entry && pending.delete(key), { once: true });
    });
  });
  const stubbed = (machine: AnyStateMachine, nested: Record<string, AnyStateMachine> = {}): AnyStateMachine => {
    const actors: Record<string, unknown> = {};
    for (const [name, logic] of Object.entries(machine.implementations.actors ?? {})) {
      actors[name] = nested[name] ?? (isMachineLogic(logic) ? stubbed(logic as AnyStateMachine) : recordedCall);
    }
    return machine.provide({ actors } as never);
  };
  const task = stubbed(opts.machines?.task ?? taskRunnerMachine);
  const machines: Record<string, AnyStateMachine> = {
    task,
    alloc: stubbed(opts.machines?.alloc ?? allocRunnerMachine, { taskRunner: task }),
  };

  const steps: ReplayStep[] = [];
  const taken = new Map<string, TakenTransition[]>();
  const refs = new Map<string, AnyActorRef>();
  let stopping = false;
  const recorder = createInputRecorder((line) => {
    if (line.kind !== 'replay-step' || stopping) return;
    steps.push({ ...line, took: taken.get(line.to.join('/')) ?? [] });
  });
  const inspect = (ev: InspectionEvent) => {
    if (ev.type === '@xstate.actor' && isMachineRef(ev.actorRef)) refs.set(actorPathOf(ev.actorRef).join('/'), ev.actorRef as AnyActorRef);
    if (ev.type === '@xstate.microstep' && isMachineRef(ev.actorRef)) {
      const key = actorPathOf(ev.actorRef).join('/');
      const list = taken.get(key) ?? [];
      for (const t of ev._transitions) list.push(describeTransition(t as never));
      taken.set(key, list);
    }
    recorder.inspect(ev);
    // A step's transitions are its own, kept or not (a step that changed nothing compared is not kept).
    if (ev.type === '@xstate.snapshot' && isMachineRef(ev.actorRef)) taken.delete(actorPathOf(ev.actorRef).join('/'));
  };

  // Comparison state: per actor, how many steps it took and its watched fields, recorded and now.
  let compared = 0;
  const current = { recorded: new Map<string, { taskState?: string; clientStatus?: string }>(), now: new Map<string, { taskState?: string; clientStatus?: string }>() };
  let lastInput: { index: number; line: ReplayInputLine } | undefined;
  let divergence: ReplayDivergence | undefined;
  const diverge = (actor: string, fields: Partial<ReplayDivergence> & { message: string }) => {
    divergence = {
      kind: 'divergence',
      at: lastInput?.line.at ?? 0,
      actor,
      step: compared,
      // The actor's own steps before this one (the recording's and the replay's agree up to here).
      actorStep: recordedSteps.slice(0, compared).filter((x) => x.to.join('/') === actor).length,
      ...(lastInput && { input: { index: lastInput.index, input: lastInput.line.input, type: lastInput.line.event.type, to: lastInput.line.to.join('/') } }),
      ...fields,
    };
  };
  const watch = (side: 'recorded' | 'now', actor: string, s: ReplayStepLine) => {
    let w = current[side].get(actor);
    if (!w) current[side].set(actor, (w = {}));
    if (s.taskState !== undefined) w.taskState = json(s.taskState);
    if (s.clientStatus !== undefined) w.clientStatus = s.clientStatus;
    return w;
  };
  /** How step `i` differs from the recording's (undefined when it does not); updates the watched fields. */
  const differenceAt = (i: number): (Partial<ReplayDivergence> & { actor: string; message: string }) | undefined => {
    const now = steps[i]!;
    const rec = recordedSteps[i];
    const actor = now.to.join('/');
    if (!rec) return { actor, now: describeStep(now), took: now.took, message: `the replay took a step the recording does not have: ${actor} ${describeStep(now)}` };
    const recActor = rec.to.join('/');
    if (recActor !== actor) {
      return { actor: recActor, recorded: `${recActor}: ${describeStep(rec)}`, now: `${actor}: ${describeStep(now)}`, took: now.took, message: `the recording's next step is ${recActor}'s, the replay's is ${actor}'s` };
    }
    const r = watch('recorded', actor, rec);
    const n = watch('now', actor, now);
    // A recording from before the alloc's running.steady / running.busy is compared in today's shape.
    if (!sameStepEvent(rec.event, now.event) || json(upgradeAllocValue(rec.value)) !== json(now.value) || rec.status !== now.status) {
      return { actor, recorded: describeStep(rec), now: describeStep(now), took: now.took, message: `${actor} took a different step on ${now.event}` };
    }
    if (r.taskState !== n.taskState) {
      const [recorded, nowText] = taskStateDifference(JSON.parse(r.taskState ?? 'null'), JSON.parse(n.taskState ?? 'null'));
      return { actor, recorded: recorded, now: nowText, took: now.took, message: `${actor}'s TaskState differs after ${describeStep(now)}` };
    }
    if (r.clientStatus !== n.clientStatus) {
      return { actor, recorded: `client status ${r.clientStatus}`, now: `client status ${n.clientStatus}`, took: now.took, message: `${actor}'s client status differs after ${describeStep(now)}` };
    }
    return undefined;
  };
  /**
   * Compares the steps taken since the last call (one input's) with the recording's. Of the steps that
   * differ, the first that is not a parent hearing its child's new snapshot is reported: a parent reacts
   * to a child's step before the child's own step is seen, but the child is where the change is.
   */
  const check = () => {
    if (!compare || divergence) return;
    let first: { index: number; diff: Partial<ReplayDivergence> & { actor: string; message: string } } | undefined;
    let cause: typeof first;
    for (let i = compared; i < steps.length; i++) {
      const diff = differenceAt(i);
      if (diff) {
        first ??= { index: i, diff };
        if (!hearsChild(steps[i]!.event)) {
          cause = { index: i, diff };
          break;
        }
      }
    }
    const picked = cause ?? first;
    if (picked) {
      compared = picked.index;
      const { actor, ...rest } = picked.diff;
      diverge(actor, rest as never);
      return;
    }
    compared = steps.length;
  };

  let inputIndex = -1;
  let fed = 0;
  const roots: AnyActorRef[] = [];
  try {
    for (const line of drive) {
      if (divergence) break;
      clock.current = line.at;
      if (line.kind === 'replay-root') {
        const machine = machines[line.machine];
        if (!machine) throw new ReplayInputError(`the recording's root ${JSON.stringify(line.id)} runs machine ${JSON.stringify(line.machine)}; replay knows ${Object.keys(machines).join(', ')}`);
        roots.push(
          createActor(machine, {
            id: line.id,
            clock,
            inspect,
            ...(line.input !== undefined && { input: line.input }),
            // A checkpoint from an older allocrun is restored as the runtime restores its persisted snapshots.
            ...(line.snapshot !== undefined && { snapshot: (line.machine === 'alloc' ? upgradeAllocSnapshot(line.snapshot) : line.machine === 'task' ? upgradeTaskSnapshot(line.snapshot) : line.snapshot) as never }),
          }),
        );
        continue;
      }
      inputIndex++;
      lastInput = { index: inputIndex, line };
      const to = line.to.join('/');
      const event = reviveDeep(line.event) as { type: string; output?: unknown; error?: unknown };
      if (line.input === 'command') {
        const target = refs.get(to);
        if (!target) {
          diverge(to, { recorded: `command ${event.type} to ${to}`, now: `no actor ${to}`, message: `the recording sends ${event.type} to ${to}, which the replay never created` });
          break;
        }
        if (event.type === 'xstate.init' && line.to.length === 1) target.start();
        else if (event.type === 'xstate.stop' && line.to.length === 1) target.stop();
        else target.send(event);
      } else if (line.input === 'result') {
        const from = (line.from ?? []).join('/');
        const call = pending.get(from);
        if (!call) {
          diverge(to, { recorded: `${from} settled (${event.type})`, now: `no call ${from} under way`, message: `the recording's ${from} settled, but the replay is not waiting on it` });
          break;
        }
        const until = (call.input as { until?: unknown } | undefined)?.until;
        if (line.src === 'sleepUntil' && typeof until === 'number' && until > line.at) {
          diverge(to, { recorded: `${from} woke at ${line.at}`, now: `${from} sleeps until ${until}`, message: `${to} now sleeps ${until - line.at} ms longer than it did` });
          break;
        }
        pending.delete(from);
        if (event.type.startsWith('xstate.done.actor.')) call.resolve(event.output);
        else call.reject(event.error);
      } else {
        if (!clock.fire(line.due ?? line.at)) {
          diverge(to, { recorded: `timer due at ${line.due} fired (${event.type})`, now: `timers due at [${clock.pendingDues().join(', ')}]`, message: `the recording fired ${event.type} on ${to}, but the replay set no timer due then` });
          break;
        }
      }
      fed++;
      await quiesce();
      check();
    }
    check();
    if (!divergence && compare && compared < recordedSteps.length) {
      const rec = recordedSteps[compared]!;
      const actor = rec.to.join('/');
      diverge(actor, { recorded: describeStep(rec), now: 'no such step', message: `the replay ended before ${actor}'s step ${describeStep(rec)}` });
    }
  } finally {
    // Stopping the roots is the replay's own doing, not a step to judge.
    stopping = true;
    for (const r of roots) r.stop();
  }
  return { steps, summary: summarizeSteps(steps), ...(divergence && { divergence }), inputsFed: fed };
}

/**
 * A parent hearing its child's step: a task runner's news to its alloc (`TASK_CHANGED`), or, in recordings
 * made before task runners told their news themselves, the child's snapshot relayed (`xstate.snapshot.<id>`).
 */
function hearsChild(event: string): boolean {
  return event === 'TASK_CHANGED' || event.startsWith('xstate.snapshot.');
}

/** The same step's event, now and as recorded (an alloc's news from a task was a relayed snapshot before). */
function sameStepEvent(recorded: string, now: string): boolean {
  return recorded === now || (now === 'TASK_CHANGED' && recorded.startsWith('xstate.snapshot.'));
}

/** What is wrong with a replay line's shape, or undefined: a line the replay cannot act on is refused, not guessed at. */
function lineProblem(l: ReplayLine): string | undefined {
  const path = (p: unknown) => Array.isArray(p) && p.length > 0 && p.every((x) => typeof x === 'string');
  if (l.kind === 'replay-root') return typeof l.id === 'string' && typeof l.machine === 'string' && typeof l.at === 'number' ? undefined : 'needs an id, a machine and a time';
  if (!path(l.to)) return 'needs the actor path it is about (`to`)';
  if (l.kind === 'replay-step') return typeof l.event === 'string' && typeof l.status === 'string' ? undefined : 'needs an event and a status';
  if (typeof l.at !== 'number' || typeof l.event?.type !== 'string') return 'needs a time and an event with a type';
  if (l.input === 'result' && !path(l.from)) return 'needs the child it is the result of (`from`)';
  return l.input === 'command' || l.input === 'result' || l.input === 'timer' ? undefined : `has an unknown input kind ${JSON.stringify(l.input)}`;
}

function isMachineLogic(logic: unknown): boolean {
  return typeof logic === 'object' && logic !== null && 'root' in logic && 'implementations' in logic;
}
