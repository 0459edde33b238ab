/**
 * Runs a world plan to the end and checks the run-wide invariants over everything it recorded. The step
 * invariants (client status, event times, restart counts, the kill deadline) are checked by the world after
 * every command; these are the ones that need the whole history.
 */
import { isDeepStrictEqual } from 'node:util';
import type { AllocState } from '../../machines/model.ts';
import { ALLOC_STATES } from '../model/state-map.ts';
import { ownedKeys, World, type Command, type HookRecord, type WorldPlan } from './world.ts';

/** What a run ended with, for comparing an interrupted run with an uninterrupted one. */
export interface Outcome {
  top: string;
  state: AllocState;
  starts: Record<string, number>;
}

/** Runs the plan's commands (restoring after `restoreAt` of them, if given), then winds the alloc down. */
export async function runWorld(plan: WorldPlan, restoreAt?: number): Promise<World> {
  const w = await World.create(plan);
  for (const [i, cmd] of plan.commands.entries()) {
    if (restoreAt === i) w.restore();
    await w.apply(cmd);
  }
  if (restoreAt === plan.commands.length) w.restore();
  await windDown(w);
  return w;
}

const ENDED: string[] = [ALLOC_STATES.terminal, ALLOC_STATES.destroyed, ALLOC_STATES.detached];

/**
 * The end of every run: kill, wait out the kill deadline, let poststop tasks finish, destroy, then poke the
 * destroyed runner with every command (none may call a hook).
 */
async function windDown(w: World): Promise<void> {
  if (!w.finished()) await w.apply({ kind: 'kill' });
  if (w.killDeadline !== undefined) await w.apply({ kind: 'advance', ms: Math.max(0, w.killDeadline - w.clock.now()) });
  for (let i = 0; i < 30 && !ENDED.includes(w.top()); i++) await w.apply({ kind: 'advance', ms: 60_000 });
  if (!ENDED.includes(w.top())) w.breaks.push(`the alloc is still ${w.top()} 30 minutes after KILL`);
  if (w.top() === ALLOC_STATES.terminal) await w.apply({ kind: 'destroy' });
  const pokes: Command[] = [
    { kind: 'update', stale: false, stop: false },
    { kind: 'restart', all: true },
    { kind: 'restart', task: 't0' },
    { kind: 'signal' },
    { kind: 'kill' },
    { kind: 'advance', ms: 120_000 },
  ];
  for (const cmd of pokes) await w.apply(cmd);
}

/** The observable outcome of a finished run. */
export function outcomeOf(w: World): Outcome {
  return { top: w.top(), state: w.runner.getState(), starts: { ...w.starts } };
}

function byTask(log: HookRecord[], method: string, task: string): HookRecord[] {
  return log.filter((r) => r.owner === 'task' && r.method === method && r.task === task);
}

function strictlyIncreasing(xs: (number | undefined)[]): boolean {
  return xs.every((x, i) => i === 0 || (x ?? 0) > (xs[i - 1] ?? 0));
}

/** Every invariant broken by a finished run, each as a sentence naming the rule; empty when none. */
export function invariantBreaks(w: World): string[] {
  const breaks = [...w.breaks];
  const top = w.top();
  const ranToTheEnd = top === ALLOC_STATES.terminal || top === ALLOC_STATES.destroyed;
  for (const t of w.plan.tasks) {
    const name = t.spec.name;
    // Stop hooks: once when the task will never run again, never more, and never started by an agent shutdown.
    const stops = byTask(w.log, 'stop', name);
    if (stops.length > 1) breaks.push(`${name}: stop hooks ran ${stops.length} times`);
    if (ranToTheEnd && stops.length !== 1) breaks.push(`${name}: the alloc ran to the end but stop hooks ran ${stops.length} times`);
    if (w.shutdownSeq !== undefined && stops.some((s) => s.seq >= w.shutdownSeq!)) breaks.push(`${name}: a stop hook ran after SHUTDOWN`);

    // Prestart: a Done hook never runs again; previousState is what the hook last returned.
    const prestarts = byTask(w.log, 'prestart', name);
    let last: HookRecord['returned'];
    for (const call of prestarts) {
      if (last?.done) breaks.push(`${name}: its prestart hook ran again (call ${call.seq}) after returning Done`);
      if (!isDeepStrictEqual(call.previousState, last?.state)) {
        breaks.push(`${name}: prestart call ${call.seq} got previousState ${JSON.stringify(call.previousState)}, last returned ${JSON.stringify(last?.state)}`);
      }
      // An answer to a call the runner had already cancelled does not count: a restored running task
      // re-runs its prestart hooks, and a RESTART or KILL arriving meanwhile stops that call before its
      // answer is delivered (Nomad would keep it: see the README's "How the lifecycle is checked").
      if (call.returned && !call.aborted) last = call.returned;
    }
    for (const stop of stops) {
      if (!isDeepStrictEqual(stop.previousState, last?.state)) {
        breaks.push(`${name}: its stop hook got existingState ${JSON.stringify(stop.previousState)}, prestart last returned ${JSON.stringify(last?.state)}`);
      }
    }

    // Task update hooks: each alloc version at most once, in order.
    // A call cut short (the agent crashed under it, or a newer update replaced it) may run again: a crash
    // cannot tell whether the hook finished, so interrupted hooks re-run (they must be idempotent).
    const updates = byTask(w.log, 'update', name).filter((r) => !r.aborted).map((r) => r.modifyIndex);
    if (!strictlyIncreasing(updates)) breaks.push(`${name}: update hooks saw alloc versions ${JSON.stringify(updates)}`);

    // No env key of one task in another's env.
    const foreign = new Set(w.plan.tasks.filter((o) => o.spec.name !== name).flatMap((o) => ownedKeys(o.spec)));
    for (const seen of w.envs.filter((e) => e.task === name)) {
      const leaked = seen.keys.filter((k) => foreign.has(k));
      if (leaked.length > 0) breaks.push(`${name}: its ${seen.where} env holds ${leaked.join(', ')} of another task`);
    }
  }
  const allocUpdates = w.log.filter((r) => r.owner === 'alloc' && r.method === 'update' && !r.aborted).map((r) => r.modifyIndex);
  if (!strictlyIncreasing(allocUpdates)) breaks.push(`alloc update hooks saw alloc versions ${JSON.stringify(allocUpdates)}`);
  if (w.destroyedSeq !== undefined) {
    const late = w.log.filter((r) => r.seq >= w.destroyedSeq!);
    if (late.length > 0) breaks.push(`hooks ran after the alloc was destroyed: ${late.map((r) => `${r.task ?? 'alloc'}.${r.method}`).join(', ')}`);
  }
  return breaks;
}
