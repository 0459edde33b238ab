/**
 * A KILL the dead agent took but never saved. An embedder's KILL (no API to commit it first) reaches the disk
 * only with the runner's next save, the Killing save, which lands after the kill's stop signals (each
 * preceded by the driver's stop marker, raw_exec's `<prefix>.stop`). An agent that died in between left a
 * record saying "running", and a restore from it alone would take the signalled task's exit for the end of
 * one task (its marker says kill) while the tasks not yet signalled run on: the kill half done, for good.
 *
 * So a restore asks each live task's driver whether a stop had begun (the marker of the handle's attempt),
 * and a kill marker that nothing in the restored runner explains is that KILL, to be sent again. What does
 * explain one: the allocation already killing (a KILL or an API stop saved, or the reducer's kill re-derived
 * from a death on disk: a failed task's siblings, a leader's, the kill gate saves that death before any
 * signal), the task released by its main tasks' deaths (likewise on disk first), or the task's own stop in
 * its record (a kill, or a restart, whose force kill marks "kill" too). A restart's marker says "restart".
 */
import type { TaskRunnerActor } from '../../machines/task-runner.ts';
import type { Driver, DriverHandle } from '../drivers/controller.ts';
import type { AllocRunner } from './create-alloc-runner.ts';
import type { AllocState } from '../../machines/model.ts';

/** The first task of a just-restored runner whose kill marker nothing saved explains; undefined if none. */
export function unsavedKill(runner: AllocRunner, drivers: Readonly<Record<string, Driver>>): string | undefined {
  const snap = runner.actor.getSnapshot();
  if (snap.status !== 'active' || snap.context.killing) return undefined;
  for (const task of snap.context.alloc.tasks) {
    if (snap.context.taskFlags.released?.[task.name]) continue;
    const tr = (snap.children[task.name] as TaskRunnerActor | undefined)?.getSnapshot();
    if (!tr || tr.status !== 'active') continue;
    const { killRequested, run, taskState } = tr.context;
    if (killRequested || run.stopReason !== undefined || taskState.state === 'dead' || !run.handle) continue;
    if (drivers[task.driver]?.stopBegun?.(run.handle as unknown as DriverHandle) === 'kill') return task.name;
  }
  return undefined;
}

/**
 * The other side of the rule: a Killing save may wait for the kill's exit (one save per kill fewer), because
 * a restore from the record on disk sends the same KILL again. Only where that holds: every task whose record
 * changed since the last save changed by a Killing event alone, was running and not stopping at that save
 * (a restart under way marks "restart", which a restore does not take for a kill), and is now at its stop
 * signal (past its preKill hooks and shutdown delay, the alloc's too: a kill waiting there has no marker yet)
 * through a driver that marks the stop before that signal. A task that died, started or restarted since the
 * last save has that to save: never waits.
 */
export function killSaveMayWait(
  runner: AllocRunner,
  drivers: Readonly<Record<string, Driver>>,
  saved: AllocState,
  stoppingAtSave: ReadonlySet<string>,
): boolean {
  const snap = runner.actor.getSnapshot();
  if (snap.status !== 'active' || !snap.context.killing) return false;
  // The alloc's kill region (alloc-runner.ts `running.busy.kill`): past its preKill hooks and the group's shutdown delay.
  const step = (snap.value as { running?: { busy?: { kill?: string } } }).running?.busy?.kill;
  if (step !== 'leader' && step !== 'mains' && step !== 'sidecars') return false;
  let marked = false;
  for (const task of snap.context.alloc.tasks) {
    const before = saved.taskStates[task.name];
    const now = snap.context.taskStates[task.name];
    if (!before || !now) return false;
    if (now.events.length === before.events.length && now.state === before.state) continue;
    if (before.state !== 'running' || now.state !== 'running' || stoppingAtSave.has(task.name)) return false;
    for (let i = before.events.length; i < now.events.length; i++) if (now.events[i]!.type !== 'Killing') return false;
    const tr = (snap.children[task.name] as TaskRunnerActor | undefined)?.getSnapshot();
    if (!tr || tr.status !== 'active' || tr.context.run.stopReason !== 'kill' || !tr.context.run.handle) return false;
    if (!SIGNALLED.some((s) => tr.matches(s))) return false;
    if (drivers[task.driver]?.marksStop?.(tr.context.run.handle as unknown as DriverHandle) !== true) return false;
    marked = true;
  }
  return marked;
}

/** The task runner's kill states from its first stop signal on (machines/task-runner.ts). */
const SIGNALLED = [{ running: { killing: 'signalling' } }, { running: { killing: 'forceKilling' } }, { running: { killing: 'awaitingExit' } }] as const;

/** The tasks of `runner` whose runners are stopping (a kill or a restart begun), as a save writes them. */
export function stoppingTasks(runner: AllocRunner): Set<string> {
  const out = new Set<string>();
  const snap = runner.actor.getSnapshot();
  for (const task of snap.context.alloc.tasks) {
    const tr = (snap.children[task.name] as TaskRunnerActor | undefined)?.getSnapshot();
    if (tr && (tr.context.killRequested || tr.context.run.stopReason !== undefined)) out.add(task.name);
  }
  return out;
}
